"""``python -m api [--host H] [--port P]``: the same as ``abate serve``."""

import sys

from api.serve import main

sys.exit(main())
