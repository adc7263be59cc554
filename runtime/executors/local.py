"""The local executor: a sweep's cells as tasks of this process's event loop, at most
`parallel` at a time, on one budget (a Bank) and one response cache (SharedAnswers) that live
here too."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from skopt.compiler.plan import Plan
from skopt.runtime.bank import Amount, Bank
from skopt.runtime.claim import read_marker
from skopt.runtime.early_stop import Rungs
from skopt.runtime.executors import Cell
from skopt.runtime.exits import Outcome
from skopt.runtime.run import resume_job, start_job
from skopt.runtime.shared import Paid, Shared, SharedAnswers


class LocalExecutor:
    def __init__(self, parallel: int = 2) -> None:
        self.parallel = max(1, parallel)

    @contextlib.asynccontextmanager
    async def opened(self, plan: Plan, root: Path) -> AsyncIterator[LocalRunner]:
        answers = SharedAnswers(root)
        stop = plan.sweep.stop if plan.sweep else None
        rungs = Rungs(stop, root) if stop else None
        try:
            yield LocalRunner(Bank(plan.budget), answers, rungs, asyncio.Semaphore(self.parallel))
        finally:
            answers.close()


class LocalRunner:
    def __init__(
        self,
        bank: Bank,
        answers: SharedAnswers,
        rungs: Rungs | None,
        limit: asyncio.Semaphore,
    ) -> None:
        self.bank, self.answers, self.rungs, self.limit = bank, answers, rungs, limit

    async def book(self, label: str, spent: Amount, paid: list[tuple[str, Paid]]) -> None:
        await self.bank.begin(label, spent)
        await self.answers.begin(label, paid)

    async def run(self, cell: Cell) -> Outcome:
        async with self.limit:
            shared = Shared(cell.label, self.bank, self.answers, self.rungs)
            return await run_cell(cell, shared)


async def run_cell(cell: Cell, shared: Shared) -> Outcome:
    """A cell's run: continued when its folder holds one, else new."""
    if read_marker(cell.folder.root) is not None:
        return await resume_job(cell.folder.root, cell.display, shared=shared)
    return await start_job(cell.plan, cell.folder, cell.display, cell.no_cache, shared=shared)
