"""skopt: train an agent's skill document like a neural network.

The names below are the Python API (`skopt.api`): `compile`, `run`, `resume`, `evaluate`,
`open_run`, their records and their errors. They are loaded on first use (PEP 562), so that
`import skopt.runtime` still loads no parser and `import skopt.compiler` no model SDK: this
file imports nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skopt.api import (
        CacheDamaged,
        CallFailed,
        CannotEvaluate,
        Diagnostic,
        EnvLoadError,
        EvalFailed,
        Evaluation,
        ExecutorUnavailable,
        Exit,
        FolderInUse,
        FolderRefused,
        Journal,
        LocalModelUnavailable,
        MissingKey,
        NotARunFolder,
        Plan,
        RecipeError,
        ReplayMiss,
        Report,
        RunRecord,
        RunResult,
        Scores,
        compile,
        evaluate,
        open_run,
        resume,
        run,
    )

__all__ = [
    "CacheDamaged",
    "CallFailed",
    "CannotEvaluate",
    "Diagnostic",
    "EnvLoadError",
    "EvalFailed",
    "Evaluation",
    "ExecutorUnavailable",
    "Exit",
    "FolderInUse",
    "FolderRefused",
    "Journal",
    "LocalModelUnavailable",
    "MissingKey",
    "NotARunFolder",
    "Plan",
    "RecipeError",
    "ReplayMiss",
    "Report",
    "RunRecord",
    "RunResult",
    "Scores",
    "compile",
    "evaluate",
    "open_run",
    "resume",
    "run",
]


def __getattr__(name: str) -> Any:
    """A name of the API, imported from `skopt.api` the first time it is asked for."""
    if name not in __all__:
        raise AttributeError(f"module 'skopt' has no attribute {name!r}")
    import skopt.api

    value = getattr(skopt.api, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
