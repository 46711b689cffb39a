"""How long a page of a list may be, at every door (HTTP, pages, the command line).

An answer's size and time must not grow with the store: every list comes in pages of
``DEFAULT_LIMIT`` rows unless asked for fewer or more, never more than ``MAX_LIMIT``.
Apart from ``projections.paging`` so that building the command line imports no database.
"""

DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_OFFSET = 10_000_000
