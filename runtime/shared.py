"""What the cells of a sweep share besides the recipe: one budget (runtime/bank.py) and one
response cache, so that the sweep never spends past its budget and an identical request (same
model, parameters, messages and sample) is paid once, whichever cell asks it first.

`SharedAnswers` is the sweep's cache: `cache.sqlite` at the sweep's root, each row marked with
the cell that paid for it, and the requests being paid for right now. A cell asks it before it
pays (`claim`): an answer already there is free; a request another cell is paying for is
waited for; otherwise the asker pays and `settle`s afterwards, with the answer or without one
(a failure), which wakes whoever waits. A cell that starts again (`begin`: resumed, or retried
after its worker died) gives up the claims it left unsettled.

Every method is a coroutine, so that the same object serves the cells in this process (the
local executor) or, inside an actor, cells on other machines (runtime/executors/ray.py).
A cell's own cache still receives every answer it used, so its folder stays a whole run folder
(`--resume`, `report`, `review` work on it alone).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from skopt.runtime.cache import Origin, ResponseCache
from skopt.runtime.early_stop import Stopper
from skopt.runtime.ledger import Funds
from skopt.runtime.request import Completion

CACHE = "cache.sqlite"


class Answers(Protocol):
    """A cache shared by several runs (SharedAnswers, here or in another process)."""

    async def begin(self, taker: str, paid: list[tuple[str, Paid]]) -> None: ...
    async def claim(self, taker: str, key: str) -> Completion | None: ...
    async def settle(self, taker: str, key: str, paid: Paid | None) -> None: ...
    async def alive(self, taker: str) -> None: ...


@dataclass(frozen=True)
class Paid:
    """An answer a cell paid for, as the cache stores it."""

    content_key: str
    origin: Origin
    request: str  # the canonical request
    completion: Completion


@dataclass(frozen=True)
class Shared:
    """What a cell of a sweep draws on besides its own folder: the sweep's budget and cache,
    under the cell's label."""

    taker: str
    bank: Funds
    answers: Answers
    rungs: Stopper | None = None  # the sweep's early stopping, if it has one


class SharedAnswers:
    """`lease_s`: how long a cell may go unheard before its claims are given up (None: never;
    the cells of the local executor live and die with this process). Cells on other machines
    say they are alive (`alive`) while they run, so that a cell whose worker died never keeps
    the others waiting for an answer it will not bring."""

    def __init__(self, root: Path, lease_s: float | None = None) -> None:
        self.cache = ResponseCache(root / CACHE, run="")
        self.lease_s = lease_s
        self._pending: dict[str, tuple[str, asyncio.Future[Completion | None]]] = {}
        self._heard: dict[str, float] = {}

    async def alive(self, taker: str) -> None:
        self._heard[taker] = time.monotonic()

    async def begin(self, taker: str, paid: list[tuple[str, Paid]]) -> None:
        """`taker` starts (again) with the answers it had paid for (its own cache's): they are
        the sweep's now, however its last attempt ended (even killed before it could share
        them); what it claimed and never settled is given up."""
        for key, answer in paid:
            await self.settle(taker, key, answer)
        for key, (who, _) in list(self._pending.items()):
            if who == taker:
                await self.settle(taker, key, None)

    async def claim(self, taker: str, key: str) -> Completion | None:
        """The answer to `key` if the sweep has it (waiting while another cell pays for it);
        None: `taker` pays, and settles afterwards."""
        await self.alive(taker)
        while True:
            found = self.cache.get(key)
            if found is not None:
                return found
            pending = self._pending.get(key)
            if pending is None:
                self._pending[key] = (taker, asyncio.get_running_loop().create_future())
                return None
            payer, answer = pending[0], await self._wait(pending[1])
            if answer is not None:
                return answer
            if self._gone(payer):
                await self.settle(payer, key, None)  # ... and this asker claims it anew

    async def _wait(self, answer: asyncio.Future[Completion | None]) -> Completion | None:
        """The answer, or None once a lease's length has passed without one."""
        if self.lease_s is None:
            return await asyncio.shield(answer)
        try:
            return await asyncio.wait_for(asyncio.shield(answer), self.lease_s)
        except TimeoutError:
            return None

    def _gone(self, taker: str) -> bool:
        heard = self._heard.get(taker)
        return self.lease_s is not None and (
            heard is None or time.monotonic() - heard > self.lease_s
        )

    async def settle(self, taker: str, key: str, paid: Paid | None) -> None:
        if paid is not None:
            self.cache.put(
                key, paid.content_key, paid.origin, paid.request, paid.completion, run=taker
            )
        pending = self._pending.pop(key, None)
        if pending is not None and not pending[1].done():
            pending[1].set_result(paid.completion if paid is not None else None)

    def close(self) -> None:
        self.cache.close()


def paid_in(cache: ResponseCache) -> list[tuple[str, Paid]]:
    """The answers a run paid for, from its own cache, as the sweep's cache takes them in."""
    return [(key, Paid(content, origin, request, c)) for key, content, origin, request, c in
            cache.paid_requests()]  # fmt: skip
