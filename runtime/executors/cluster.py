"""The Ray executor (`skopt run SWEEP --executor ray`): every cell of a sweep is a Ray task on
any node of a cluster, the sweep's budget and response cache live in one actor on the node
that launched the sweep, and the run folders are written where the local executor writes
them.

- **The cluster**: `address` (`--ray-address`, else `RAY_ADDRESS`) joins a running one;
  without either, a Ray instance is started on this machine for the sweep and stopped after.
- **How artifacts travel: shared storage.** A cell's task writes its run folder at the sweep
  root's absolute path and reads the recipe's files at theirs, so both must be on storage that
  every node mounts at the same path (an NFS or cluster file system, as Ray Tune's
  `storage_path` asks), and so must the folder the sweep is launched from: a cell's task works
  there, whatever its node's own working folder, so that the plan's relative paths mean what
  they mean here. Before any cell starts, a probe task on every node checks that it sees the
  sweep folder (a token the driver wrote), the launching folder and every input file; a node
  that does not is named and the sweep refused.
- **One budget, one cache**: the `Hub` actor holds the sweep's Bank and SharedAnswers and is
  pinned to the launching node, so that it outlives any worker; cells call it for every take
  and give of their budget and every claim and settle of an answer.
- **Faults**: a cell whose worker (or node) dies is retried by Ray on another worker
  (`RETRIES` times). The retry continues the cell from its folder (`--resume` semantics: its
  last saved state, every completed call answered from the cell's cache), after the dead
  attempt's lock is gone and after the hub forgot the attempt's unsettled reservations and
  claims. `--resume SWEEPDIR --executor ray` continues an interrupted sweep the same way.

Why Ray tasks and one actor rather than Ray Tune: a sweep's grid is already compiled into the
plan (Tune would derive it again), each cell already resumes exactly from its own folder
(Tune's checkpoints would be a second copy of that state), and the shared budget and cache
are actors Tune does not have. Early stopping is skopt's own, on the cells' gate scores.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from skopt.compiler.plan import AshaStop, Budget, Plan
from skopt.compiler.saved import inputs
from skopt.runtime.artifacts import RunFolder, write_json
from skopt.runtime.bank import Amount, Bank
from skopt.runtime.claim import FolderInUse
from skopt.runtime.early_stop import Rungs
from skopt.runtime.errors import BudgetExhausted
from skopt.runtime.executors import Cell, ExecutorUnavailable
from skopt.runtime.executors.local import run_cell
from skopt.runtime.exits import Exit, Outcome
from skopt.runtime.journal import Follower
from skopt.runtime.request import Completion
from skopt.runtime.run import FAILURES
from skopt.runtime.shared import Paid, Shared, SharedAnswers

RETRIES = 3  # attempts after the first when a cell's worker or node dies
LOCK_WAIT_S = 60.0  # how long a retried cell waits for its dead attempt's lock to go
CANCEL_WAIT_S = 30.0  # how long an interrupted sweep waits for its cells to journal it
LEASE_S = 4.0  # a cell unheard this long has died: the answers it was paying for are given up
FOLLOW_S = 0.25  # how often the launching process reads a cell's journal for its display
NODES = "ray.json"  # at the sweep's root: where each cell ran (the node it ended on), how long
Refusal = tuple[str, str] | None  # a BudgetExhausted as data: (limit, message)


class ClusterUnfit(ExecutorUnavailable):
    """A node cannot see the sweep's folder or the recipe's files."""


class RayExecutor:
    def __init__(self, address: str | None = None) -> None:
        # "local": always a new instance, never one that another program left running
        self.address = address or os.environ.get("RAY_ADDRESS") or "local"

    @contextlib.asynccontextmanager
    async def opened(self, plan: Plan, root: Path) -> AsyncIterator[RayRunner]:
        ray.init(
            address=self.address,
            include_dashboard=False,
            configure_logging=False,
            log_to_driver=False,
        )
        hub: Any = None
        try:
            here = ray.get_runtime_context().get_node_id()
            pinned = NodeAffinitySchedulingStrategy(node_id=here, soft=False)
            root = root.resolve()
            stop = plan.sweep.stop if plan.sweep else None
            hub = Hub.options(scheduling_strategy=pinned, num_cpus=0).remote(  # type: ignore[attr-defined]
                plan.budget.model_dump_json(), str(root), stop.model_dump_json() if stop else None
            )
            await probe(plan, root)
            yield RayRunner(hub, root)
        finally:
            if hub is not None:
                with contextlib.suppress(Exception):
                    await hub.close.remote()
                ray.kill(hub)
            ray.shutdown()


class RayRunner:
    def __init__(self, hub: Any, root: Path) -> None:
        self.hub, self.root = hub, root
        self.cells: dict[str, dict[str, object]] = {}  # where each cell ran, how long it took

    async def book(self, label: str, spent: Amount, paid: list[tuple[str, Paid]]) -> None:
        await self.hub.begin.remote(label, spent, 0.0)
        await self.hub.answers_begin.remote(label, paid)

    async def run(self, cell: Cell) -> Outcome:
        ref = cell_task.remote(
            cell.plan.model_dump_json(),
            str(Path.cwd()),
            cell.index,
            cell.label,
            str(cell.folder.root.resolve()),
            cell.no_cache,
            self.hub,
        )
        following = asyncio.ensure_future(follow(cell))
        submitted = time.time()
        try:
            end: CellEnd = await ref
        except asyncio.CancelledError:
            ray.cancel(ref)  # the cell's task takes it as Ctrl-C: journaled, resumable ...
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(ref), CANCEL_WAIT_S)  # ... once it ends
            raise
        finally:
            following.cancel()
        self.cells[cell.label] = {
            "node": end.node,
            "queued_s": round(end.started - submitted, 3),  # waiting for a free CPU
            "task_s": round(end.ended - end.started, 3),  # the task, start to end
            "seconds": round(time.time() - submitted, 3),  # submitted to its result here
        }
        write_json(self.root / NODES, {"cells": dict(sorted(self.cells.items()))})
        return Outcome(Exit(end.exit), cell.folder.root, end.message)


async def follow(cell: Cell) -> None:
    """Show a remote cell's progress here, from its journal (on the shared storage)."""
    if cell.display is None:
        return
    journal = Follower(cell.folder.events)
    while True:
        for event in journal.poll():
            cell.display.emit(event)
        await asyncio.sleep(FOLLOW_S)


