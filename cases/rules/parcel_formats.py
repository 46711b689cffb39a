"""A parcel number a county's format accepts, to show a person beside the format: a
regular expression (``^\\d{5} \\d{4}\\.\\d{4}$``) means nothing to a clerk, ``01234 5678.9012``
does."""

from __future__ import annotations

import re


def parcel_example(pattern: str) -> str | None:
    """A value a county's parcel pattern accepts (``^\\d{4}-\\d{3}$`` -> "0123-456"), or
    None for a pattern made of more than digits and plain characters."""
    body = pattern.removeprefix("^").removesuffix("$")
    digits, shown = "0123456789", []
    count = 0
    for token in re.findall(r"\\d\{\d+\}|\\d|\\.|[^\\[\](){}*+?|]|.", body):
        if token.startswith("\\d"):
            n = int(token[3:-1]) if "{" in token else 1
            shown.append("".join(digits[(count + i) % 10] for i in range(n)))
            count += n
        elif token.startswith("\\") and len(token) == 2:
            shown.append(token[1])
        elif len(token) == 1 and token not in "[](){}*+?|\\":
            shown.append(token)
        else:
            return None
    return "".join(shown)
