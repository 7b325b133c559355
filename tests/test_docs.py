"""The docs hold together: every relative link resolves, and docs/index.md reaches every page and notebook."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(page: Path) -> list[str]:
    links = [m.group(1) for m in LINK.finditer(page.read_text(encoding="utf-8"))]
    return [link for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]


def test_relative_links_resolve():
    broken = []
    for page in sorted(DOCS.glob("*.md")):
        for link in _relative_links(page):
            if not (page.parent / link.split("#")[0]).exists():
                broken.append(f"{page.name}: {link}")
    assert not broken, f"broken links: {broken}"


def test_index_links_every_page_and_notebook():
    linked = {(DOCS / link.split("#")[0]).resolve() for link in _relative_links(DOCS / "index.md")}
    pages = {p.resolve() for p in DOCS.glob("*.md") if p.name != "index.md"}
    notebooks = {p.resolve() for p in (ROOT / "notebooks").glob("*.ipynb")}
    missing = sorted(p.name for p in (pages | notebooks) - linked)
    assert not missing, f"docs/index.md does not link {missing}"
