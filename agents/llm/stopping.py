"""Where a reply ends: the end of the action line, or ``</answer>``.

A decision is one line, ``[ACTION: X] ...`` (P6a), or with reasoning a
``<think>...</think><answer>...</answer>`` block. Whatever the model writes
after that is never read as the decision, but on a CPU it costs as much as
the rest. :class:`~hear2act.agents.llm.policy.ModelPolicy` asks every backend to stop
there (``GenerationRequest.stop``) and cuts every reply at the same place
(:func:`truncate`), so a backend that cannot stop early (a server) gives the
same action as one that can (``hf:``, :class:`StopOnRule`).

Rules:

* ``"action-line"``: after the newline that ends the first line holding an
  ``[ACTION:`` tag (a tag later on that same line is kept);
* ``"answer"``: after the first ``</answer>``;
* ``""``: never.
"""

from __future__ import annotations

import re
from typing import Any

STOP_RULES = ("", "action-line", "answer")
_TAG = re.compile(r"\[\s*ACTION\s*:", re.IGNORECASE)
_ANSWER_END = re.compile(r"</answer>", re.IGNORECASE)


def stop_index(text: str, rule: str) -> int | None:
    """The length of ``text`` kept under ``rule``, or ``None`` when the reply has not ended yet."""
    if rule == "":
        return None
    if rule == "answer":
        m = _ANSWER_END.search(text)
        return m.end() if m else None
    if rule == "action-line":
        m = _TAG.search(text)
        if m is None:
            return None
        newline = text.find("\n", m.end())
        return newline if newline >= 0 else None
    raise ValueError(f"stop rule must be one of {STOP_RULES}, got {rule!r}")


def truncate(text: str, rule: str) -> str:
    """``text`` cut where ``rule`` ends the reply (unchanged when it has not ended)."""
    n = stop_index(text, rule)
    return text if n is None else text[:n]


class StopOnRule:
    """A transformers stopping criterion: a row is done once its decoded new tokens end under ``rule``."""

    def __init__(self, tokenizer: Any, prompt_length: int, rule: str) -> None:
        stop_index("", rule)  # validate
        self.tokenizer = tokenizer
        self.start = int(prompt_length)
        self.rule = rule

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        done = [stop_index(self.tokenizer.decode(row[self.start:], skip_special_tokens=True), self.rule) is not None
                for row in input_ids.tolist()]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
