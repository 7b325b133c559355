"""``hear2act report RUN_DIR``: the tables, figures and trajectory viewer of an evaluation run.

Writes ``RUN_DIR/report.md`` (figures beside it under ``figures/``) and a self-contained
``RUN_DIR/report.html``. Modules: :mod:`.tables` (what goes in each table, with the paper's
numbers), :mod:`.figures` (matplotlib), :mod:`.viewer` (the trajectory viewer's data),
:mod:`.render` (Markdown and HTML).
"""

from __future__ import annotations

from .build import build_report

__all__ = ["build_report"]
