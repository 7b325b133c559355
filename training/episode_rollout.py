"""On-policy whole episodes for TRL's ``GRPOTrainer``: a ``rollout_func``, the sampling policy, held-out evaluation.

Each dataset row is an episode start ``(scenario_id, seed)`` of the training
split; TRL repeats it ``num_generations`` (K) times. :func:`make_rollout_func`
returns the ``rollout_func`` that plays the K episodes of every group **in
the env, to the end, with the model being trained** -- through the evaluation
engine (:func:`hear2act.eval.engine.run_episodes`), so every turn sees the same P6
prompt (:func:`hear2act.agents.prompts.build_messages`) and its answer is read by the
same parser as in ``hear2act rollout --agent hf:CKPT``. A checkpoint written
by the run is evaluated by that command unchanged.

What one sample trains on. P6 rebuilds the whole prompt at every turn
(system + transcript + tag), so the turns of an episode are not one token
sequence; concatenating them would train each answer under a context the
policy never sees at evaluation. Instead each sample returns **one turn of
its episode, drawn uniformly** (seeded by step, row and episode seed): that
turn's exact prompt ids and sampled completion ids, with the whole episode's
reward (:class:`hear2act.training.episodes.EpisodeReward`: success with the turn cost,
plus the process terms scored on each turn). In expectation this is the
REINFORCE gradient of the episode return with each turn weighted 1/T; GRPO's
group normalisation compares the K episodes of the same start.
``turn_sampling="last"`` trains on the episode's last turn instead (the
decision that closed it, or the last one before the turn limit): a biased
estimator that puts all the credit on the closing decision, with far less
variance when episodes are long and one decision decides them.
``turn_sampling="closing"`` is ``last`` for episodes the policy closed (its CONFIRM, right or
wrong), and trains **no token** of an episode that ran to the turn limit
(``env_mask`` all 0; the baseline is the mean of the group's closed
episodes, :func:`closing_baseline`): such an
episode made no closing decision, and its last turn -- usually a RECOMMEND
under an unresolved tag, the right move there -- is not what failed it.
``last`` pushes that turn down in every group that has a success, while a
success's own RECOMMENDs never get credit: a bias toward confirming under an
unresolved tag that the measured runs show (docs/training.md).
``turn_sampling="decisive"`` is ``closing`` except that a *failed* episode with an invalid answer trains
its **first invalid answer** instead: an answer the parser cannot read is never right, the env replies
"Sorry, what are you suggesting?", and the episode then mostly closes on what was recommended before.
Under ``closing`` those answers are never trained, and the KL penalty only holds the trained tokens:
in every failed run of docs/training.md the held-out invalid-answer rate rose from 2-3 % to 36-73 %,
and the groups' closings then all failed alike (:func:`decisive_turn`). A success keeps its closing turn:
an early invalid answer did not decide it, and training it with the success's advantage would
reinforce the unreadable answer.
``turn_sampling="pivotal"`` (what ``benchmarks/grpo_learning.py`` trains with) is ``decisive``, except that
a failed episode that ran out of turns with no invalid answer trains **its first decision against the
tag** (:func:`pivotal_turn`): a satisfied user passed by, or a CONFIRM under an unresolved tag that the user
refused. Without it such episodes train nothing, and once the policy has stopped closing under an unresolved
tag nothing holds CONFIRM under a resolved one up (docs/training.md, "GRPO learns on every seed").
``turn_sampling="branch"`` (:mod:`hear2act.training.branching`) makes each
group K continuations of **one** on-policy decision state instead of K
episodes of one start: the K samples share the trained turn's prompt, and
both CONFIRM and RECOMMEND there are credited with the outcome they led to.

Held-out evaluation (:class:`HeldOutEval`) plays the held-out scenarios
(:func:`hear2act.training.splits.eval_ids`) greedily with
:class:`hear2act.agents.llm.policy.ModelPolicy` over :class:`hear2act.agents.llm.hf.HFBackend`
-- the exact stack of ``hear2act rollout --agent hf:...`` -- before training,
every ``--eval_every`` steps and after, and writes ``heldout_eval.json``
next to the checkpoints.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hear2act.agents.base import PolicyInput, PolicyOutput
from hear2act.agents.llm.reasoning import split_reasoning
from hear2act.agents.llm.window import clip_prompt, model_field

from .branching import branch_reward, play_branched
from .episodes import PROCESS_TERMS, EpisodeReward, play, summarize

# Logged next to the episode reward (weight 0): TRL streams each as rewards/<name>/mean at every logging step.
LOGGED = ("success", "outcome", "turns", *(f"process/{t}" for t in PROCESS_TERMS))
# Also logged (weight 0, None -> NaN where an episode has no such turn): the episode's P(CONFIRM | tag) after a
# recommendation (hear2act.training.episodes.tag_decisions) -- does the policy read the tag yet?
DECISIONS = ("confirm_if_resolved", "confirm_if_unresolved")


def _seed(*parts: Any) -> int:
    digest = hashlib.blake2b("/".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % (2**31)


class SamplingPolicy:
    """The model being trained as a batched policy: P6 prompts, seeded sampling, token ids kept in ``extra``.

    Builds each prompt exactly as :class:`hear2act.agents.llm.policy.ModelPolicy` does and
    samples with :class:`hear2act.agents.llm.hf.SeededSampler` (one generator per
    request, seeded by ``salt``, episode key and turn: no global RNG).
    """

    def __init__(self, model: Any, tokenizer: Any, *, access: str, reasoning: bool, max_new_tokens: int,
                 temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0, assistant: str = "spoken",
                 salt: int = 0, name: str = "grpo-policy") -> None:
        self.model, self.tokenizer = model, tokenizer
        self.access, self.reasoning, self.assistant = access, reasoning, assistant
        self.max_new_tokens, self.temperature, self.top_p, self.top_k = max_new_tokens, temperature, top_p, top_k
        self.salt, self.name = salt, name
        # A model windowed on every layer sees only the prompt's last tokens (hear2act.agents.llm.window): the
        # rollout samples from, and GRPO trains on, exactly the ids hf: evaluation feeds it.
        self.field = model_field(model)

    def messages(self, item: PolicyInput) -> list[dict[str, Any]]:
        from hear2act.agents.llm.policy import decision_messages

        return decision_messages(item, self.access, assistant=self.assistant, reasoning=self.reasoning)

    def act_batch(self, items: Sequence[PolicyInput]) -> list[PolicyOutput]:
        import torch
        import transformers

        from hear2act.agents.llm.backend import text_only
        from hear2act.agents.llm.hf import SeededSampler

        if not items:
            return []
        tok = self.tokenizer
        texts = [tok.apply_chat_template(text_only(self.messages(it), self.name), tokenize=False,
                                         add_generation_prompt=True) for it in items]
        prompt_ids = [clip_prompt(tok(t, add_special_tokens=False)["input_ids"], self.field) for t in texts]
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        width = max(len(p) for p in prompt_ids)
        device = next(self.model.parameters()).device
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompt_ids], device=device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids], device=device)
        eos = self.model.generation_config.eos_token_id or tok.eos_token_id
        stops = set(eos if isinstance(eos, list) else [eos])
        config = transformers.GenerationConfig(max_new_tokens=self.max_new_tokens, do_sample=False,
                                               eos_token_id=eos, pad_token_id=pad)
        seeds = [_seed(self.salt, it.key, it.turn) for it in items]
        processors = transformers.LogitsProcessorList()
        if self.temperature > 0:
            processors.append(SeededSampler(seeds, self.temperature, self.top_p, self.top_k, device=device))
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                out = self.model.generate(input_ids=ids, attention_mask=mask, generation_config=config,
                                          logits_processor=processors)
        finally:
            self.model.train(was_training)
        outputs = []
        for p, row in zip(prompt_ids, out[:, width:].tolist(), strict=True):
            n = next((i for i, t in enumerate(row) if t in stops), None)
            completion = row[:n + 1] if n is not None else row  # keep the EOS: TRL then sees a finished turn
            text = tok.decode(completion, skip_special_tokens=True)
            reasoning, answer = split_reasoning(text)
            outputs.append(PolicyOutput(action=answer, raw=text, reasoning=reasoning, n_tokens=len(completion),
                                        extra={"prompt_ids": p, "completion_ids": completion}))
        return outputs


TURN_SAMPLING = ("uniform", "last", "closing", "decisive", "pivotal", "branch")
# The modes that train one chosen decision of an episode, or none of it (env_mask 0, closing_baseline).
CHOSEN_TURN = ("closing", "decisive", "pivotal")


def episode_reward(completions: Sequence[Any], episode_reward: Sequence[float] | None = None,
                   **kwargs: Any) -> list[float]:
    """The whole episode's reward of each sample, computed by the rollout (a TRL reward function)."""
    if episode_reward is None:
        raise ValueError("episode_reward: no 'episode_reward' field; train with the episode rollout_func")
    return [float(r) for r in episode_reward]


