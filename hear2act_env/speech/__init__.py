"""Speech: delivery model, renderers, audio cache, acoustic evidence, perception.

Everything heavy (TTS engines, Praat, scipy) is imported on use; a missing
package raises :class:`SpeechDependencyError` naming the exact ``pip install``.
"""

from __future__ import annotations

from .deps import SpeechDependencyError, require

__all__ = ["SpeechDependencyError", "require"]
