"""What text a person may type into Abate: a length limit and a character policy per kind.

Every text field of every command uses one of the kinds below, so no value can be
longer than the view column that holds it, and no value carries characters that
break a database (NUL on PostgreSQL, lone surrogates in UTF-8), a terminal or a
printed list (control characters, bidirectional overrides that make text read
differently from how it is stored).

Policy (docs/commands.md, "Text"):
- one-line kinds (names, addresses, labels, references) refuse every control
  character, newline and tab included;
- free text (descriptions, findings, notes, reasons) allows newline and tab, and
  refuses every other control character;
- all kinds refuse lone surrogates, the bidirectional embedding/override/isolate
  controls (U+202A-U+202E, U+2066-U+2069), U+FEFF and the noncharacters U+FFFE/U+FFFF;
- surrounding whitespace is stripped; an empty value is refused where the field is
  required;
- a user name (the actor recorded on events, a segment of the admin routes' paths, typed on
  the command line) is narrower still: ASCII letters, digits, '.', '-', '_' and '@', starting
  with a letter or digit (so it is never "." or ".." in a path), at most ``ACTOR_MAX``.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

# Characters no Abate text may hold. C0 and C1 controls (except tab and newline, handled per
# kind), DEL, lone surrogates, bidi controls, the BOM and two noncharacters.
_ALWAYS_REFUSED = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\t\n\r\u2028\u2029\x85]")

NAME_MAX = 200  # a person or body: owner, responsible party, served on, certified by
ACTOR_MAX = 100  # who records a fact (a user name)
ADDRESS_MAX = 300  # a site or mailing address
PHONE_MAX = 40  # a telephone number as the village writes it (its letterhead)
LABEL_MAX = 100  # short labels: citation numbers, outcomes, idempotency keys
PARCEL_MAX = 64  # a parcel number as the county writes it
COUNTY_MAX = 32
DOCUMENT_MAX = 500  # a document or photo reference (a path or URL)
ITEM_MAX = 200  # a cost item
FREE_TEXT_MAX = 4000  # descriptions, findings, notes, grounds, reasons


def _describe(char: str) -> str:
    return f"U+{ord(char):04X}"


def check_one_line(value: str) -> str:
    """Refuse line breaks, tabs and the characters no text may hold."""
    found = _LINE_BREAKS.search(value) or _ALWAYS_REFUSED.search(value)
    if found:
        raise ValueError(
            f"character {_describe(found.group())} at position {found.start() + 1} is not "
            "allowed here (one line of printable text)")
    return value


def check_free_text(value: str) -> str:
    """Allow newline and tab; refuse every other control character."""
    found = _ALWAYS_REFUSED.search(value.replace("\r\n", "\n"))
    if found or "\r" in value.replace("\r\n", "\n"):
        char = found.group() if found else "\r"
        position = (found.start() if found else value.replace("\r\n", "\n").index("\r")) + 1
        raise ValueError(
            f"character {_describe(char)} at position {position} is not allowed "
            "(printable text, newlines and tabs)")
    return value.replace("\r\n", "\n")


_USER_NAME_CHARS = re.compile(r"[^A-Za-z0-9._@-]")
USER_NAME_RULE = ("letters A-Z or a-z, digits, '.', '-', '_' and '@', starting with a "
                  "letter or digit")


def check_user_name(value: str) -> str:
    """A user name of the characters every door (API, page, command line) accepts."""
    found = _USER_NAME_CHARS.search(value)
    if found:
        char = found.group()
        shown = "a space" if char == " " else f"{char!r} ({_describe(char)})"
        raise ValueError(f"{shown} at position {found.start() + 1} is not allowed in a user "
                         f"name ({USER_NAME_RULE})")
    if not value[:1].isascii() or not value[:1].isalnum():
        raise ValueError(f"a user name starts with a letter or digit, not {value[:1]!r}")
    return value


def one_line(max_length: int) -> type[str]:
    """A required one-line text of at most ``max_length`` characters."""
    return Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                            max_length=max_length),
                     AfterValidator(check_one_line)]  # type: ignore[return-value]


def free_text(max_length: int = FREE_TEXT_MAX, *, required: bool = True) -> type[str]:
    """A multi-line text (newline and tab allowed) of at most ``max_length`` characters."""
    return Annotated[str, StringConstraints(strip_whitespace=True,
                                            min_length=1 if required else 0,
                                            max_length=max_length),
                     AfterValidator(check_free_text)]  # type: ignore[return-value]


Name = one_line(NAME_MAX)
Actor = one_line(ACTOR_MAX)
UserName = Annotated[Actor, AfterValidator(check_user_name)]  # type: ignore[valid-type]
Address = one_line(ADDRESS_MAX)
Label = one_line(LABEL_MAX)
ParcelNumber = one_line(PARCEL_MAX)
County = one_line(COUNTY_MAX)
DocumentRef = one_line(DOCUMENT_MAX)
CostItemText = one_line(ITEM_MAX)
FreeText = free_text()
OptionalFreeText = free_text(required=False)
