"""Where a sweep's cells run: in this process (`local`, the default: side by side, at most
`--parallel` at a time) or on a Ray cluster (`ray`, runtime/executors/ray.py, an optional
extra). Either way every cell is an ordinary run folder under the sweep's root, and the cells
draw on one budget and one response cache (runtime/shared.py).

An executor opens a `Runner` for a sweep (a cluster joined or started, the shared budget and
cache made) and closes it when the sweep ends; the runner runs one cell to its outcome.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from skopt.compiler.plan import Plan
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.bank import Amount
from skopt.runtime.exits import Outcome
from skopt.runtime.run import Display
from skopt.runtime.shared import Paid

Name = Literal["local", "ray"]


@dataclass(frozen=True)
class Cell:
    """One cell to run: a new run of its plan in its folder, or the run there continued (the
    folder is a run folder already: a resumed sweep, or a retry after a worker died)."""

    index: int
    label: str  # "01", "02", ...: the taker of the shared budget and cache
    folder: RunFolder
    plan: Plan  # the sweep's plan with only this cell's job
    no_cache: bool
    display: Display | None


class Runner(Protocol):
    async def book(self, label: str, spent: Amount, paid: list[tuple[str, Paid]]) -> None:
        """Count what a cell of a resumed sweep spent before (a finished cell included), and
        take in the answers it paid for, before any cell starts."""

    async def run(self, cell: Cell) -> Outcome: ...


class Executor(Protocol):
    def opened(self, plan: Plan, root: Path) -> AbstractAsyncContextManager[Runner]: ...


class ExecutorUnavailable(Exception):
    """The executor asked for cannot run here (exit 2); the message says how to get it."""


def executor_for(name: Name, parallel: int = 2, address: str | None = None) -> Executor:
    """The executor of that name (`address`: a Ray cluster to join)."""
    if name == "ray":
        try:
            from skopt.runtime.executors.cluster import RayExecutor
        except ImportError:
            raise ExecutorUnavailable(
                "the ray executor needs Ray: pip install 'skopt[ray]'"
                " (in a checkout: pip install -e '.[ray]')"
            ) from None
        return RayExecutor(address)
    from skopt.runtime.executors.local import LocalExecutor

    return LocalExecutor(parallel)
