"""Export what a user sees of a scenario bank, plus the two labels the probe trains on.

The ONE file of the independent options probe that imports the repository. It writes

* ``<out>/visible.jsonl``: per scenario ``id``, ``domain``, ``request`` and ``options``
  (``[{number, text}]``, ``text`` being the option's ``description``: what the agent is shown);
* ``<out>/labels.jsonl``: per scenario ``id``, ``gold`` and ``opening`` (option numbers).

Nothing else (needs, personas, safe option, generator state) leaves this file.

    python benchmarks/options_probe_independent/export.py OUT_DIR              # the bundled bank
    python benchmarks/options_probe_independent/export.py OUT_DIR --bank FILE  # a scenario JSONL file
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

VISIBLE = "visible.jsonl"
LABELS = "labels.jsonl"


def load_bank(bank: str | Path | None = None) -> list[Any]:
    """Scenario objects: the bundled bank (``bank=None``) or each line of a scenario JSONL file."""
    if bank is None:
        from hear2act_env.scenarios import load_scenarios

        return load_scenarios()
    from hear2act_env.scenarios.model import Scenario

    with open(bank, encoding="utf-8") as fh:
        return [Scenario.from_dict(json.loads(line)) for line in fh if line.strip()]


def export(out_dir: str | Path, bank: str | Path | None = None) -> tuple[Path, Path]:
    """Write ``visible.jsonl`` and ``labels.jsonl`` under ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    visible_path, labels_path = out / VISIBLE, out / LABELS
    scenarios = load_bank(bank)
    with open(visible_path, "w", encoding="utf-8") as vis, open(labels_path, "w", encoding="utf-8") as lab:
        for s in scenarios:
            options = [{"number": o.number, "text": o.description} for o in s.options]
            vis.write(json.dumps({"id": s.id, "domain": s.domain, "request": s.request, "options": options}) + "\n")
            lab.write(json.dumps({"id": s.id, "gold": s.gold, "opening": s.opening}) + "\n")
    return visible_path, labels_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", help="folder to write visible.jsonl and labels.jsonl into")
    ap.add_argument("--bank", help="scenario JSONL file (default: the bundled bank)")
    args = ap.parse_args(argv)
    visible_path, labels_path = export(args.out_dir, args.bank)
    print(f"wrote {visible_path} and {labels_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
