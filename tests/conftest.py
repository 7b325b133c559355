"""Shared test configuration: the test sessions' own audio cache, kept warm between sessions."""

from __future__ import annotations

import importlib.util
import os
import tempfile

# Tests must not read or fill a user's real cache: point the default at the tests' own folder. It is kept
# between sessions (entries are keyed by renderer version and content and written atomically, so sessions
# may share it), so a second run does not re-render every utterance; HEAR2ACT_TEST_COLD_CACHE=1 starts from
# an empty one. Tests of the cache itself use their own tmp_path.
if os.environ.get("HEAR2ACT_TEST_COLD_CACHE"):
    os.environ.setdefault("HEAR2ACT_CACHE", tempfile.mkdtemp(prefix="hear2act-test-cache-"))
else:
    os.environ.setdefault("HEAR2ACT_CACHE", os.path.join(tempfile.gettempdir(), f"hear2act-test-cache-{os.getuid()}"))

# The speech tests need the speech extra (hibari-tts, praat-parselmouth, scipy); `make test`
# installs it. Without it they are not collected, rather than failing on import.
_SPEECH = ("hibari", "parselmouth", "scipy")
collect_ignore = [] if all(importlib.util.find_spec(m) for m in _SPEECH) else ["test_speech.py"]
