"""OPT-IN, NOT THE PAPER'S SETTING: constrained decoding of the action tag (``hf:`` only).

SmolLM2-135M-Instruct does not follow P6a: it answers "You're ready to
continue the conversation..." or echoes transcript lines, and almost none of
its replies carry an ``[ACTION: ...]`` tag (see ``tests/data/smollm2_replies.jsonl``).
To see what such a model *decides* once the format is taken off its hands,
``make_policy("hf:smollm2", ..., constrain_tag=True)`` forces every reply to
begin with one well-formed tag:

    [ACTION: ASK]   [ACTION: CONFIRM]   [ACTION: RECOMMEND] [OPTION: n]  (n = 1..n_options)

A logits processor keeps, at each of the first steps, only the tokens that
continue one of these strings (a trie over their token ids); after the
closing ``]`` the model writes its utterance freely. The choice between the
tags is still the model's (greedy: its highest-scoring allowed token).

It is never on by default, is not used by any grid or report of the
paper's conditions, and results made with it must say so: an invalid-action
rate measured with it is zero by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DEFAULT_KINDS = ("ASK", "CONFIRM", "RECOMMEND")  # the spoken assistant's P6a (CLARIFY is the text variant's)


def tag_strings(kinds: Sequence[str] = DEFAULT_KINDS, n_options: int = 11) -> list[str]:
    out = []
    for kind in kinds:
        if kind.upper() == "RECOMMEND":
            out += [f"[ACTION: RECOMMEND] [OPTION: {n}]" for n in range(1, n_options + 1)]
        else:
            out.append(f"[ACTION: {kind.upper()}]")
    return out


class TagConstraint:
    """Logits processor: the new tokens of every row must spell one of ``strings`` before anything else."""

    def __init__(self, tokenizer: Any, prompt_length: int, strings: Sequence[str] | None = None) -> None:
        seqs = [tuple(tokenizer.encode(s, add_special_tokens=False)) for s in (strings or tag_strings())]
        self.start = int(prompt_length)
        self.complete = set(seqs)
        self.next: dict[tuple[int, ...], set[int]] = {}
        for seq in seqs:
            for k in range(len(seq)):
                self.next.setdefault(seq[:k], set()).add(seq[k])
        for seq in seqs:  # a string that is a prefix of another (none here) would stop the longer one
            if seq in self.next:
                raise ValueError(f"tag {tokenizer.decode(list(seq))!r} is a token prefix of another tag")

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        for row, ids in enumerate(input_ids[:, self.start:].tolist()):
            gen = tuple(ids)
            if any(gen[:k] in self.complete for k in range(1, len(gen) + 1)):
                continue  # the tag is written: free text
            allowed = self.next.get(gen)
            if allowed is None:  # cannot happen while the constraint held from the first step
                continue
            keep = torch.full_like(scores[row], float("-inf"))
            index = torch.tensor(sorted(allowed), device=scores.device)
            keep[index] = 0.0
            scores[row] = scores[row] + keep
        return scores
