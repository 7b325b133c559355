"""The doctests of the episode-GRPO modules (which turn a sample trains, the prompt cut, rewards of episodes)."""

from __future__ import annotations

import doctest
import importlib

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")


@pytest.mark.parametrize("name", ["hear2act.training.episode_rollout", "hear2act.training.branching",
                                  "hear2act.training.episodes", "hear2act.agents.llm.window",
                                  "hear2act.eval.stats"])
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
