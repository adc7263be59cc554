"""Budget accounting: what was spent, per role and phase, and reservations of worst cases.

Work starts only after its worst case is reserved, so the limits on calls, tokens and USD hold
however many calls run at once. Reservations come at two levels:

- a **hold**: the worst case of a unit of work (the baseline, a step with the epoch-boundary
  phases before it, the final test), taken before the unit starts. `hold` refuses
  (BudgetExhausted) when spent + reserved + worst would pass a limit, or when the time budget
  has no room left for it: this is how a run stops *before* a step it cannot pay. The final
  test's hold is taken when the run starts and kept until the end, so a run that starts can
  always report a test score.
- a **call reservation**: each call's own worst case (input tokens bounded by its bytes,
  output at max_tokens). It is drawn from the open hold first; only what the hold cannot
  cover is reserved from the rest of the budget. `commit` replaces a reservation by the actual
  cost and gives what was not used back to the hold; `release` gives it all back.

Time cannot be reserved: it is checked when a hold is taken (is there room for the unit's
expected duration?), never in the middle of a unit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

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


class Ledger:
    def __init__(self, budget: Budget, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self._clock = clock
        self._start = clock()
        self.spent = Cost()
        self.reserved = Amount()
        self.accounts: dict[tuple[str, str], Account] = {}
        self.open: Hold | None = None  # the hold that calls draw from
        self.in_flight = 0  # calls reserved and not yet settled

    def elapsed(self) -> float:
        return self._clock() - self._start

    def hold(self, worst: Amount, seconds: float = 0.0) -> Hold:
        """Reserve a unit's worst case, which is expected to take `seconds`."""
        over = self._over(worst)
        if over:
            raise BudgetExhausted(over, f"the {over} budget cannot pay for the worst case")
        self.check_time(seconds)
        self.reserved += worst
        return Hold(worst)

    def check_time(self, seconds: float = 0.0) -> None:
        """Refuse (BudgetExhausted) work expected to take `seconds` that the time left cannot
        hold: with nothing expected, once the time budget is used up."""
        limit = self.budget.time_s
        if limit is not None and self.elapsed() + seconds > limit:
            why = "cannot pay for the worst case" if seconds else "is used up"
            raise BudgetExhausted("time", f"the time budget {why}")

    def drop(self, hold: Hold) -> None:
        """Give back what a finished unit did not use."""
        self.reserved -= hold.left
        hold.left, hold.dropped = Amount(), True
        if self.open is hold:
            self.open = None

    def reserve(self, worst: Cost) -> Reservation:
        """A call's worst case: from the open hold as far as it goes, the rest from the budget."""
        hold = self.open
        covered = hold.left.least(worst.amount).floor() if hold else Amount()
        excess = worst.amount - covered
        over = self._over(excess)
        if over:
            raise BudgetExhausted(over, f"the {over} budget cannot pay for this call's worst case")
        if hold is not None:
            hold.left -= covered
        self.reserved += excess
        self.in_flight += 1
        return Reservation(covered, excess, hold)

    def _over(self, extra: Amount) -> str:
        total = self.spent.amount + self.reserved + extra
        b = self.budget
        if b.calls is not None and total.calls > b.calls:
            return "calls"
        if b.tokens is not None and total.tokens > b.tokens:
            return "tokens"
        if b.usd is not None and total.usd > b.usd + 1e-12:
            return "usd"
        return ""

    def commit(
        self, reservation: Reservation, actual: Cost, role: str, phase: str, seconds: float
    ) -> None:
        self._settle(reservation, actual.amount)
        self.spent += actual
        account = self.account(role, phase)
        account.cost += actual
        account.seconds += seconds

    def release(self, reservation: Reservation) -> None:
        self._settle(reservation, Amount())

    def _settle(self, r: Reservation, used: Amount) -> None:
        """What was used leaves the reservations (it is spent now); the rest of what was drawn
        from the hold goes back to it."""
        self.in_flight -= 1
        self.reserved -= r.excess
        if r.hold is not None:
            back = Amount() if r.hold.dropped else (r.covered - used).floor()
            r.hold.left += back
            self.reserved -= r.covered - back

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
