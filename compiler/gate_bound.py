"""How much a gate must see before it believes a candidate: a one-sided sign test on the gate
items (docs/decisions.md, "An honest gate").

The gate compares the candidate with the current skill item by item: the items it fixes (score
higher) against the items it breaks (score lower); items that score the same say nothing. Were
the candidate no better, each changed item would go either way with even odds, so the number
fixed is Binomial(fixed + broken, 1/2), and `luck` — the chance of fixing at least as many by
luck alone — is the test's p-value. The gate accepts at `confidence` c when luck ≤ 1 − c.

A step may score up to `tries` candidates (the next one only after the gate rejects one): each
is a chance for luck to pass, so each is tested at 1 − (1 − c) / n (Bonferroni), n the
candidates the step can score, counted before its first gate pass (`tries` at most), and the
chance that luck passes any of a step's candidates stays at most 1 − c.
"""

from __future__ import annotations

from math import comb

_SLACK = 1e-12  # 1 − 0.9 is 0.09999999999999998: a bound met exactly is met


def luck(fixed: int, broken: int) -> float:
    """P(at least `fixed` of `fixed + broken` coin flips land heads): 1.0 when nothing changed."""
    changed = fixed + broken
    if changed == 0:
        return 1.0
    return sum(comb(changed, k) for k in range(fixed, changed + 1)) / float(2**changed)


def believed(fixed: int, broken: int, confidence: float) -> bool:
    """Whether the gate believes `fixed` against `broken` at `confidence` (0: always)."""
    return confidence <= 0 or luck(fixed, broken) <= 1 - confidence + _SLACK


def tested_at(confidence: float, tries: int) -> float:
    """The confidence each of a step's `tries` candidates is tested at."""
    return 1 - (1 - confidence) / tries if confidence > 0 else 0.0


def fewest_fixes(confidence: float, tries: int = 1) -> int:
    """The fewest items fixed, none broken, that the gate believes of one of `tries` candidates
    (0 when the test is off)."""
    if confidence <= 0:
        return 0
    fixed = 1
    while not believed(fixed, 0, tested_at(confidence, tries)):
        fixed += 1
    return fixed


def stated(confidence: float, tries: int) -> str:
    """How reasons and the plan name the test: `confidence 90%`, `… over 3 tries`."""
    return f"confidence {confidence:.0%}" + (f" over {tries} tries" if tries > 1 else "")
