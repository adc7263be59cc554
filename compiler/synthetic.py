"""Items of `kind = synthetic(rules, items, noise, seed)`: tasks that each need one hidden rule.

Each rule is a house convention that a model cannot guess (a topic and the code it must be
answered with). The simulated target (runtime) answers an item correctly exactly when the
skill states that item's rule, so a skill that learns the rules scores higher; a share `noise`
of the items carries a wrong gold code (label noise that no skill can fix). Deterministic from
the seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from skopt.compiler.dataset import Item

TOPICS = (
    "invoice dates",
    "currency amounts",
    "phone numbers",
    "street addresses",
    "unit conversions",
    "product names",
    "ticket priorities",
    "time zones",
    "error codes",
    "file names",
    "percentages",
    "customer names",
    "order numbers",
    "weekdays",
    "shipping methods",
    "tax rates",
    "colour names",
    "file sizes",
    "country codes",
    "version numbers",
)


CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ"


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    topic: str
    code: str

    @property
    def text(self) -> str:
        """The sentence a skill must contain for the simulated target to follow this rule."""
        return f"For {self.topic}, answer with the code {self.code}."


def rules(count: int, seed: int) -> list[Rule]:
    rng = random.Random(f"rules:{seed}")
    out = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)] + (
            "" if i < len(TOPICS) else f" (set {i // len(TOPICS) + 1})"
        )
        out.append(Rule(i, topic, _code(rng)))
    return out


def items(rule_count: int, item_count: int, seed: int, noise: float = 0.0) -> list[Item]:
    """`item_count` cases; a fraction `noise` of them (rounded half up) have a wrong gold code.

    The noisy items are label noise that no skill can fix: their gold answer is a code that no
    rule states. They are drawn from their own random stream, so the inputs, the rules and the
    other items' answers do not depend on `noise`.
    """
    all_rules = rules(rule_count, seed)
    rng = random.Random(f"items:{seed}")
    noisy = _noisy(item_count, noise, seed)
    codes = {rule.code for rule in all_rules}
    out = []
    for i in range(item_count):
        rule = all_rules[rng.randrange(rule_count)]
        case = rng.randrange(1000, 9999)
        answer = _wrong_code(codes, seed, i) if i in noisy else rule.code
        out.append(
            Item(
                id=f"syn-{i + 1:05d}",
                input=f"Case {case} concerns {rule.topic}. Give the house answer.",
                answers=(answer,),
                meta={"rule": rule.index, "noisy": i in noisy},
            )
        )
    return out


def _code(rng: random.Random) -> str:
    return "".join(rng.choice(CODE_LETTERS) for _ in range(3)) + str(rng.randrange(10, 99))


def _noisy(item_count: int, noise: float, seed: int) -> frozenset[int]:
    """The indices of the items whose gold answer is wrong: a fixed share, chosen by the seed."""
    count = int(min(max(noise, 0.0), 1.0) * item_count + 0.5 + 1e-9)
    return frozenset(random.Random(f"noise:{seed}").sample(range(item_count), count))


def _wrong_code(codes: set[str], seed: int, index: int) -> str:
    """A code that no rule states."""
    rng = random.Random(f"noise:{seed}:{index}")
    code = _code(rng)
    while code in codes:
        code = _code(rng)
    return code
