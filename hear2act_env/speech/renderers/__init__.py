"""Renderers: text + delivery label + voice + seed -> float32 mono waveform.

A renderer is any object with ``name``, ``version``, ``sample_rate``,
``voices`` and ``render(text, label, voice, seed) -> np.ndarray``; see
:class:`~hear2act_env.speech.renderers.base.Renderer`. Registered ones are
built by name with :func:`make_renderer`.
"""

from __future__ import annotations

from .base import RENDERERS, Renderer, make_renderer, to_16k

__all__ = ["RENDERERS", "Renderer", "make_renderer", "to_16k"]
