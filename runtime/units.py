"""The budget, unit by unit (SPEC §5.4): the worst case of each unit of work is held before it
starts, and what it did not use is given back when it ends.

The units are the baseline, each step with the epoch-boundary phases before it, and the final
test (phases that share a `step` number). The final test's worst case is held from the moment
a run starts, so a run that starts can always score it. A time budget cannot be held: a step
starts only while the time left holds about one more step (as long as the last one) and the
final test (at the baseline's pace).

A resumed run holds the unit it resumes in less what earlier sessions already paid toward it:
those calls are answered again from the response cache for free, so the unit costs no more in
all than its worst case, and the run stops where an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skopt.compiler import budget as budgets
from skopt.compiler.plan import Baseline, FinalTest, Job, ModelSettings, Phase, SleepPhase
from skopt.runtime.bank import Amount
from skopt.runtime.ledger import Hold, Ledger


class Units:
    def __init__(self, job: Job, ledger: Ledger, models: dict[str, ModelSettings]) -> None:
        self.job, self.ledger, self.models = job, ledger, models
        self.final_test: Hold | None = None
        self.current: tuple[int, Hold, float] | None = None  # step, hold, when it started
        self.last_step_s = 0.0
        self.paid = Amount()  # what earlier sessions paid toward the unit the run resumes in

    async def hold_final_test(self, next_phase: int, paid: Amount | None = None) -> None:
        """Hold the final test's worst case if it is still to come (BudgetExhausted if not
        even that can be paid). `paid`: what earlier sessions paid toward the unit that starts
        at `next_phase` (a resumed run's unfinished unit)."""
        self.paid = paid or Amount()
        tests = [p for p in self.job.phases[next_phase:] if isinstance(p, FinalTest)]
        if not tests:
            self.final_test = None
            return
        test_worst = worst(tests, self.models)
        if tests[0] is self.job.phases[next_phase]:  # the run resumes in the final test
            test_worst = self._less_paid(test_worst)
        self.final_test = await self.ledger.hold(test_worst)

    def _less_paid(self, amount: Amount) -> Amount:
        """`amount` less what earlier sessions paid toward it, once."""
        less, self.paid = (amount - self.paid).floor(), Amount()
        return less

    def starts(self, phase: Phase) -> bool:
        """Whether `phase` is the first of a unit not yet open."""
        return self.current is None or self.current[0] != phase.step

    async def open(self, index: int, baseline_s: float) -> None:
        """Close the unit under way and hold the one that starts at phase `index`
        (BudgetExhausted when the rest of the budget cannot pay for it)."""
        await self.close()
        phase = self.job.phases[index]
        if isinstance(phase, FinalTest) and self.final_test is not None:
            hold = self.final_test
        else:
            rest = [p for p in self.job.phases[index:] if p.step == phase.step]
            hold = await self.ledger.hold(
                self._less_paid(worst(rest, self.models)), self._seconds(phase, baseline_s)
            )
        self.ledger.open = hold
        self.current = (phase.step, hold, self.ledger.elapsed())

    async def close(self) -> None:
        """Give back what the unit under way did not use."""
        if self.current is None:
            return
        step, hold, started = self.current
        await self.ledger.drop(hold)
        if 0 < step <= self.job.schedule.total_steps:
            self.last_step_s = self.ledger.elapsed() - started
        self.current = None

    def _seconds(self, phase: Phase, baseline_s: float) -> float:
        """How much time must be left before `phase`'s unit starts."""
        baseline, final = self.job.phases[0], self.job.phases[-1]
        if isinstance(phase, Baseline) or not isinstance(final, FinalTest):
            return 0.0
        pace = baseline_s / max(1, sum(rc.calls.max for rc in baseline.calls))
        return self.last_step_s + pace * sum(rc.calls.max for rc in final.calls)


def worst(phases: Sequence[Phase | SleepPhase], models: Mapping[str, ModelSettings]) -> Amount:
    """The plan's worst case of these phases (what the budget verdict counts too)."""
    total = sum((budgets.worst(p, models) for p in phases), budgets.Worst())
    return Amount(total.calls, total.tokens, total.usd)
