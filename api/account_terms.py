"""The roles an account may have and how long a token lasts unless told: what ``abate users``
offers as choices, in a module light enough for the command line to import at start-up."""

ROLES = ("inspector", "clerk", "attorney", "auditor", "admin")
DEFAULT_EXPIRES_DAYS = 90
