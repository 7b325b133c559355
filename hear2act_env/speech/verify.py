"""Evidence-grounded verification of a perceiver's cited acoustic claims.

Following the deterministic checks of evidence-grounded emotion reasoning
(seed paper 002, §3.2.1): every claim (feature, value, unit, span, source)
is re-derived from the waveform and checked, without judging whether the
interpretation is right.

* provenance: the source is a known extractor, the feature and unit are ones
  it produces;
* span: inside the clip, start < end, and (for measured spans) within
  ``SPAN_TOL`` seconds of the span the extractor itself reports;
* value: within 15 % relative tolerance of the re-derived value. Values near
  zero make a relative test meaningless (a +0.1 st final movement re-derived
  as +0.12 st is 20 % off), so each unit also has a small absolute floor,
  ``ABS_FLOOR``; a claim passes when it is within either.

A failed claim is attributed to the component that produced it ("perceiver"
for a wrong value or span, "provenance" for an unknown source/feature/unit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import NAMES, UNITS, AcousticFeatures, Evidence, extract

REL_TOL = 0.15
SPAN_TOL = 0.03  # seconds: three analysis frames
ABS_FLOOR = {"Hz": 1.0, "st": 0.25, "st/s": 0.25, "dB": 0.5, "syll/s": 0.2, "s": 0.02}
SOURCES = {"praat": frozenset((*NAMES, "pause"))}


@dataclass(frozen=True)
class ClaimCheck:
    claim: Evidence
    passed: bool
    reason: str  # "" when passed
    derived: float | None
    component: str  # who is to blame when it failed


@dataclass(frozen=True)
class VerificationReport:
    checks: tuple[ClaimCheck, ...]

    @property
    def pass_rate(self) -> float:
        return sum(c.passed for c in self.checks) / len(self.checks) if self.checks else 1.0

    @property
    def failed(self) -> tuple[ClaimCheck, ...]:
        return tuple(c for c in self.checks if not c.passed)


def within(claimed: float, derived: float, unit: str, rel_tol: float = REL_TOL) -> bool:
    """Relative tolerance, or the unit's absolute floor for values near zero."""
    diff = abs(claimed - derived)
    return diff <= rel_tol * abs(derived) + 1e-9 or diff <= ABS_FLOOR.get(unit, 0.0) + 1e-9


def _span_ok(span: tuple[float, float], duration: float) -> str:
    a, b = span
    if not (np.isfinite(a) and np.isfinite(b)):
        return "span is not finite"
    if a < -1e-9 or b > duration + SPAN_TOL:
        return f"span {a:.3f}-{b:.3f} s lies outside the clip (0-{duration:.3f} s)"
    if b < a:
        return f"span ends before it starts ({a:.3f} > {b:.3f})"
    return ""


def _derived_span(feature: str, f: AcousticFeatures) -> tuple[float, float]:
    if feature == "f0_final":
        return f.final_span
    if feature == "lead_pause":
        return (0.0, f.lead_pause)
    if feature == "pause_total":
        return (0.0, f.duration)
    return f.speech_span


def check_claim(claim: Evidence, f: AcousticFeatures, rel_tol: float = REL_TOL) -> ClaimCheck:
    """One claim against the re-derived features of its clip."""
    known = SOURCES.get(claim.source)
    if known is None:
        return ClaimCheck(claim, False, f"unknown source {claim.source!r}", None, "provenance")
    if claim.feature not in known:
        reason = f"{claim.source} does not produce {claim.feature!r}"
        return ClaimCheck(claim, False, reason, None, "provenance")
    unit = "s" if claim.feature == "pause" else UNITS[claim.feature]
    if claim.unit != unit:
        return ClaimCheck(claim, False, f"unit {claim.unit!r}, expected {unit!r}", None, "provenance")
    bad_span = _span_ok(claim.span, f.duration)
    if bad_span:
        return ClaimCheck(claim, False, bad_span, None, "perceiver")
    if claim.feature == "pause":
        a, b = claim.span
        overlap = max((min(b, pb) - max(a, pa) for pa, pb in f.pauses), default=0.0)
        if overlap < (1 - rel_tol) * (b - a):
            return ClaimCheck(claim, False, f"no silence at {a:.3f}-{b:.3f} s", overlap, "perceiver")
        derived = b - a
    else:
        derived = float(getattr(f, claim.feature))
        da, db = _derived_span(claim.feature, f)
        if abs(claim.span[0] - da) > SPAN_TOL or abs(claim.span[1] - db) > SPAN_TOL:
            return ClaimCheck(claim, False, f"span {claim.span} differs from the measured {(da, db)}",
                              derived, "perceiver")
    if not within(claim.value, derived, unit, rel_tol):
        return ClaimCheck(claim, False, f"value {claim.value:.3f} {unit} vs re-derived {derived:.3f}",
                          derived, "perceiver")
    return ClaimCheck(claim, True, "", derived, "")


def verify(claims: tuple[Evidence, ...] | list[Evidence], audio: np.ndarray, sr: int = 16_000,
           rel_tol: float = REL_TOL) -> VerificationReport:
    """Re-derive the clip's features once and check every claim against them."""
    f = extract(audio, sr)
    return VerificationReport(tuple(check_claim(c, f, rel_tol) for c in claims))
