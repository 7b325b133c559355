"""Reasoning-format outputs (CESAR's ``<think>...</think><answer>...</answer>``).

The env acts on the answer; the reasoning is kept in the trajectory.
"""

from __future__ import annotations

import re

_THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.IGNORECASE | re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
_CLOSE_THINK = re.compile(r"</think>", re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, answer) of one model output.

    * ``<think>R</think><answer>A</answer>`` -> (R, A);
    * ``<think>R</think> A`` (no answer tags) -> (R, A);
    * ``R</think> A`` (the chat template opened the think block) -> (R, A);
    * ``<think>R`` never closed -> (R, "") so the action is invalid, not the reasoning;
    * plain text -> ("", text).
    Unclosed ``<answer>`` runs to the end of the text.
    """
    if not isinstance(text, str):
        raise TypeError(f"model output must be str, got {type(text).__name__}")
    reasoning = ""
    rest = text
    m = _THINK.search(text)
    if m is not None:
        reasoning = m.group(1).strip()
        rest = text[m.end():]
        if not text[m.start():m.end()].lower().endswith("</think>"):
            return reasoning, ""
    elif (close := _CLOSE_THINK.search(text)) is not None:
        reasoning, rest = text[:close.start()].strip(), text[close.end():]
    a = _ANSWER.search(rest)
    answer = a.group(1) if a is not None else rest
    return reasoning, answer.strip()
