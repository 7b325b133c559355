"""``hear2act scenarios build | validate | show | list | export``."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path

from .errors import ScenarioError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("scenarios", help="build, validate and inspect the scenario bank")
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    b = sub.add_parser("build", help="regenerate the bundled bank, or build a user bank from your domain files")
    b.add_argument("--domains", type=Path, nargs="+", default=None, metavar="PATH",
                   help="user domain files or folders of them (docs/new-domain.md); needs --out")
    b.add_argument("--out", type=Path, default=None, help="write here instead of the bundled file")
    b.add_argument("--check", action="store_true", help="only check the output file is up to date")
    b.set_defaults(func=_build)

    v = sub.add_parser("validate", help="check a JSONL scenario file against every structural rule")
    v.add_argument("file", type=Path, nargs="?", default=None,
                   help="default: the bundled bank ($HEAR2ACT_SCENARIOS if set)")
    v.set_defaults(func=_validate)

    e = sub.add_parser("export", help="write the bank in another format (hf: a Hugging Face datasets folder)")
    e.add_argument("dir", type=Path, help="output folder (created; must be empty if it exists)")
    e.add_argument("--format", required=True, choices=["hf"], help="hf: parquet + dataset card (needs datasets)")
    e.add_argument("--file", type=Path, default=None, help="scenario file (default: the bundled bank)")
    e.add_argument("--name", default=None, help="dataset name in the card (default: from the file)")
    e.set_defaults(func=_export)

    s = sub.add_parser("show", help="print one scenario readably")
    s.add_argument("id", help="scenario id, e.g. budget-airline-tickets-01")
    s.add_argument("--file", type=Path, default=None)
    s.set_defaults(func=_show)

    ls = sub.add_parser("list", help="list scenario ids with domain and request")
    ls.add_argument("--domain", default=None, help="only this domain (name or slug)")
    ls.add_argument("--file", type=Path, default=None)
    ls.set_defaults(func=_list)


def _build(args: argparse.Namespace) -> int:
    from .generator import BANK_FILE, bank_text, build_bank, write_bank
    from .validate import bank_problems, paper_bank_problems, problems

    t0 = time.perf_counter()
    if args.domains is not None:
        return _build_user(args, t0)
    bank = build_bank()
    bad = [e for s in bank for e in problems(s)] or bank_problems(bank) or paper_bank_problems(bank)
    for e in bad:
        print(f"INVALID {e}")
    if bad:
        return 1
    if args.check:
        current = BANK_FILE.read_text(encoding="utf-8") if BANK_FILE.exists() else ""
        same = current == bank_text(bank)
        print(f"{BANK_FILE.name}: {'up to date' if same else 'OUT OF DATE (run hear2act scenarios build)'}")
        return 0 if same else 1
    path = write_bank(args.out or BANK_FILE, bank)
    print(f"wrote {len(bank)} scenarios to {path} in {time.perf_counter() - t0:.2f}s")
    return 0


def _build_user(args: argparse.Namespace, t0: float) -> int:
    """``build --domains PATH... --out FILE``: a user bank (never the bundled file)."""
    from .generator import BANK_FILE, bank_text, write_bank
    from .userbank import build_user_bank

    if args.out is None:
        raise SystemExit("hear2act scenarios build --domains: give --out FILE (the bundled bank is the paper's)")
    if args.out.resolve() == BANK_FILE.resolve():
        raise SystemExit(f"hear2act scenarios build --domains: --out must not be the bundled bank {BANK_FILE.name}")
    try:
        bank = build_user_bank(args.domains)
    except ScenarioError as exc:
        for line in getattr(exc, "problems", [str(exc)]):
            print(f"INVALID {line}")
        return 1
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == bank_text(bank)
        print(f"{args.out}: {'up to date' if same else 'OUT OF DATE (run it without --check)'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    path = write_bank(args.out, bank)
    domains = sorted({s.domain for s in bank})
    print(f"wrote {len(bank)} scenarios of {len(domains)} domain(s) ({', '.join(domains)}) to {path} "
          f"in {time.perf_counter() - t0:.2f}s")
    return 0


def _export(args: argparse.Namespace) -> int:
    from .hf_export import export_hf

    path = export_hf(args.dir, args.file, name=args.name)
    print(f"wrote a datasets folder to {path} (datasets.load_dataset({str(path)!r}))")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from .generator import BANK_FILE
    from .userbank import default_bank_path
    from .validate import bank_problems, paper_bank_problems, read_jsonl

    path = args.file or default_bank_path()
    t0 = time.perf_counter()
    try:
        scenarios, errors = read_jsonl(path)
    except FileNotFoundError:
        print(f"no such file: {path}", file=sys.stderr)
        return 2
    except IsADirectoryError:
        print(f"{path} is a folder; give a JSONL scenario file", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:
        print(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
              "a scenario file is UTF-8 JSON lines", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if not errors:
        errors = bank_problems(scenarios)
    if not errors and path.resolve() == BANK_FILE.resolve():
        errors = paper_bank_problems(scenarios)  # the bundled file is the paper's bank, nothing else
    for e in errors:
        print(f"INVALID {e}")
    lines = len(scenarios) + len({e.line for e in errors})
    print(f"{path}: {len(scenarios)} valid, {len(errors)} problem(s) on "
          f"{len({e.line for e in errors})} of {lines} line(s) ({time.perf_counter() - t0:.2f}s)")
    return 1 if errors else 0


def _load(path: Path | None):
    from . import load_scenarios

    return load_scenarios(path)


def _show(args: argparse.Namespace) -> int:
    try:
        by_id = {s.id: s for s in _load(args.file)}
    except ScenarioError as exc:
        print(exc)
        return 1
    s = by_id.get(args.id)
    if s is None:
        print(f"no scenario {args.id!r}; try `hear2act scenarios list`")
        return 2
    print(render(s))
    return 0


def render(s) -> str:
    """A readable page for one scenario (hidden needs included: this is for authors)."""

    def wrap(text: str, ind: str = "    ") -> str:
        return textwrap.fill(text, 88, initial_indent=ind, subsequent_indent=ind)

    out = [f"{s.id}  [{s.family} / {s.domain}]", "", "Persona:", wrap(s.persona.situation),
           f"    urgency={s.persona.urgency} budget={s.persona.budget} expertise={s.persona.expertise}",
           "", "Request:", wrap(s.request)]
    for r in s.requirements:
        bound = f"in {list(r.values)}" if r.categorical else f"{r.op} {r.value:g}"
        out.append(f"    requires {r.attribute} {bound}; ranks by {s.priority}")
    out += ["", "Hidden needs:"]
    for n in s.needs:
        out.append(f"  L{n.level} {n.attribute} in {list(n.accept)}")
        out.append(wrap(n.statement))
        if n.hint:
            out.append(wrap(f"hint: {n.hint}"))
    out += ["", "Options (as shown):"]
    for o in s.options:
        tag = s.role(o.number)
        mark = " <- opening" if o.number == s.opening else ""
        out.append(f"  {o.number:>2}. [{tag:>17}] {o.description}{mark}")
    return "\n".join(out)


def _list(args: argparse.Namespace) -> int:
    from .content import slugify

    scenarios = _load(args.file)
    wanted = slugify(args.domain) if args.domain else None  # "Meditation Apps", "meditation_apps", ...
    shown = [s for s in scenarios if wanted is None or slugify(s.domain) == wanted]
    if wanted is not None and not shown:
        domains = sorted({slugify(s.domain) for s in scenarios})
        print(f"no domain {args.domain!r}; domains: {', '.join(domains)}", file=sys.stderr)
        return 2
    for s in shown:
        print(f"{s.id:<40} {s.request[:70]}")
    return 0
