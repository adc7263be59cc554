"""Tokens and dollars of the plan's calls.

Target calls are counted item by item with the model's tokenizer (exact for OpenAI models, else
estimated): the expected value at the initial skill, the range over every size the skill may
have while the phase runs (`compiler/skill_size.py`: from nothing, once it may have changed, up
to the bound the runtime enforces). Optimizer prompts carry the skill too, with the same growth,
and model outputs, so their inputs are always estimates. Output tokens: at least 1 a call, at
most `max_tokens`, and an expected value per phase. Dollars: min / expected / max per model, or
unknown without a price.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from skopt.compiler.dataset import Item
from skopt.compiler.phases import Span3
from skopt.compiler.plan import (
    Count,
    ModelCost,
    ModelSettings,
    PhaseName,
    PhaseTotal,
    Role,
    RoleCalls,
    Tokens,
    Usd,
)
from skopt.compiler.skill_size import INITIAL, SkillSize
from skopt.compiler.tokens import PER_MESSAGE, PER_REPLY, Counter, chat_tokens, counter_for
from skopt.prompts import rollout_user

# Tokens of an optimizer prompt's own instructions (its template), before the skill and evidence.
OPTIMIZER_INSTRUCTIONS = 400
# Expected optimizer output per call, by phase (capped at the model's max_tokens).
EXPECTED_OUTPUT: dict[PhaseName, int] = {
    "reflect": 600,
    "aggregate": 800,
    "select": 60,
    "update": 200,  # plus the skill itself when rewriting
    "slow_update": 400,
    "meta_skill": 400,
}
# A target's answer: the gold answer's length plus room for the answer tag and a short reason.
ANSWER_ALLOWANCE = 48


def count(low: float, expected: float, high: float) -> Count:
    return Count(min=round(low), expected=round(expected, 2), max=round(high))


@dataclass
class TokenModel:
    target: ModelSettings
    optimizer: ModelSettings
    skill: str
    answer_format: str
    prompts: str | None
    env_prompt: str | None
    target_counter: Counter = field(init=False)
    optimizer_counter: Counter = field(init=False)
    _item_tokens: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.target_counter = counter_for(self.target.provider, self.target.model)
        self.optimizer_counter = counter_for(self.optimizer.provider, self.optimizer.model)
        self.skill_tokens = self.optimizer_counter.count(self.skill)
        self.target_skill_tokens = self.target_counter.count(self.skill)

    def item_tokens(self, item: Item) -> int:
        """Input tokens of one rollout of `item` with the initial skill."""
        cached = self._item_tokens.get(item.id)
        if cached is None:
            user = rollout_user(
                item.input, item.context, self.answer_format, self.prompts, self.env_prompt
            )
            cached = chat_tokens(self.target_counter, self.skill, user)
            self._item_tokens[item.id] = cached
        return cached

    def expected_answer(self, items: Sequence[Item]) -> int:
        if not items:
            return ANSWER_ALLOWANCE
        mean = sum(self.target_counter.count(" | ".join(i.answers)) for i in items) / len(items)
        return min(self.target.max_tokens, round(mean) + ANSWER_ALLOWANCE)

    def target_calls(
        self, calls: Span3, items: Sequence[Item], answer: int, skill: SkillSize = INITIAL
    ) -> RoleCalls:
        """Calls that roll `items` out (repeated as the count says) with the target, carrying
        a skill of the size `skill` says."""
        per_call = sum(self.item_tokens(i) for i in items) / len(items) if items else 0
        # A call's input is its skill's tokens plus the rest (user message, chat overhead): the
        # two are counted apart, as the messages are.
        rest = per_call - self.target_skill_tokens if items else 0
        initial = self.target_skill_tokens
        low, high = rest + skill.low(initial), rest + skill.high(initial)
        cap = self.target.max_tokens
        return RoleCalls(
            role="target",
            model=self.target.name,
            calls=count(calls.min, calls.expected, calls.max),
            input_tokens=count(low * calls.min, per_call * calls.expected, high * calls.max),
            output_tokens=count(calls.min, calls.expected * min(answer, cap), calls.max * cap),
            input_exact=self.target_counter.exact,
        )

    def optimizer_calls(
        self,
        phase: PhaseName,
        calls: Span3,
        evidence: tuple[float, float],
        skill: SkillSize = INITIAL,
    ) -> RoleCalls:
        """Optimizer calls: instructions + skill + `evidence` tokens (expected, max) a call; the
        skill's growth, bounded in the target's tokens, is taken as the optimizer's (estimates)."""
        cap = self.optimizer.max_tokens
        base = OPTIMIZER_INSTRUCTIONS + 2 * PER_MESSAGE + PER_REPLY
        initial = self.skill_tokens
        low = calls.min * (base + skill.low(initial))
        expected = calls.expected * (base + initial + evidence[0])
        high = calls.max * (base + skill.high(initial) + evidence[1])
        return RoleCalls(
            role="optimizer",
            model=self.optimizer.name,
            calls=count(calls.min, calls.expected, calls.max),
            input_tokens=count(low, expected, high),
            output_tokens=count(
                calls.min, calls.expected * self.expected_output(phase), calls.max * cap
            ),
            input_exact=False,
        )

    # Evidence: what an optimizer prompt carries beyond instructions and skill, (expected, max).

    def step_evidence(
        self, batch: Sequence[Item], answer: int, per_reflection: int, merge_batch: int
    ) -> dict[PhaseName, tuple[float, float]]:
        inputs = [self.item_tokens(i) for i in batch] or [0]
        trajectory = (sum(inputs) / len(inputs) + answer, max(inputs) + self.target.max_tokens)
        reflection = (self.expected_output("reflect"), self.optimizer.max_tokens)
        return {
            "reflect": (per_reflection * trajectory[0], per_reflection * trajectory[1]),
            "aggregate": (merge_batch * reflection[0], merge_batch * reflection[1]),
            "select": (self.expected_output("aggregate"), self.optimizer.max_tokens),
            "update": (self.expected_output("select"), self.optimizer.max_tokens),
        }

    def slow_update_evidence(self, samples: Sequence[Item], answer: int) -> tuple[float, float]:
        """Both epochs' trajectories on the same samples."""
        inputs = sum(self.item_tokens(i) for i in samples)
        return 2.0 * (inputs + len(samples) * answer), 2.0 * (
            inputs + len(samples) * self.target.max_tokens
        )

    def meta_skill_evidence(self) -> tuple[float, float]:
        summary = 4.0 * self.expected_output("reflect")
        return summary, summary

    def expected_output(self, phase: PhaseName) -> int:
        extra = self.skill_tokens if phase == "update" else 0
        return min(self.optimizer.max_tokens, EXPECTED_OUTPUT.get(phase, 400) + extra)


