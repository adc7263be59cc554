"""`kind = qa`: free-text answers scored against one or more gold answers, SQuAD-style.

`metric = verbatim` compares the answer with each gold answer character for character, only
runs of whitespace collapsed: for answers whose form is the point (a house style, a format).
For the other metrics both sides are normalised (`text.normalize`). `hard` is, for
`metric = exact | f1`, an exact match of the normalised answer with any gold answer, and for
`metric = contains`, a gold answer found in the answer as whole normalised words. `soft` is the
best token F1 over the gold answers (for `exact` and `verbatim`, soft = hard). An empty answer
scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Score, check_metric, read
from skopt.runtime.envs.text import token_f1, tokens

METRICS = ("exact", "f1", "contains", "verbatim")


@dataclass(frozen=True, slots=True)
class QaEnv:
    name: str
    answer_format: str
    metric: str  # exact | f1 | contains | verbatim
    strict: bool

    def score(self, item: Item, output: str) -> Score:
        reading = read(output, self.answer_format, self.strict)
        hard, soft = self._hard_soft(item, reading.answer)
        return Score(hard, soft, reading.answer, followed=reading.followed)

    def _hard_soft(self, item: Item, answer: str) -> tuple[float, float]:
        if not answer:
            return 0.0, 0.0
        if self.metric == "verbatim":
            hard = float(" ".join(answer.split()) in {" ".join(g.split()) for g in item.answers})
            return hard, hard
        said = tokens(answer)
        golds = [tokens(gold) for gold in item.answers]
        hit = contains if self.metric == "contains" else exact
        hard = float(any(hit(said, gold) for gold in golds))
        if self.metric == "exact":
            return hard, hard
        return hard, max((token_f1(said, gold) for gold in golds), default=0.0)


def exact(answer: list[str], gold: list[str]) -> bool:
    return answer == gold


def contains(answer: list[str], gold: list[str]) -> bool:
    """Whether the gold tokens appear in the answer as a run of whole tokens."""
    if not gold:
        return not answer
    return f" {' '.join(gold)} " in f" {' '.join(answer)} "


def build(settings: EnvSettings) -> QaEnv:
    check_metric(settings, METRICS)
    return QaEnv(settings.name, settings.answer_format, settings.metric, settings.strict_format)
