"""docs/ stays true: the rules page is generated from the catalog."""

from pathlib import Path

from cases.rules.catalog import Catalog
from cases.rules.document import catalog_markdown

ROOT = Path(__file__).resolve().parent.parent


def test_docs_rules_md_matches_the_catalog():
    expected = catalog_markdown(Catalog.load())
    actual = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert actual == expected, "regenerate with: abate rules --markdown > docs/rules.md"