def _logged(name: str):
    def func(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        return [None if v is None else float(v) for v in kwargs[name.replace("/", "_")]]

    func.__name__ = func.__qualname__ = name
    return func


def reward_funcs() -> tuple[list[Any], list[float]]:
    """(reward functions, weights): the episode reward (weight 1) and its parts (weight 0, logged only)."""
    logged = (*LOGGED, *DECISIONS)
    return [episode_reward, *(_logged(n) for n in logged)], [1.0] + [0.0] * len(logged)


def _decision_rates(decisions: dict[str, int]) -> dict[str, float | None]:
    return {f"confirm_if_{t}": decisions[f"confirm_{t}"] / decisions[t] if decisions[t] else None
            for t in ("resolved", "unresolved")}


def _trained_turn(turn: Any) -> str:
    """What the trained turn did, for the step's diagnostics: ``confirm|resolved``, ``recommend|unresolved``, ..."""
    from hear2act_env.dialogue.actions import parse_action

    from .episodes import tag_decisions

    d = tag_decisions([turn])
    tag = "resolved" if d["resolved"] else "unresolved" if d["unresolved"] else "first"
    return f"{parse_action(split_reasoning(turn.raw)[1]).kind}|{tag}"


def decisive_turn(turns: Sequence[Any], closed: bool, success: bool = False) -> int | None:
    """``turn_sampling="decisive"``: the index of a failed episode's first invalid answer, else of its closing
    turn if it closed, else ``None`` (nothing to train).

    >>> from hear2act.training.episodes import TurnRecord
    >>> ok, bad = TurnRecord("", "", "", "[ACTION: RECOMMEND] [OPTION: 2] B?"), TurnRecord("", "", "", "B?")
    >>> decisive_turn([ok, bad, ok], closed=True), decisive_turn([ok, ok], closed=True), decisive_turn([ok], False)
    (1, 1, None)
    >>> decisive_turn([ok, bad, ok], closed=True, success=True), decisive_turn([ok, bad], closed=False)
    (2, 1)
    """
    from .episodes import invalid_turns

    bad = [] if success else invalid_turns(turns)
    return bad[0] if bad else len(turns) - 1 if closed else None


def against_tag_turn(turns: Sequence[Any]) -> int | None:
    """The first decision that went against the state tag the policy saw: a turn that answered a recommendation
    under a ``resolved`` tag with something other than CONFIRM (the user was satisfied and the policy looked
    further), or under an ``unresolved`` tag with CONFIRM (refused by the user when the option breaks the hard
    need, PROTOCOL.md, so the episode went on); ``None`` if there was none.

    >>> from hear2act.training.episodes import TurnRecord
    >>> def seen(tag, answer):
    ...     return TurnRecord("User: a\\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] A?\\nUser: ok", "",
    ...                       f"CONCERN STATE: x ({tag})", answer)
    >>> go_on, close = "[ACTION: RECOMMEND] [OPTION: 2] B?", "[ACTION: CONFIRM] Done."
    >>> against_tag_turn([seen("unresolved", go_on), seen("resolved", go_on), seen("resolved", go_on)])
    1
    >>> against_tag_turn([seen("unresolved", go_on), seen("unresolved", close), seen("resolved", go_on)])
    1
    >>> against_tag_turn([seen("resolved", close)]), against_tag_turn([seen("unresolved", go_on)])
    (None, None)
    """
    from hear2act_env.dialogue.actions import parse_action

    from .branching import decision_turns

    by = decision_turns(turns)
    for t in sorted(by["resolved"] + by["unresolved"]):
        confirmed = parse_action(split_reasoning(turns[t].raw)[1]).kind == "confirm"
        if confirmed == (t in by["unresolved"]):
            return t
    return None


def pivotal_turn(turns: Sequence[Any], closed: bool, success: bool = False) -> int | None:
    """``turn_sampling="pivotal"``: :func:`decisive_turn`, and in a failed episode that ran out of turns with no
    invalid answer, its first decision against the tag (:func:`against_tag_turn`: a satisfied user passed by, or a
    CONFIRM under an unresolved tag that the user refused); ``None`` if it made none.

    Why: under ``decisive`` an episode that hits the turn limit trains nothing, so once GRPO has taught the policy
    not to close under an unresolved tag, most failures train nothing: the KL penalty pulls CONFIRM under a
    resolved tag back (measured: held-out ``P(confirm | resolved)`` 0.95 -> 0.53 on seed 1 between steps 72 and
    96, success 0.681 -> 0.487), and refused CONFIRMs under an unresolved tag creep back in and waste the turns
    (seed 5, counting pass-bys only: ``P(confirm | unresolved)`` 0.01 -> 0.19 in the last 12 steps, success
    0.719 -> 0.394). That decision is what lost such an episode; trained with the failure's advantage, it is
    pushed down.

    >>> from hear2act.training.episodes import TurnRecord
    >>> seen = TurnRecord("User: a\\nAssistant: [ACTION: RECOMMEND] [OPTION: 1] A?\\nUser: ok", "",
    ...                   "CONCERN STATE: x (resolved)", "[ACTION: RECOMMEND] [OPTION: 2] B?")
    >>> other = TurnRecord("User: a", "", "", "[ACTION: RECOMMEND] [OPTION: 3] C?")
    >>> pivotal_turn([other, seen, other], closed=False), decisive_turn([other, seen, other], closed=False)
    (1, None)
    >>> pivotal_turn([other, seen, other], closed=True), pivotal_turn([other, other], closed=False)
    (2, None)
    """
    picked = decisive_turn(turns, closed, success)
    return against_tag_turn(turns) if picked is None and not success else picked


def closing_baseline(rewards: Sequence[float], closed: Sequence[bool], k: int) -> list[float]:
    """``turn_sampling="closing"``: an untrained (turn-limit) episode's reward is replaced by the mean reward of
    its group's closed episodes, so GRPO's group mean -- the baseline -- is the closed episodes' mean.

    The closing decisions are then compared with each other (was closing under this tag better than the
    group's other closings?) and their advantages sum to zero: "close more / close less" regardless of the
    tag gets no push either way, which the masked turn-limit episodes would otherwise give (their negative
    advantages dropped, the closings' net advantage is positive). A group without a closed episode keeps
    its rewards (no token of it is trained). The logged ``success`` / ``outcome`` stay the episodes' own.

    >>> closing_baseline([1.0, -0.2, -0.2, -0.2], [True, True, False, False], 4)
    [1.0, -0.2, 0.4, 0.4]
    """
    out = [float(r) for r in rewards]
    for start in range(0, len(out), max(k, 1)):
        idx = range(start, min(start + max(k, 1), len(out)))
        done = [out[i] for i in idx if closed[i]]
        if done:
            for i in idx:
                if not closed[i]:
                    out[i] = sum(done) / len(done)
    return out


def step_diagnostics(rows: Sequence[dict[str, Any]], trained: Sequence[str], k: int,
                     rewards: Sequence[float] | None = None) -> dict[str, Any]:
    """One step's rollouts: outcome rates, the policy's P(CONFIRM | tag), and the mean group-relative advantage
    (reward - group mean, GRPO's with ``scale_rewards=none``) of the trained turns by what they did."""
    from .episodes import summarize

    rewards = np.array([r["reward"] for r in rows] if rewards is None else list(rewards), dtype=float)
    groups = rewards.reshape(-1, k) if k and len(rewards) % k == 0 else rewards.reshape(1, -1)
    adv = (groups - groups.mean(axis=1, keepdims=True)).reshape(-1)
    by: dict[str, list[float]] = {}
    for kind, a in zip(trained, adv, strict=True):
        by.setdefault(kind, []).append(float(a))
    s = summarize(rows)
    return {**{k2: s[k2] for k2 in ("success", "premature_closure", "turns", "reward", "confirm_if_resolved",
                                    "confirm_if_unresolved")},
            "groups_zero_std": float(np.mean(groups.std(axis=1) < 1e-9)),
            "advantage_by_trained_turn": {kind: (float(np.mean(v)), len(v)) for kind, v in sorted(by.items())}}


def make_rollout_func(*, access: str, reward: EpisodeReward, realization: str = "prosody", reasoning: bool = False,
                      max_new_tokens: int = 64, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
                      assistant: str = "spoken", seed: int = 0, turn_sampling: str = "uniform",
                      diagnostics: bool = False, branch_prefixes: int = 1, branch_resolved_share: float = 0.5):
    """TRL's ``rollout_func(prompts, trainer)`` playing whole on-policy episodes (see the module docstring).

    Needs the rows' ``scenario_id`` / ``seed`` columns: :class:`EpisodeGRPOTrainer`
    exposes the generation batch as ``trainer.episode_inputs``. Each call leaves
    :func:`step_diagnostics` in ``trainer.last_diagnostics`` (printed with ``diagnostics``).
    """
    if turn_sampling not in TURN_SAMPLING:
        raise ValueError(f"turn_sampling must be one of {TURN_SAMPLING}, got {turn_sampling!r}")

    def rollout_func(prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        inputs = getattr(trainer, "episode_inputs", None)
        if inputs is None or len(inputs) != len(prompts):
            raise RuntimeError("rollout_func: the episode rollout needs EpisodeGRPOTrainer (rows with scenario_id "
                               "and seed columns)")
        step = int(trainer.state.global_step)
        model = trainer.accelerator.unwrap_model(trainer.model)
        policy = SamplingPolicy(model, trainer.processing_class, access=access, reasoning=reasoning,
                                max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, top_k=top_k,
                                assistant=assistant, salt=_seed(seed, step, trainer.accelerator.process_index))
        sids = [str(x["scenario_id"]) for x in inputs]
        seeds = [int(x["seed"]) for x in inputs]
        keys = [f"{step}/{trainer.accelerator.process_index}/{i}/{sid}/{s}"
                for i, (sid, s) in enumerate(zip(sids, seeds, strict=True))]
        k = int(getattr(trainer, "num_generations", 0) or len(sids))
        if turn_sampling == "branch":  # K continuations of one drawn decision state per group (.branching)
            rows, taus = play_branched(policy, sids, seeds, keys, k, access=access, realization=realization,
                                       config=reward, rng=np.random.default_rng([seed, step]),
                                       resolved_share=branch_resolved_share, prefixes=branch_prefixes)
        else:
            rows = play(policy, sids, access=access, realization=realization, config=reward, seeds=seeds,
                        keys=keys, batch_size=len(sids))
        out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": None,
                                     "episode_reward": [], **{n.replace("/", "_"): [] for n in (*LOGGED, *DECISIONS)}}
        trained, masks = [], []
        for i, row in enumerate(rows):
            turns = row["records"]
            if not turns:
                raise RuntimeError(f"rollout_func: episode {row['key']} has no turn")
            closed = bool((row["trajectory"].get("outcome") or {}).get("confirmed", False))
            trains = closed or turn_sampling not in CHOSEN_TURN
            if turn_sampling == "branch":
                tau = taus[i]
            elif turn_sampling in ("last", "closing"):
                tau = len(turns) - 1
            elif turn_sampling in ("decisive", "pivotal"):
                pick = decisive_turn if turn_sampling == "decisive" else pivotal_turn
                picked = pick(turns, closed, bool(row["success"]))
                trains, tau = picked is not None, len(turns) - 1 if picked is None else picked
            else:
                tau = int(np.random.default_rng([seed, step, i, row["seed"]]).integers(len(turns)))
            completion = turns[tau].extra["completion_ids"]
            out["prompt_ids"].append(turns[tau].extra["prompt_ids"])
            out["completion_ids"].append(completion)
            masks.append([int(trains)] * len(completion))
            out["episode_reward"].append(branch_reward(row, tau, reward) if turn_sampling == "branch"
                                         else row["reward"])
            for n in LOGGED:
                out[n.replace("/", "_")].append(float(row[n]))
            for n, v in _decision_rates(row["decisions"]).items():
                out[n].append(v)
            trained.append(_trained_turn(turns[tau]) if masks[-1][:1] != [0] else "none|turn-limit")
        if turn_sampling in CHOSEN_TURN:
            out["env_mask"] = masks  # TRL: 0 = not the model's to train (here: no closing decision to credit)
            out["episode_reward"] = closing_baseline(out["episode_reward"], [m[:1] != [0] for m in masks],
                                                     k)
        trainer.last_episodes = [{k: r[k] for k in ("key", "reward", "success", "turns")} for r in rows]
        trainer.last_diagnostics = step_diagnostics(rows, trained, k, out["episode_reward"])
        if diagnostics:
            d = trainer.last_diagnostics
            adv = ", ".join(f"{kind} {m:+.3f} (n={n})" for kind, (m, n) in d["advantage_by_trained_turn"].items())
            print(f"rollout step {step}: success {d['success']:.3f} premature {d['premature_closure']:.3f} turns "
                  f"{d['turns']:.1f} reward {d['reward']:+.3f} P(confirm|resolved) {d['confirm_if_resolved']:.2f} "
                  f"P(confirm|unresolved) {d['confirm_if_unresolved']:.2f} zero-std groups "
                  f"{d['groups_zero_std']:.2f}; advantage of trained turns: {adv}", flush=True)
        return out

    return rollout_func


def _trainer_base():
    try:
        from trl import GRPOTrainer
    except ImportError as exc:
        raise ImportError('GRPO training needs trl, transformers and torch: pip install "hear2act[train]"') from exc
    return GRPOTrainer


class EpisodeGRPOTrainer(_trainer_base()):
    """``GRPOTrainer`` that lets its ``rollout_func`` read the generation batch's columns (``episode_inputs``)."""

    episode_inputs: list[dict[str, Any]] | None = None

    def _generate_and_score_completions(self, inputs):
        self.episode_inputs = list(inputs)
        try:
            return super()._generate_and_score_completions(inputs)
        finally:
            self.episode_inputs = None


def evaluate_model(model: Any, tokenizer: Any, scenario_ids: Sequence[str], *, access: str, reasoning: bool,
                   max_new_tokens: int, realization: str = "prosody", seed: int = 10_000,
                   reward: EpisodeReward | None = None, batch_size: int = 16,
                   temperature: float = 0.0) -> dict[str, float]:
    """Held-out play through ``ModelPolicy(HFBackend)`` -- what ``hear2act rollout --agent hf:`` runs.

    Greedy by default; ``temperature > 0`` samples with HFBackend's per-request seeds (episode seed, turn), as
    ``hear2act rollout --temperature T`` does. The summary (:func:`hear2act.training.episodes.summarize`) and
    ``success_by_episode`` (in ``scenario_ids`` order: what a paired bootstrap of two checkpoints needs).
    """
    rows = play_model(model, tokenizer, scenario_ids, access=access, reasoning=reasoning,
                      max_new_tokens=max_new_tokens, realization=realization, seed=seed, reward=reward,
                      batch_size=batch_size, temperature=temperature)
    return {**summarize(rows), "success_by_episode": [int(bool(r["success"])) for r in rows]}


def play_model(model: Any, tokenizer: Any, scenario_ids: Sequence[str], *, access: str, reasoning: bool,
               max_new_tokens: int, realization: str = "prosody", seed: int = 10_000,
               reward: EpisodeReward | None = None, batch_size: int = 16,
               temperature: float = 0.0) -> list[dict[str, Any]]:
    """The scored rows (:func:`hear2act.training.episodes.play`) of :func:`evaluate_model`'s episodes."""
    from hear2act.agents.llm.hf import HFBackend
    from hear2act.agents.llm.policy import ModelPolicy

    was_training = model.training
    try:
        backend = HFBackend("in-memory", model=model, tokenizer=tokenizer, max_new_tokens=max_new_tokens,
                            temperature=temperature, device=str(next(model.parameters()).device))
        policy = ModelPolicy(backend, access=access, reasoning=reasoning)
        rows = play(policy, list(scenario_ids), access=access, realization=realization, seed=seed,
                    config=reward or EpisodeReward(), batch_size=batch_size)
    finally:
        model.train(was_training)
    return rows


def heldout_callback(*, tokenizer: Any, scenario_ids: Sequence[str], access: str, reasoning: bool,
                     max_new_tokens: int, every: int, out: str | Path, realization: str = "prosody",
                     seed: int = 10_000, reward: EpisodeReward | None = None, temperature: float = 0.0):
    """A ``TrainerCallback`` evaluating on the held-out ids at the start, every ``every`` steps and at the end."""
    from transformers import TrainerCallback

    path = Path(out) / "heldout_eval.json"

    class HeldOutEval(TrainerCallback):
        def __init__(self) -> None:
            self.history: list[dict[str, Any]] = []

        def _run(self, state: Any, model: Any) -> None:
            if not state.is_world_process_zero or any(h["step"] == state.global_step for h in self.history):
                return
            summary = evaluate_model(model, tokenizer, scenario_ids, access=access, reasoning=reasoning,
                                     max_new_tokens=max_new_tokens, realization=realization, seed=seed,
                                     reward=reward, temperature=temperature)
            self.history.append({"step": int(state.global_step), **summary})
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"scenario_ids": list(scenario_ids), "seed": seed, "access": access,
                                        "temperature": temperature,
                                        "history": self.history}, indent=1) + "\n", encoding="utf-8")
            print(f"held-out step {state.global_step}: success {summary['success']:.3f} premature "
                  f"{summary['premature_closure']:.3f} reward {summary['reward']:+.3f} P(confirm|resolved) "
                  f"{summary['confirm_if_resolved']:.2f} P(confirm|unresolved) {summary['confirm_if_unresolved']:.2f}",
                  flush=True)

        def on_train_begin(self, args, state, control, model=None, **kwargs):
            self._run(state, model)

        def on_step_end(self, args, state, control, model=None, **kwargs):
            if every > 0 and state.global_step % every == 0:
                self._run(state, model)

        def on_train_end(self, args, state, control, model=None, **kwargs):
            self._run(state, model)

    return HeldOutEval()


__all__ = [
    "DECISIONS",
    "LOGGED",
    "EpisodeGRPOTrainer",
    "SamplingPolicy",
    "against_tag_turn",
    "closing_baseline",
    "decisive_turn",
    "episode_reward",
    "evaluate_model",
    "heldout_callback",
    "make_rollout_func",
    "pivotal_turn",
    "play_model",
    "reward_funcs",
    "step_diagnostics",
]
