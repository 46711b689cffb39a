"""``python -m bench``: the benchmarks (bench/cli.py), from the repository root."""

import sys

from bench.cli import main

sys.exit(main())
