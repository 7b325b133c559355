"""SFT warm start on the built-in agents' trajectories, in the P6 format:
``python -m hear2act.training.sft --model PATH ...`` (or ``hear2act train sft ...``).

A base model that cannot yet produce ``[ACTION: ...]`` gives GRPO nothing to
compare (every completion invalid, every reward equal). This script plays the
teacher agents (``--teachers``, default ``state-rule``: it reads only the
observation, so a policy can imitate it; ``oracle`` reads hidden needs) on the
*training split* (:mod:`hear2act.training.splits`), records each decision's P6 prompt
(:func:`hear2act.agents.prompts.build_messages`, exactly what evaluation and the GRPO
rollout send) and the teacher's answer -- with a templated reasoning
(:func:`hear2act.training.episodes.explain`) under ``--reasoning`` -- and trains with
TRL's ``SFTTrainer`` on the answers only (prompt-completion rows,
``completion_only_loss``). Every ``trl.SFTConfig`` field is a flag. The
output directory is a checkpoint for ``hear2act.training.grpo --model`` and for
``hear2act rollout --agent hf:OUT``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hear2act_env.access import names

from .splits import SplitSpec

TEXT_ACCESS = names(lambda a: a.text_only)  # conditions whose prompts are text alone

_INSTALL = 'pip install "hear2act[train]"'
SFT_DEFAULTS: dict[str, Any] = {"learning_rate": 2e-4, "num_train_epochs": 1, "per_device_train_batch_size": 8,
                                "max_length": 4096, "logging_steps": 10, "save_strategy": "no", "report_to": "none",
                                "completion_only_loss": True}


@dataclass
class SFTArgs:
    """The Hear2Act side of the SFT run (the rest are SFTConfig's)."""

    model: str = field(default="", metadata={"help": "checkpoint directory of a causal LM with a chat template"})
    access: str = field(default="T+S", metadata={
        "help": f"text access the prompts are built for: {', '.join(TEXT_ACCESS)}"})
    teachers: str = field(default="state-rule", metadata={"help": "comma list of built-in agents to imitate"})
    reasoning: bool = field(default=False, metadata={"help": "teach <think>R</think><answer>A</answer> "
                                                             "(R: hear2act.training.episodes.explain)"})
    n_scenarios: int = field(default=0, metadata={"help": "training-split scenarios (0: all 320)"})
    episodes_per_scenario: int = field(default=1, metadata={"help": "teacher episodes (seeds) per scenario"})
    episode_seed: int = field(default=0, metadata={"help": "first teacher episode seed"})
    test_domains: int = field(default=8, metadata={"help": "held-out split: whole domains held out"})
    test_per_domain: int = field(default=2, metadata={"help": "held-out split: scenarios held out per other domain"})
    split_seed: int = field(default=0, metadata={"help": "held-out split seed (hear2act.training.splits)"})
    resolved_share: float = field(default=0.0, metadata={
        "help": "repeat the decisions made under a resolved state tag until they are this share of the rows "
                "(0: as played; balance_tags says why)"})
    contrast_assent: bool = field(default=False, metadata={
        "help": "then also repeat the unresolved decisions made after words of assent until they are as many as "
                "the resolved ones, so the words alone do not tell CONFIRM (balance_tags says why)"})


def sft_rows(episodes: list[tuple[str, int]], *, access: str = "T+S", teachers: tuple[str, ...] = ("state-rule",),
             reasoning: bool = False, realization: str = "prosody") -> list[dict[str, Any]]:
    """Prompt-completion rows (conversational) of every decision of every teacher episode, in order."""
    from hear2act.agents.prompts import build_messages, domain_from_scenario_id
    from hear2act.agents.rule import PROBLEM_CUES
    from hear2act_env import load_scenarios

    from .episodes import AgentPolicy, make_reference, play, state_tag

    bank = load_scenarios()
    rows = []
    for teacher in teachers:
        policy = AgentPolicy(lambda t=teacher: make_reference(t, bank), reasoning=reasoning, name=teacher)
        played = play(policy, [sid for sid, _ in episodes], seeds=[s for _, s in episodes], access=access,
                      realization=realization)
        for episode in played:
            domain = domain_from_scenario_id(episode["scenario_id"])
            for turn in episode["records"]:
                obs = {"transcript": turn.transcript, "options": turn.options, "state": turn.state}
                prompt = build_messages(obs, access, domain=domain, reasoning=reasoning)
                said = turn.transcript.splitlines()[-1] if turn.transcript else ""
                rows.append({"prompt": prompt, "completion": [{"role": "assistant", "content": turn.raw}],
                             "teacher": teacher, "scenario_id": episode["scenario_id"], "tag": state_tag(turn.state),
                             "assent": said.startswith("User: ") and not PROBLEM_CUES.search(said)})
    return rows


def parse_teachers(spec: str) -> tuple[str, ...]:
    """``--teachers``' comma list (each teacher plays every episode).

    >>> parse_teachers("explore:0.5, explore-tag,")
    ('explore:0.5', 'explore-tag')
    """
    return tuple(t.strip() for t in spec.split(",") if t.strip())


def balance_tags(rows: list[dict[str, Any]], resolved_share: float, *, contrast: bool = False) -> list[dict[str, Any]]:
    """``rows`` with their ``resolved``-tag rows repeated (in order, cycling) until they are ``resolved_share`` of
    all rows; unchanged when the share is 0 or already met, or when no row is resolved. With ``contrast``, the
    ``unresolved`` rows whose user words sound like assent (``row["assent"]``) are then repeated until they are
    as many as the resolved rows.

    Why: a teacher meets a resolved state about once per episode (135 of 1,548 decisions of ``explore-tag`` on
    160 scenarios), so a tiny LM trained from scratch learns the marginal rate of CONFIRM and not its dependence
    on the tag: measured by ``benchmarks/sft_tag_probe.py`` (``docs/training.md``), P(CONFIRM | resolved /
    unresolved) 0.0719 / 0.0711 after 240 steps as played, against 0.4618 / 0.2615 with the resolved
    decisions repeated to half the rows.

    Why ``contrast``: every resolved reaction is worded as assent, and so are the unresolved reactions to an
    option missing an L2 or L3 need under Prosody (461 of the 1,413 unresolved decisions as played, beside 135
    resolved). With the resolved rows repeated to half, CONFIRM then follows assenting words three times in four,
    and a student can learn the words instead of the tag: it CONFIRMs the opening on "Okay, sounds good."
    whatever the tag says (the seed-1 warm start of ``benchmarks/grpo_learning.py``). Matched counts leave the
    tag as the only cue that separates CONFIRM from RECOMMEND after assent.

    >>> rows = [{"tag": "resolved", "i": 0}] + [{"tag": "unresolved", "i": i} for i in range(1, 4)]
    >>> [r["i"] for r in balance_tags(rows, 0.5)]
    [0, 1, 2, 3, 0, 0]
    >>> rows[1]["assent"] = True
    >>> [r["i"] for r in balance_tags(rows, 0.5, contrast=True)]
    [0, 1, 2, 3, 0, 0, 1, 1]
    """
    if not 0.0 <= resolved_share < 1.0:
        raise ValueError(f"resolved_share must be in [0, 1), got {resolved_share}")
    resolved = [r for r in rows if r.get("tag") == "resolved"]
    have, other = len(resolved), len(rows) - len(resolved)
    out = list(rows)
    if resolved and have < resolved_share * len(rows):
        want = round(resolved_share * other / (1.0 - resolved_share))  # resolved rows for the share
        out += [resolved[i % have] for i in range(want - have)]
    if contrast:
        assent = [r for r in rows if r.get("tag") == "unresolved" and r.get("assent")]
        target = sum(r.get("tag") == "resolved" for r in out)
        out += [assent[i % len(assent)] for i in range(target - len(assent))] if assent else []
    return out


def parse(argv: list[str] | None = None, prog: str | None = None) -> tuple[SFTArgs, Any]:
    from hear2act_env.extras import missing_extra

    from .checks import check_access, check_split, quiet_defaults

    try:
        import torch
        from transformers import HfArgumentParser
        from trl import SFTConfig
    except ImportError as exc:
        raise ImportError(missing_extra("SFT", "train", exc)) from None
    parser = HfArgumentParser((SFTArgs, SFTConfig), prog=prog,
                              description="SFT warm start on built-in agents' trajectories.")
    parser.set_defaults(**SFT_DEFAULTS, use_cpu=not torch.cuda.is_available())
    argv = list(sys.argv[1:] if argv is None else argv)
    with quiet_defaults(argv):
        args, config = parser.parse_args_into_dataclasses(args=argv)
    if not args.model:
        raise ValueError("--model is required (a checkpoint directory with config.json)")
    check_access(args.access, TEXT_ACCESS)  # the prompts are text
    check_split(args.test_domains, args.test_per_domain, args.split_seed)
    if not 0.0 <= args.resolved_share < 1.0:
        raise ValueError(f"--resolved_share must be in [0, 1), got {args.resolved_share}")
    return args, config


def main(argv: list[str] | None = None, prog: str | None = None) -> dict[str, Any]:
    """``hear2act train sft`` (and ``python -m hear2act.training.sft``)."""
    from .checks import check_model

    args, config = parse(argv, prog=prog)  # first: a wrong flag or a missing extra is one line
    check_model(args.model)
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTTrainer

    from .grpo_data import default_episodes

    teachers = parse_teachers(args.teachers)
    episodes = default_episodes(args.n_scenarios, args.episode_seed, per_scenario=args.episodes_per_scenario,
                                split=SplitSpec(args.test_domains, args.test_per_domain, args.split_seed))
    rows = balance_tags(sft_rows(episodes, access=args.access, teachers=teachers, reasoning=args.reasoning),
                        args.resolved_share, contrast=args.contrast_assent)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    result = trainer.train()
    out = Path(config.output_dir)
    trainer.save_model(str(out))
    tokenizer.save_pretrained(out)
    summary = {"examples": len(rows), "resolved_rows": sum(r["tag"] == "resolved" for r in rows),
               "unresolved_assent_rows": sum(r["tag"] == "unresolved" and r["assent"] for r in rows),
               "resolved_share": args.resolved_share, "episodes": len(episodes), "teachers": list(teachers),
               "steps": trainer.state.global_step, "train_loss": result.training_loss,
               "scenarios": sorted({sid for sid, _ in episodes})}
    (out / "sft_summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"SFT: {len(rows)} decisions of {len(episodes)} episodes x {len(teachers)} teacher(s), "
          f"{summary['steps']} steps, loss {result.training_loss:.3f}; wrote {out}", file=sys.stderr)
    return summary


if __name__ == "__main__":  # the same as `hear2act train sft ...`
    from .checks import module_main

    raise SystemExit(module_main("sft"))
