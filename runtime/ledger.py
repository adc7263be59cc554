"""Budget accounting: what was spent, per role and phase, and reservations of worst cases.

Work is started only after its worst case is reserved: `reserve` refuses (BudgetExhausted)
when spent + reserved + worst would pass a limit, `commit` replaces the reservation by the
actual cost, `release` gives it back. Limits therefore hold however many calls run at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from skopt.compiler.plan import Budget
from skopt.runtime.errors import BudgetExhausted


@dataclass(frozen=True, slots=True)
class Cost:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.usd + other.usd,
        )

    def __sub__(self, other: Cost) -> Cost:
        return Cost(
            self.calls - other.calls,
            self.input_tokens - other.input_tokens,
            self.output_tokens - other.output_tokens,
            round(self.usd - other.usd, 12),  # no float drift left behind by release
        )


@dataclass
class Account:
    """What one role spent in one phase."""

    cost: Cost = field(default_factory=Cost)
    seconds: float = 0.0
    cache_hits: int = 0


@dataclass(frozen=True, slots=True)
class Reservation:
    worst: Cost


class Ledger:
    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self._clock = clock
        self._start = clock()
        self.spent = Cost()
        self.reserved = Cost()
        self.accounts: dict[tuple[str, str], Account] = {}

    def elapsed(self) -> float:
        return self._clock() - self._start

    def reserve(self, worst: Cost) -> Reservation:
        over = self._over(self.spent + self.reserved + worst)
        if over:
            raise BudgetExhausted(over, f"the {over} budget cannot pay for this call's worst case")
        self.reserved += worst
        return Reservation(worst)

    def _over(self, total: Cost) -> str:
        b = self.budget
        if b.calls is not None and total.calls > b.calls:
            return "calls"
        if b.tokens is not None and total.tokens > b.tokens:
            return "tokens"
        if b.usd is not None and total.usd > b.usd + 1e-12:
            return "usd"
        if b.time_s is not None and self.elapsed() >= b.time_s:
            return "time"
        return ""

    def commit(
        self, reservation: Reservation, actual: Cost, role: str, phase: str, seconds: float
    ) -> None:
        self.reserved -= reservation.worst
        self.spent += actual
        account = self.account(role, phase)
        account.cost += actual
        account.seconds += seconds

    def release(self, reservation: Reservation) -> None:
        self.reserved -= reservation.worst

    def restore(
        self, spent: Cost, accounts: dict[tuple[str, str], Account], elapsed: float = 0.0
    ) -> None:
        """Continue a resumed run's accounts (rebuilt from its journal) and its clock."""
        self.spent = spent
        self.accounts = accounts
        self._start = self._clock() - elapsed

    def cache_hit(self, role: str, phase: str) -> None:
        self.account(role, phase).cache_hits += 1

    def account(self, role: str, phase: str) -> Account:
        return self.accounts.setdefault((role, phase), Account())