# -- the probe --------------------------------------------------------------------------------


async def probe(plan: Plan, root: Path) -> None:
    """Refuse the sweep unless every node sees its folder and the recipe's files."""
    token = uuid.uuid4().hex
    mark = root / f".skopt-probe-{token[:8]}"
    mark.write_text(token, encoding="utf-8")
    needed = sorted({os.getcwd(), *(os.path.abspath(p) for p in inputs(plan))})
    try:
        nodes = [n for n in ray.nodes() if n["Alive"]]  # type: ignore[no-untyped-call]
        checks = [
            sees.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
            ).remote(str(mark), token, needed)
            for n in nodes
        ]
        found = await asyncio.gather(*checks)
    finally:
        mark.unlink(missing_ok=True)
    for node, missing in zip(nodes, found, strict=True):
        if missing:
            raise ClusterUnfit(
                f"node {node['NodeManagerAddress']} cannot see {', '.join(missing[:3])}: a"
                " sweep on Ray writes its run folders and reads the recipe's files at the same"
                " absolute paths on every node, so they must be on storage that every node"
                " mounts there (an NFS or cluster file system)"
            )


@ray.remote(num_cpus=0)
def sees(mark: str, token: str, needed: list[str]) -> list[str]:
    """What of the sweep this node cannot see: the folder (by the driver's token), files."""
    try:
        here = Path(mark).read_text(encoding="utf-8") == token
    except OSError:
        here = False
    missing = [] if here else [f"the sweep folder {Path(mark).parent}"]
    return missing + [p for p in needed if not os.path.exists(p)]


# -- a cell, on a worker ----------------------------------------------------------------------


@dataclass(frozen=True)
class CellEnd:
    """How a cell's task ended, where, and when it ran (this machine's clock, seconds)."""

    exit: int
    message: str
    node: str
    started: float
    ended: float


@ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)
def cell_task(
    plan_json: str, launched_in: str, index: int, label: str, folder: str, no_cache: bool, hub: Any
) -> CellEnd:
    """Run (or continue, on a retry) one cell in its folder. The task works in the folder the
    sweep was launched from (on the shared storage), so that the plan's relative paths mean
    what they meant there and the cell's files are the local executor's, byte for byte."""
    started = time.time()
    plan = Plan.model_validate_json(plan_json)
    cell = Cell(index, label, RunFolder(Path(folder)), plan, no_cache, None)
    shared = Shared(label, RemoteBank(hub), RemoteAnswers(hub), RemoteRungs(hub))
    address = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
    node = f"{address} {ray.get_runtime_context().get_node_id()[:12]}"
    home = os.getcwd()
    os.chdir(launched_in)  # a worker process runs one task at a time; it gets its folder back
    try:
        outcome = asyncio.run(_patiently(cell, shared))
        exit, message = int(outcome.exit), outcome.message
    except FAILURES as exc:
        exit, message = int(Exit.FAILED), str(exc)
    finally:
        os.chdir(home)
    return CellEnd(exit, message, node, started, time.time())


