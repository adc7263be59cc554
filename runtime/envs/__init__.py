"""Environments: how the target's output on an item is scored (SPEC §2.4 `env`, §5.1).

This package owns the contract every env kind meets: `Env` (a name, the answer format the
rollout prompt states, and `score`), the `Score` it returns, `read` (the answer out of an
output, per answer format, and whether the output followed that format) and `env_for`, which
builds the env a compiled `EnvSettings` names.
One module per kind: `qa`, `classify`, `math`, `synthetic`, `python_env` (a user's own env).

The answer format belongs to the env, never to the skill: the rollout template states it in the
user message and `read` reads it back. An output that ignores the format is not wrong for
that alone: without `strict_format`, an output with no complete <answer> tag is read from its
last non-blank line (as SkillOpt does), and the score records that the format was not followed,
so that the optimizer's evidence tells a failure of format from one of content. Scoring never
raises on any model output.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings

ANSWER_FORMATS = ("tag", "last_line", "raw")

# No `import math` here: the submodule `envs.math` becomes this package's attribute `math`.
# ASCII-only case folding, so that no Unicode look-alike (the Kelvin sign for "k") opens a tag.
_OPEN = re.compile(r"<answer\s*>", re.IGNORECASE | re.ASCII)
_CLOSE = re.compile(r"</answer\s*>", re.IGNORECASE | re.ASCII)


@dataclass(frozen=True, slots=True)
class Score:
    """One output's score. `hard` is pass/fail (0 or 1), `soft` partial credit in [0, 1],
    `answer` what was extracted from the output, `followed` whether the output gave it in the
    stated answer format, `error` why a user env could not score it."""

    hard: float
    soft: float
    answer: str
    error: str | None = None
    followed: bool = True

    def __post_init__(self) -> None:
        if self.hard not in (0.0, 1.0):
            raise ValueError(f"hard score must be 0 or 1, not {self.hard!r}")
        if not 0.0 <= self.soft <= 1.0:  # also refuses NaN
            raise ValueError(f"soft score must lie in [0, 1], not {self.soft!r}")


class Env(Protocol):
    """What the runtime needs of an environment."""

    @property
    def name(self) -> str: ...

    @property
    def answer_format(self) -> str: ...

    def score(self, item: Item, output: str) -> Score: ...


class EnvLoadError(Exception):
    """An env that cannot be built: a user env that does not import, or a metric its kind lacks.
    The message names the env and, for `python(...)`, the entry."""


@dataclass(frozen=True, slots=True)
class Reading:
    """An output's answer, and whether the output gave it in the stated format."""

    answer: str
    followed: bool


def read(output: str, answer_format: str, strict: bool) -> Reading:
    """The answer in a model output (`extract`); with `tag` and no complete tag, `strict` reads
    nothing and lenient reading takes the last non-blank line. Either way: not followed."""
    if answer_format == "tag" and _last_tagged(output) is None:
        return Reading("" if strict else _last_line(output), False)
    return Reading(extract(output, answer_format), True)


def extract(output: str, answer_format: str) -> str:
    """The answer in a model output: `tag` the content of the last complete <answer>…</answer>
    ("" without one), `last_line` the last non-blank line, `raw` the whole output; stripped."""
    if answer_format == "tag":
        return _last_tagged(output) or ""
    if answer_format == "last_line":
        return _last_line(output)
    if answer_format == "raw":
        return output.strip()
    raise ValueError(f"unknown answer format {answer_format!r} (expected tag, last_line or raw)")


def _last_tagged(output: str) -> str | None:
    """The last complete tag's content; None without one."""
    # Linear on any input: a regex like <answer>(.*?)</answer> is quadratic on many open tags.
    closes = [m.start() for m in _CLOSE.finditer(output)]
    if not closes:
        return None
    for opening in reversed(list(_OPEN.finditer(output))):
        after = bisect_left(closes, opening.end())
        if after < len(closes):
            return output[opening.end() : closes[after]].strip()
    return None


def _last_line(output: str) -> str:
    text = output.rstrip()  # trailing blank lines go; the last line left holds text
    return text[text.rfind("\n") + 1 :].strip()


def check_metric(settings: EnvSettings, allowed: tuple[str, ...]) -> None:
    """Refuse a metric that the env's kind does not score with."""
    if settings.metric not in allowed:
        raise EnvLoadError(
            f"env '{settings.name}': kind {settings.kind} scores with {' | '.join(allowed)}, "
            f"not {settings.metric}"
        )


def env_for(settings: EnvSettings) -> Env:
    """The env that `settings.kind` names. Raises EnvLoadError when it cannot be built."""
    build = _builders().get(settings.kind)
    if build is None:
        raise EnvLoadError(f"env '{settings.name}': unknown kind {settings.kind!r}")
    return build(settings)


def _builders() -> dict[str, Callable[[EnvSettings], Env]]:
    # Imported here: each kind module imports Score and extract from this package.
    from skopt.runtime.envs import classify, python_env, qa, synthetic
    from skopt.runtime.envs import math as numeric

    return {
        "qa": qa.build,
        "classify": classify.build,
        "math": numeric.build,
        "synthetic": synthetic.build,
        "python": python_env.build,
    }


__all__ = [
    "ANSWER_FORMATS",
    "Env",
    "EnvLoadError",
    "Reading",
    "Score",
    "check_metric",
    "env_for",
    "extract",
    "read",
]
