"""``python -m api [--host H] [--port P]``: the same as ``abate serve``."""

import sys

from abate.cli import main

sys.exit(main(["serve", *sys.argv[1:]]))