def add(a: Count, b: Count) -> Count:
    return Count(min=a.min + b.min, expected=round(a.expected + b.expected, 2), max=a.max + b.max)


ZERO = Count(min=0, expected=0, max=0)


def combined(a: RoleCalls, b: RoleCalls) -> RoleCalls:
    """Two parts of a phase's calls by one role and model (say, with different skills), as one."""
    return RoleCalls(
        role=a.role,
        model=a.model,
        calls=add(a.calls, b.calls),
        input_tokens=add(a.input_tokens, b.input_tokens),
        output_tokens=add(a.output_tokens, b.output_tokens),
        input_exact=a.input_exact and b.input_exact,
    )


def phase_totals(phases: Sequence[tuple[PhaseName, RoleCalls]]) -> list[PhaseTotal]:
    totals: dict[tuple[PhaseName, Role], PhaseTotal] = {}
    for phase, rc in phases:
        key = (phase, rc.role)
        old = totals.get(key)
        totals[key] = PhaseTotal(
            phase=phase,
            role=rc.role,
            calls=add(old.calls, rc.calls) if old else rc.calls,
            input_tokens=add(old.input_tokens, rc.input_tokens) if old else rc.input_tokens,
            output_tokens=add(old.output_tokens, rc.output_tokens) if old else rc.output_tokens,
            input_exact=(old.input_exact if old else True) and rc.input_exact,
        )
    return list(totals.values())


def model_costs(
    calls: Sequence[RoleCalls], models: dict[str, ModelSettings], counters: dict[str, Counter]
) -> list[ModelCost]:
    out = []
    for name in dict.fromkeys(rc.model for rc in calls):
        mine = [rc for rc in calls if rc.model == name]
        c = i = o = ZERO
        for rc in mine:
            c, i, o = add(c, rc.calls), add(i, rc.input_tokens), add(o, rc.output_tokens)
        model = models[name]
        counter = counters[name]
        out.append(
            ModelCost(
                model=name,
                calls=c,
                input_tokens=i,
                output_tokens=o,
                tokens=Tokens(tokenizer=counter.name, exact=counter.exact),
                usd=usd(model, i, o),
            )
        )
    return out


def usd(model: ModelSettings, inputs: Count, outputs: Count) -> Usd | None:
    price = model.price
    if price is None:
        return None

    def cost(tokens_in: float, tokens_out: float) -> float:
        return round((tokens_in * price.input_usd + tokens_out * price.output_usd) / price.per, 6)

    return Usd(
        min=cost(inputs.min, outputs.min),
        expected=cost(inputs.expected, outputs.expected),
        max=cost(inputs.max, outputs.max),
    )
