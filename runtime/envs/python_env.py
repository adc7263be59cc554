"""`kind = python("pkg.mod:Env")`: a user's own environment (docs/envs.md).

Loading imports `pkg.mod`, takes its attribute `Env` (a dotted path is allowed, `mod:Outer.Env`)
and calls it with no arguments. The instance must have `score(item, output)` returning a float
(hard = soft = value) or a pair (hard, soft); it may set `answer_format` (tag | last_line | raw),
which then replaces the recipe's. Anything that goes wrong while loading is an `EnvLoadError`
naming the entry. The user's `score` gets the whole output; skopt extracts `Score.answer`.

Scoring never raises: an exception in the user's `score`, or a result that is not a number or a
pair of numbers, scores 0 with `Score.error` saying why. Values are clamped to [0, 1] (NaN is
0) and `hard` is rounded to pass (≥ 0.5) or fail.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import ANSWER_FORMATS, EnvLoadError, Score, read

UserScore = Callable[[Item, str], object]
MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class PythonEnv:
    name: str
    answer_format: str
    entry: str
    user_score: UserScore

    def score(self, item: Item, output: str) -> Score:
        reading = read(output, self.answer_format, strict=False)  # the user scores the output
        try:
            hard, soft = _hard_soft(self.user_score(item, output))
        except Exception as exc:
            error = f"{self.entry}: {_describe(exc)}"
            return Score(0.0, 0.0, reading.answer, error=error, followed=reading.followed)
        return Score(hard, soft, reading.answer, followed=reading.followed)


def _hard_soft(result: object) -> tuple[float, float]:
    if isinstance(result, tuple) and len(result) == 2:
        hard, soft = _unit(result[0]), _unit(result[1])
    elif isinstance(result, int | float):
        hard = soft = _unit(result)
    else:
        raise TypeError(
            f"score returned {type(result).__name__}; expected a float or a (hard, soft) pair"
        )
    return (1.0 if hard >= 0.5 else 0.0), soft


def _unit(value: object) -> float:
    if not isinstance(value, int | float):
        raise TypeError(f"score returned a {type(value).__name__} where a number belongs")
    number = float(value)
    return 0.0 if math.isnan(number) else min(1.0, max(0.0, number))


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception whose __str__ itself fails
        text = type(exc).__name__
    return text[:MAX_ERROR_CHARS]


# -- loading ----------------------------------------------------------------------------------


def build(settings: EnvSettings) -> PythonEnv:
    entry = str(settings.kind_args.get("entry", ""))
    where = f"env '{settings.name}': python({entry!r})"
    module_name, attribute = _parse_entry(entry, where)
    instance = _instantiate(_attribute(_import(module_name, where), attribute, where), where)
    user_score = getattr(instance, "score", None)
    if not callable(user_score):
        raise EnvLoadError(f"{where}: {attribute} has no method score(item, output)")
    answer_format = getattr(instance, "answer_format", settings.answer_format)
    if answer_format not in ANSWER_FORMATS:
        raise EnvLoadError(
            f"{where}: answer_format = {answer_format!r} (expected tag, last_line or raw)"
        )
    return PythonEnv(settings.name, str(answer_format), entry, user_score)


def _parse_entry(entry: str, where: str) -> tuple[str, str]:
    module_name, colon, attribute = entry.partition(":")
    if not (colon and module_name.strip() and attribute.strip()):
        raise EnvLoadError(f'{where}: the entry must read "package.module:ClassName"')
    return module_name.strip(), attribute.strip()


def _import(module_name: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except Exception as exc:  # a missing module, or one that fails while it runs
        raise EnvLoadError(f"{where}: cannot import {module_name} ({_describe(exc)})") from exc


def _attribute(module: ModuleType, path: str, where: str) -> object:
    found: object = module
    for part in path.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise EnvLoadError(f"{where}: {module.__name__} has no attribute {path}") from None
    return found


def _instantiate(factory: object, where: str) -> object:
    if not callable(factory):
        raise EnvLoadError(f"{where}: {factory!r} is not a class")
    try:
        return factory()
    except Exception as exc:
        raise EnvLoadError(f"{where}: creating it failed ({_describe(exc)})") from exc
