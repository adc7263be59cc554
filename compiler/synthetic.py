"""Items of `kind = synthetic(rules, items, noise, seed)`: tasks that each need one hidden rule.

Each rule is a house convention that a model cannot guess (a topic and the code it must be
answered with). The simulated target (runtime) answers an item correctly exactly when the
skill states that item's rule, so a skill that learns the rules scores higher. Deterministic
from the seed.
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
        code = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(3)) + str(
            rng.randrange(10, 99)
        )
        out.append(Rule(i, topic, code))
    return out


def items(rule_count: int, item_count: int, seed: int) -> list[Item]:
    all_rules = rules(rule_count, seed)
    rng = random.Random(f"items:{seed}")
    out = []
    for i in range(item_count):
        rule = all_rules[rng.randrange(rule_count)]
        case = rng.randrange(1000, 9999)
        out.append(
            Item(
                id=f"syn-{i + 1:05d}",
                input=f"Case {case} concerns {rule.topic}. Give the house answer.",
                answers=(rule.code,),
                meta={"rule": rule.index},
            )
        )
    return out
