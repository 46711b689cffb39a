"""The roles an account may have and how long a token lasts unless told: what ``abate users``
offers as choices, in a module light enough for the command line to import at start-up."""

from typing import Literal, get_args

Role = Literal["inspector", "clerk", "attorney", "auditor", "admin"]
ROLES: tuple[str, ...] = get_args(Role)
DEFAULT_EXPIRES_DAYS = 90
MAX_EXPIRES_DAYS = 3650
MAX_MUNICIPALITIES = 50
