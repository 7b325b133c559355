"""Shared test configuration: a private audio cache per test session."""

from __future__ import annotations

import importlib.util
import os
import tempfile

# Tests must not read or fill a user's real cache: point the default at a fresh folder.
os.environ.setdefault("HEAR2ACT_CACHE", tempfile.mkdtemp(prefix="hear2act-test-cache-"))

# The speech tests need the speech extra (hibari-tts, praat-parselmouth, scipy); `make test`
# installs it. Without it they are not collected, rather than failing on import.
_SPEECH = ("hibari", "parselmouth", "scipy")
collect_ignore = [] if all(importlib.util.find_spec(m) for m in _SPEECH) else ["test_speech.py"]
