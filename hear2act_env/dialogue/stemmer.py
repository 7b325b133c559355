"""The Porter2 ("Snowball English") stemmer, pure Python, no dependencies.

Written from the published algorithm description
(https://snowballstem.org/algorithms/english/stemmer.html) by Martin Porter,
whose Snowball algorithms and their descriptions are released under the
3-clause BSD licence (https://snowballstem.org/license.html):

    Copyright (c) 2001, Dr Martin Porter; Copyright (c) 2004,2005, Richard Boulton;
    Copyright (c) 2013, Yoshiki Shibukawa; Copyright (c) 2006,2007,2009,2010,2011,2014-2019,
    Olly Betts. All rights reserved. Redistribution and use in source and binary forms,
    with or without modification, are permitted provided that the conditions of the
    BSD 3-clause licence are met.

It is vendored (rather than depending on ``snowballstemmer``) so the default
question matcher stays dependency-free; ``tests/test_matching.py`` checks it
against ``snowballstemmer`` when that package happens to be installed.
Only lower-case ASCII words are expected (the matcher lower-cases first).
"""

from __future__ import annotations

from functools import lru_cache

_VOWELS = frozenset("aeiouy")
_DOUBLES = ("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt")
_LI_ENDING = frozenset("cdeghkmnrt")
_EXCEPTIONS = {
    "skis": "ski", "skies": "sky", "idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
    "singly": "singl", "sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas",
    "cosmos": "cosmos", "bias": "bias", "andes": "andes",
}
# Stems left alone in step 1b ("proceed", "inning", "evening" keep their endings).
_KEEP_EED = frozenset({"succ", "proc", "exc"})
_KEEP_ING = frozenset({"even", "cann", "inn", "earr", "herr", "out"})
_PREFIXES = ("arsen", "commun", "emerg", "gener", "inter", "later", "organ", "past", "univers")
_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("abli", "able"),
    ("entli", "ent"), ("ization", "ize"), ("izer", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("aliti", "al"), ("alli", "al"), ("fulness", "ful"), ("ousli", "ous"),
    ("ousness", "ous"), ("iveness", "ive"), ("iviti", "ive"), ("biliti", "ble"), ("bli", "ble"),
    ("fulli", "ful"), ("lessli", "less"), ("ogist", "og"), ("ogi", "og"), ("li", ""),
)
_STEP2 = tuple(sorted(_STEP2, key=lambda p: -len(p[0])))
_STEP3 = (
    ("ational", "ate"), ("tional", "tion"), ("alize", "al"), ("icate", "ic"), ("iciti", "ic"),
    ("ative", ""), ("ical", "ic"), ("ness", ""), ("ful", ""),
)
_STEP4 = tuple(sorted(
    ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ism", "ate",
     "iti", "ous", "ive", "ize", "ion"),
    key=lambda s: -len(s),
))


def _regions(w: str) -> tuple[int, int]:
    """Start indices of R1 and R2."""
    def after(start: int) -> int:
        for i in range(start + 1, len(w)):
            if w[i] not in _VOWELS and w[i - 1] in _VOWELS:
                return i + 1
        return len(w)

    for prefix in _PREFIXES:
        if w.startswith(prefix):
            r1 = len(prefix)
            break
    else:
        r1 = after(0)
    return r1, after(r1) if r1 < len(w) else len(w)


def _short_syllable_end(w: str) -> bool:
    if len(w) == 2 and w[0] in _VOWELS and w[1] not in _VOWELS:
        return True
    return w.endswith("past") or (
        len(w) >= 3 and w[-3] not in _VOWELS and w[-2] in _VOWELS
        and w[-1] not in _VOWELS and w[-1] not in "wxY"
    )


def _has_vowel(s: str) -> bool:
    return any(c in _VOWELS for c in s)


def _step1a(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith(("ied", "ies")):
        return w[:-2] if len(w) > 4 else w[:-1]
    if w.endswith(("us", "ss")):
        return w
    if w.endswith("s") and _has_vowel(w[:-2]):
        return w[:-1]
    return w


def _step1b(w: str, r1: int) -> str:
    for suf in ("eedly", "eed"):
        if w.endswith(suf):
            stem = w[: -len(suf)]
            return stem + "ee" if len(stem) >= r1 and stem not in _KEEP_EED else w
    for suf in ("ingly", "edly", "ing", "ed"):
        if w.endswith(suf):
            stem = w[: -len(suf)]
            if suf == "ing":
                if len(stem) == 2 and stem[1] == "y" and stem[0] not in _VOWELS:
                    return stem[0] + "ie"  # dying -> die
                if stem in _KEEP_ING:
                    return w
            if not _has_vowel(stem):
                return w
            if stem.endswith(("at", "bl", "iz")):
                return stem + "e"
            if stem.endswith(_DOUBLES):
                return stem if len(stem) == 3 and stem[0] in "aeo" else stem[:-1]  # "added" -> "add"
            if r1 == len(stem) and _short_syllable_end(stem):
                return stem + "e"
            return stem
    return w


def _replace_in(w: str, table: tuple[tuple[str, str], ...], r1: int, r2: int) -> str:
    for suf, rep in table:
        if w.endswith(suf):
            if len(w) - len(suf) < r1:
                return w
            if suf == "ogi" and not w[:-3].endswith("l"):
                return w
            if suf == "li" and (len(w) < 3 or w[-3] not in _LI_ENDING):
                return w
            if suf == "ative" and len(w) - len(suf) < r2:
                return w
            return w[: -len(suf)] + rep
    return w


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Porter2 stem of one lower-case word ("layovers" -> "layov", "cancelled" -> "cancel")."""
    if len(word) <= 2:
        return word
    if word in _EXCEPTIONS:
        return _EXCEPTIONS[word]
    w = word.lstrip("'")
    if w.startswith("y"):
        w = "Y" + w[1:]
    w = w[0] + "".join("Y" if c == "y" and w[i] in _VOWELS else c for i, c in enumerate(w[1:]))
    r1, r2 = _regions(w)
    for suf in ("'s'", "'s", "'"):
        if w.endswith(suf):
            w = w[: -len(suf)]
            break
    w = _step1a(w)
    w = _step1b(w, r1)
    if len(w) > 2 and w[-1] in "yY" and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    w = _replace_in(w, _STEP2, r1, r2)
    w = _replace_in(w, _STEP3, r1, r2)
    for suf in _STEP4:
        if w.endswith(suf):
            if len(w) - len(suf) >= r2 and (suf != "ion" or w[:-3].endswith(("s", "t"))):
                w = w[: -len(suf)]
            break
    if w.endswith("e"):
        if len(w) - 1 >= r2 or (len(w) - 1 >= r1 and not _short_syllable_end(w[:-1])):
            w = w[:-1]
    elif w.endswith("ll") and len(w) - 1 >= r2:
        w = w[:-1]
    return w.replace("Y", "y")
