"""Evidence-grounded verification of a perceiver's cited acoustic claims.

Every claim (feature, value, unit, span, source) is re-derived from the
waveform and checked by :func:`hear2act_env.speech.claims.check_evidence`
(provenance, span, value within 15 % or the unit's absolute floor; the rules
are documented there, the one home of claim checking). This module extracts a
clip's features once and reports on all of its claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .claims import REL_TOL, ClaimCheck, check_evidence
from .features import Evidence, extract


@dataclass(frozen=True)
class VerificationReport:
    checks: tuple[ClaimCheck, ...]

    @property
    def pass_rate(self) -> float:
        return sum(c.passed for c in self.checks) / len(self.checks) if self.checks else 1.0

    @property
    def failed(self) -> tuple[ClaimCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)


def verify(claims: tuple[Evidence, ...] | list[Evidence], audio: np.ndarray, sr: int = 16_000,
           rel_tol: float = REL_TOL) -> VerificationReport:
    """Re-derive the clip's features once and check every claim against them."""
    f = extract(audio, sr)
    return VerificationReport(tuple(check_evidence(c, f, rel_tol) for c in claims))


__all__ = ["VerificationReport", "verify"]
