"""A run's budget accounting: what it spent, per role and phase, and the reservations of worst
cases it draws from its bank (runtime/bank.py: its own, or a sweep's shared by every cell).

Work starts only after its worst case is reserved, so the limits on calls, tokens and USD hold
however many calls run at once. Reservations come at two levels:

- a **hold**: the worst case of a unit of work (the baseline, a step with the epoch-boundary
  phases before it, the final test), taken from the bank before the unit starts. The bank
  refuses (BudgetExhausted) when it would pass a limit, or when the time budget has no room
  left for it: this is how a run stops *before* a step it cannot pay. The final test's hold is
  taken when the run starts and kept until the end, so a run that starts can always report a
  test score.
- a **call reservation**: each call's own worst case (input tokens bounded by its bytes,
  output at max_tokens). It is drawn from the open hold first; only what the hold cannot
  cover is taken from the bank. `commit` replaces a reservation by the actual cost and gives
  what was not used back (to the hold, and the rest to the bank); `release` gives it all back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from skopt.compiler.plan import Budget
from skopt.runtime.bank import Amount, Bank


@dataclass(frozen=True, slots=True)
class Cost:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def amount(self) -> Amount:
        return Amount(self.calls, self.tokens, self.usd)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.usd + other.usd,
        )


@dataclass
class Account:
    """What one role spent in one phase."""

    cost: Cost = field(default_factory=Cost)
    seconds: float = 0.0
    cache_hits: int = 0


@dataclass
class Hold:
    """A unit's worst case, reserved before it starts; `left` is what its calls have not
    drawn."""

    left: Amount
    dropped: bool = False


@dataclass(frozen=True, slots=True)
class Reservation:
    covered: Amount  # drawn from the hold
    excess: Amount  # reserved from the rest of the budget
    hold: Hold | None


class Funds(Protocol):
    """Where a run's reservations come from: a Bank, here or in another process."""

    async def begin(self, taker: str, spent: Amount, elapsed: float = 0.0) -> None: ...
    async def take(self, taker: str, amount: Amount, seconds: float | None = None) -> None: ...
    async def give(self, taker: str, amount: Amount) -> None: ...
    async def check_time(self, seconds: float = 0.0) -> None: ...


class Ledger:
    """One run's accounts. `bank`: where its budget comes from (default: a bank of its own
    over `budget`); `taker`: the name it takes under (a sweep cell's label)."""

    def __init__(
        self,
        budget: Budget,
        clock: Callable[[], float] = time.monotonic,
        bank: Funds | None = None,
        taker: str = "",
    ) -> None:
        self.budget = budget
        self.bank: Funds = bank if bank is not None else Bank(budget, clock)
        self.taker = taker
        self._clock = clock
        self._start = clock()
        self.spent = Cost()
        self.reserved = Amount()  # taken from the bank and neither spent nor given back
        self.accounts: dict[tuple[str, str], Account] = {}
        self.open: Hold | None = None  # the hold that calls draw from
        self.in_flight = 0  # calls reserved and not yet settled

    def elapsed(self) -> float:
        return self._clock() - self._start

    async def restore(
        self, spent: Cost, accounts: dict[tuple[str, str], Account], elapsed: float = 0.0
    ) -> None:
        """Start with what earlier sessions of the run spent (rebuilt from its journal) and the
        time they took; the bank forgets what they had reserved."""
        self.spent = spent
        self.accounts = accounts
        self._start = self._clock() - elapsed
        await self.bank.begin(self.taker, spent.amount, elapsed)

    async def hold(self, worst: Amount, seconds: float = 0.0) -> Hold:
        """Reserve a unit's worst case, which is expected to take `seconds`."""
        await self.bank.take(self.taker, worst, seconds)
        self.reserved += worst
        return Hold(worst)

    async def drop(self, hold: Hold) -> None:
        """Give back what a finished unit did not use."""
        left, hold.left, hold.dropped = hold.left, Amount(), True
        if self.open is hold:
            self.open = None
        await self._give(left)

    async def check_time(self) -> None:
        """BudgetExhausted once the time budget is used up."""
        await self.bank.check_time()

    async def reserve(self, worst: Cost) -> Reservation:
        """A call's worst case: from the open hold as far as it goes, the rest from the bank."""
        hold = self.open
        covered = hold.left.least(worst.amount).floor() if hold else Amount()
        excess = worst.amount - covered
        if hold is not None:
            hold.left -= covered  # before any await: another call may draw from the hold
        if not excess.nothing:
            try:
                await self.bank.take(self.taker, excess)
            except BaseException:
                if hold is not None and not hold.dropped:
                    hold.left += covered
                raise
            self.reserved += excess
        self.in_flight += 1
        return Reservation(covered, excess, hold)

    async def commit(
        self, reservation: Reservation, actual: Cost, role: str, phase: str, seconds: float
    ) -> None:
        self.spent += actual
        account = self.account(role, phase)
        account.cost += actual
        account.seconds += seconds
        await self._settle(reservation, actual.amount)

    async def release(self, reservation: Reservation) -> None:
        await self._settle(reservation, Amount())

    async def _settle(self, r: Reservation, used: Amount) -> None:
        """What was used is spent now; the rest of what was drawn from the hold goes back to
        it (or to the bank, once the hold was dropped), and the rest of the excess to the
        bank."""
        self.in_flight -= 1
        from_hold = used.least(r.covered)
        unused_cover = r.covered - from_hold
        unused_excess = (r.excess - (used - from_hold)).floor()
        self.reserved -= used
        back = unused_excess
        if r.hold is not None and not r.hold.dropped:
            r.hold.left += unused_cover
        else:
            back += unused_cover
        await self._give(back)

    async def _give(self, amount: Amount) -> None:
        if amount.nothing:
            return
        self.reserved -= amount
        await self.bank.give(self.taker, amount)

    def cache_hit(self, role: str, phase: str) -> None:
        self.account(role, phase).cache_hits += 1

    def account(self, role: str, phase: str) -> Account:
        return self.accounts.setdefault((role, phase), Account())