async def _patiently(cell: Cell, shared: Shared) -> Outcome:
    """The cell's run, once the lock of an attempt that died is gone; while it runs, it tells
    the hub it is alive."""
    beating = asyncio.ensure_future(_heartbeat(shared))
    deadline = time.monotonic() + LOCK_WAIT_S
    try:
        while True:
            try:
                return await run_cell(cell, shared)
            except FolderInUse:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
    finally:
        beating.cancel()


async def _heartbeat(shared: Shared) -> None:
    while True:
        await shared.answers.alive(shared.taker)
        await asyncio.sleep(LEASE_S / 4)


class RemoteBank:
    """The sweep's bank, in the hub (runtime/ledger.py's Funds)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub

    async def begin(self, taker: str, spent: Amount, elapsed: float = 0.0) -> None:
        await self.hub.begin.remote(taker, spent, elapsed)

    async def take(self, taker: str, amount: Amount, seconds: float | None = None) -> None:
        _raise(await self.hub.take.remote(taker, amount, seconds))

    async def give(self, taker: str, amount: Amount) -> None:
        await self.hub.give.remote(taker, amount)

    async def check_time(self, seconds: float = 0.0) -> None:
        _raise(await self.hub.check_time.remote(seconds))


class RemoteAnswers:
    """The sweep's cache, in the hub (runtime/shared.py's Answers)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub

    async def begin(self, taker: str, paid: list[tuple[str, Paid]]) -> None:
        await self.hub.answers_begin.remote(taker, paid)

    async def claim(self, taker: str, key: str) -> Completion | None:
        answer: Completion | None = await self.hub.claim.remote(taker, key)
        return answer

    async def settle(self, taker: str, key: str, paid: Paid | None) -> None:
        await self.hub.settle.remote(taker, key, paid)

    async def alive(self, taker: str) -> None:
        await self.hub.alive.remote(taker)


class RemoteRungs:
    """The sweep's early stopping, in the hub (runtime/early_stop.py's Stopper)."""

    def __init__(self, hub: Any) -> None:
        self.hub = hub

    async def goes_on(self, taker: str, step: int, total: int, score: float) -> bool:
        going: bool = await self.hub.goes_on.remote(taker, step, total, score)
        return going


def _raise(refusal: Refusal) -> None:
    if refusal is not None:
        raise BudgetExhausted(*refusal)


# -- the hub ----------------------------------------------------------------------------------


@ray.remote
class Hub:
    """The sweep's bank and shared answers in one actor, on the launching node."""

    def __init__(self, budget: str, root: str, stop: str | None) -> None:
        self.bank = Bank(Budget.model_validate_json(budget))
        self.answers = SharedAnswers(Path(root), lease_s=LEASE_S)
        self.rungs = Rungs(AshaStop.model_validate_json(stop), Path(root)) if stop else None

    async def begin(self, taker: str, spent: Amount, elapsed: float) -> None:
        await self.bank.begin(taker, spent, elapsed)

    async def take(self, taker: str, amount: Amount, seconds: float | None) -> Refusal:
        try:
            await self.bank.take(taker, amount, seconds)
        except BudgetExhausted as exc:
            return exc.limit, str(exc)
        return None

    async def give(self, taker: str, amount: Amount) -> None:
        await self.bank.give(taker, amount)

    async def check_time(self, seconds: float) -> Refusal:
        try:
            await self.bank.check_time(seconds)
        except BudgetExhausted as exc:
            return exc.limit, str(exc)
        return None

    async def answers_begin(self, taker: str, paid: list[tuple[str, Paid]]) -> None:
        await self.answers.begin(taker, paid)

    async def claim(self, taker: str, key: str) -> Completion | None:
        return await self.answers.claim(taker, key)

    async def settle(self, taker: str, key: str, paid: Paid | None) -> None:
        await self.answers.settle(taker, key, paid)

    async def alive(self, taker: str) -> None:
        await self.answers.alive(taker)

    async def goes_on(self, taker: str, step: int, total: int, score: float) -> bool:
        return self.rungs is None or await self.rungs.goes_on(taker, step, total, score)

    async def close(self) -> None:
        self.answers.close()
