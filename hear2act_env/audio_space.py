"""A Gymnasium space for one variable-length mono waveform."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class AudioSpace(spaces.Space[np.ndarray]):
    """1-D float32 arrays with values in [-1, 1] and at most ``max_samples`` samples.

    ``sample_rate`` is metadata (16 kHz for observations); ``sample()`` draws
    white noise of a random length.
    """

    def __init__(self, max_samples: int, sample_rate: int = 16_000, seed: int | None = None) -> None:
        if max_samples < 1:
            raise ValueError(f"max_samples must be positive, got {max_samples}")
        self.max_samples = int(max_samples)
        self.sample_rate = int(sample_rate)
        super().__init__(shape=None, dtype=np.float32, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        n = int(self.np_random.integers(1, self.max_samples + 1))
        return self.np_random.uniform(-1, 1, size=n).astype(np.float32)

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, np.ndarray)
            and x.dtype == np.float32
            and x.ndim == 1
            and 0 < len(x) <= self.max_samples
            and bool(np.all(np.abs(x) <= 1.0))
        )

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"AudioSpace(max_samples={self.max_samples}, sample_rate={self.sample_rate})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, AudioSpace)
            and other.max_samples == self.max_samples
            and other.sample_rate == self.sample_rate
        )
