"""Shared test configuration: a private audio cache per test session."""

from __future__ import annotations

import os
import tempfile

# Tests must not read or fill a user's real cache: point the default at a fresh folder.
os.environ.setdefault("HEAR2ACT_CACHE", tempfile.mkdtemp(prefix="hear2act-test-cache-"))
