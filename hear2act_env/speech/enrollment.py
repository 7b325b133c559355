"""Speaker enrollment: a voice's neutral F0 and intensity from unlabeled neutral speech.

A listener adapts to a new voice before judging whether it sounds low or
loud; the perceiver does the same from a few neutral sentences of the voice
(no state labels involved), rendered with a reserved block of seeds.
"""

from __future__ import annotations

from .features import extract
from .perceiver import Baseline
from .renderers import Renderer, to_16k

ENROLL_TEXTS = (
    "I am looking at a few options today.", "Let me check what I have written down.",
    "This is the list I was sent yesterday.", "We talked about it last week.",
    "I will read the details again later.", "The form asks for my address and phone number.",
    "My appointment is on Tuesday afternoon.", "There are several places near my house.",
)
ENROLL_SEED = 9_000_000


def neutral_baseline(renderer: Renderer, voice: str | None = None) -> Baseline:
    feats = [
        extract(to_16k(renderer.render(text, "neutral", voice, ENROLL_SEED + i), renderer.sample_rate))
        for i, text in enumerate(ENROLL_TEXTS)
    ]
    return Baseline.measure(feats)
