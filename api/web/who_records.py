"""Who records a next step the signed-in user's role cannot: said in words on the case page
("Next, recorded by an inspector or clerk: serve notice"), so nobody wonders why a step the
case is waiting for has no form. The roles come from the role table (``api.roles``), the
same table that refuses the post.
"""

from __future__ import annotations

from typing import Iterable

from api.roles import ATTORNEY, CLERK, COMMAND_ROLES, INSPECTOR, may_page

# The order roles are named in, the people who do most of a case first.
_ORDER = (INSPECTOR, CLERK, ATTORNEY)


def roles_in_words(roles: Iterable[str]) -> str:
    """``{"clerk", "inspector"}`` as "an inspector or clerk" (the article of the first)."""
    named = [role for role in _ORDER if role in set(roles)]
    if not named:
        return "no role"
    article = "an" if named[0][0] in "aeiou" else "a"
    return f"{article} {' or '.join(named)}"


def recorded_by_others(role: str, commands: Iterable[str]) -> list[dict[str, str]]:
    """Each of ``commands`` (the case's next steps) that ``role`` may not record, with the
    roles that may, in words."""
    return [{"command": name, "who": roles_in_words(COMMAND_ROLES.get(name, ()))}
            for name in commands if not may_page(role, f"page.command.{name}")]
