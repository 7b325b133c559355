"""The enrollment speech: a voice's unlabeled neutral sentences, rendered with a reserved block of seeds.

Shared by :mod:`.perceiver` (``FeaturePerceiver.enroll``) and :mod:`.enrollment`
(``neutral_baseline``); it imports neither, so the two do not import each other.
"""

from __future__ import annotations

from .features import AcousticFeatures, extract
from .renderers import Renderer, to_16k

ENROLL_TEXTS = (
    "I am looking at a few options today.", "Let me check what I have written down.",
    "This is the list I was sent yesterday.", "We talked about it last week.",
    "I will read the details again later.", "The form asks for my address and phone number.",
    "My appointment is on Tuesday afternoon.", "There are several places near my house.",
)
ENROLL_SEED = 9_000_000


def neutral_features(renderer: Renderer, voice: str | None = None) -> list[AcousticFeatures]:
    """The acoustic features of the voice reading every enrollment sentence, neutral (no state labels)."""
    return [
        extract(to_16k(renderer.render(text, "neutral", voice, ENROLL_SEED + i), renderer.sample_rate))
        for i, text in enumerate(ENROLL_TEXTS)
    ]
