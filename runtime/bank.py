"""The budget itself (SPEC §5.4): how much of each limit is taken, and by whom.

A run takes from the bank before it spends: the worst case of a unit of work before the unit
starts, a call's worst case where its unit's hold cannot cover it; it gives back what it did not
use. The bank refuses (BudgetExhausted) a take that would pass a limit, so the limits hold
however many calls, runs or machines draw from it at once. What is taken and never given back
is what was spent.

A single run has a bank of its own. The cells of a sweep share one, so the sweep as a whole
never spends past its budget (runtime/sweep.py; on a cluster the bank lives in an actor,
runtime/executors/ray.py). Takes are booked per taker (a cell's label; "" for a single run):
a taker that starts again (a resumed run, or a cell retried after its worker died) first says
what it had spent, and whatever it had reserved and not settled is forgotten.

Time cannot be taken: a take that says how long its work is expected to last is refused when
the time left cannot hold it; the clock is the bank's, so a sweep's cells share one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from skopt.compiler.plan import Budget
from skopt.runtime.errors import BudgetExhausted


@dataclass(frozen=True, slots=True)
class Amount:
    """What a reservation holds against the limits."""

    calls: int = 0
    tokens: int = 0
    usd: float = 0.0

    def __add__(self, other: Amount) -> Amount:
        return Amount(self.calls + other.calls, self.tokens + other.tokens, self.usd + other.usd)

    def __sub__(self, other: Amount) -> Amount:
        return Amount(
            self.calls - other.calls,
            self.tokens - other.tokens,
            round(self.usd - other.usd, 12),  # no float drift left behind by release
        )

    def least(self, other: Amount) -> Amount:
        """Component by component, the smaller of the two."""
        return Amount(
            min(self.calls, other.calls), min(self.tokens, other.tokens), min(self.usd, other.usd)
        )

    def floor(self) -> Amount:
        """Negative components as 0."""
        return Amount(max(self.calls, 0), max(self.tokens, 0), max(self.usd, 0.0))

    @property
    def nothing(self) -> bool:
        return self.calls <= 0 and self.tokens <= 0 and self.usd <= 0


class Bank:
    """A budget and what its takers have taken from it. Every method is a coroutine, so that a
    bank in another process (an actor) serves the same protocol; none awaits anything here, so
    each runs whole, and a take is checked and booked at once."""

    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self._clock = clock
        self._start = clock()
        self._taken: dict[str, Amount] = {}

    async def begin(self, taker: str, spent: Amount, elapsed: float = 0.0) -> None:
        """`taker` starts (again) having spent `spent`: its unsettled takes are forgotten.
        `elapsed`: the time the budget has already counted (a resumed run's earlier sessions)."""
        self._taken[taker] = spent
        self._start = min(self._start, self._clock() - elapsed)

    async def take(self, taker: str, amount: Amount, seconds: float | None = None) -> None:
        """Take `amount` for `taker`, or refuse with BudgetExhausted. `seconds`: how long the
        work it pays for is expected to take (None: a call, whose time is not checked)."""
        over = self._over(self.taken + amount)
        if over:
            raise BudgetExhausted(over, f"the {over} budget cannot pay for the worst case")
        if seconds is not None:
            await self.check_time(seconds)
        self._taken[taker] = self._taken.get(taker, Amount()) + amount

    async def give(self, taker: str, amount: Amount) -> None:
        """Give back what was taken and not used."""
        self._taken[taker] = self._taken.get(taker, Amount()) - amount

    async def check_time(self, seconds: float = 0.0) -> None:
        """Refuse (BudgetExhausted) work expected to take `seconds` that the time left cannot
        hold: with nothing expected, once the time budget is used up."""
        limit = self.budget.time_s
        if limit is not None and self._clock() - self._start + seconds > limit:
            why = "cannot pay for the worst case" if seconds else "is used up"
            raise BudgetExhausted("time", f"the time budget {why}")

    @property
    def taken(self) -> Amount:
        return sum(self._taken.values(), Amount())

    def _over(self, total: Amount) -> str:
        b = self.budget
        if b.calls is not None and total.calls > b.calls:
            return "calls"
        if b.tokens is not None and total.tokens > b.tokens:
            return "tokens"
        if b.usd is not None and total.usd > b.usd + 1e-12:
            return "usd"
        return ""
