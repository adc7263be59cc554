"""`kind = math`: numeric answers (`metric = numeric(tol = 1e-6)`).

The last number in the extracted answer is compared with the last number in each gold answer:
equal within the absolute tolerance `tol`, or within a relative 1e-9. A number may carry a sign
(`-`, `+`, `−`), thousands commas (`1,234.5`), decimals (`.5`), an exponent (`2e-3`), be a
simple fraction (`3/4`) or a percentage (`12.5%` means 12.5). A hyphen between words or numbers
is not a sign (`pages 3-5` ends in 5). No number, or a fraction over zero, scores 0. hard = soft.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Score, check_metric, read

METRICS = ("numeric",)
DEFAULT_TOL = 1e-6
REL_TOL = 1e-9

_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(
    rf"(?P<sign>(?<![\w.])[-+\u2212])?(?<![\w.])(?P<num>{_DIGITS})"
    rf"(?:[eE](?P<exp>[-+]?\d+))?(?:\s*/\s*(?P<den>{_DIGITS}))?(?:\s*%)?"
)


@dataclass(frozen=True, slots=True)
class MathEnv:
    name: str
    answer_format: str
    tol: float
    strict: bool

    def score(self, item: Item, output: str) -> Score:
        reading = read(output, self.answer_format, self.strict)
        value = last_number(reading.answer)
        hard = float(value is not None and any(self._equal(value, g) for g in item.answers))
        return Score(hard, hard, reading.answer, followed=reading.followed)

    def _equal(self, value: float, gold: str) -> bool:
        expected = last_number(gold)
        return expected is not None and math.isclose(
            value, expected, rel_tol=REL_TOL, abs_tol=self.tol
        )


def last_number(text: str) -> float | None:
    """The value of the last number in `text` that has a finite value, or None."""
    for match in reversed(list(_NUMBER.finditer(text))):
        value = _value(match)
        if value is not None:
            return value
    return None


def _value(match: re.Match[str]) -> float | None:
    try:
        value = float(f"{_plain(match['num'])}e{match['exp'] or 0}")
        if match["den"] is not None:
            value /= float(_plain(match["den"]))
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    value = -value if match["sign"] in ("-", "\u2212") else value
    return value if math.isfinite(value) else None


def _plain(digits: str) -> str:
    return digits.replace(",", "")


def build(settings: EnvSettings) -> MathEnv:
    check_metric(settings, METRICS)
    tol = settings.metric_args.get("tol", DEFAULT_TOL)
    return MathEnv(settings.name, settings.answer_format, tol, settings.strict_format)
