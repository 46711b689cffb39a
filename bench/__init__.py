"""Abate's benchmarks: a development package beside the product, not installed for users.

Run from the repository root: ``python -m bench`` (or ``python3.11 dev.py bench``); the
sections and the figures they print are in docs/benchmarks.md. This package may import the
product (cases, projections, api, scheduler, abate); nothing in the product imports it.
"""
