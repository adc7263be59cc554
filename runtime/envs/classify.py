"""`kind = classify`: accuracy over declared labels (`metric = accuracy`).

The answer is matched to a label case-insensitively, ignoring surrounding whitespace and
punctuation (`**Positive.**` is `positive`). With `labels = [...]` declared, an answer that is
none of the labels scores 0 even if it equals the gold answer; without a declared list (or with
`labels` naming a data field, which items do not carry), the gold answers are the only labels
that can score. hard = soft.
"""

from __future__ import annotations

from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Score, check_metric, extract
from skopt.runtime.envs.text import label_key

METRICS = ("accuracy",)


@dataclass(frozen=True, slots=True)
class ClassifyEnv:
    name: str
    answer_format: str
    labels: frozenset[str] | None  # label keys; None: no declared list

    def score(self, item: Item, output: str) -> Score:
        answer = extract(output, self.answer_format)
        key = label_key(answer)
        known = bool(key) and (self.labels is None or key in self.labels)
        hard = float(known and any(key == label_key(gold) for gold in item.answers))
        return Score(hard, hard, answer)


def build(settings: EnvSettings) -> ClassifyEnv:
    check_metric(settings, METRICS)
    labels = settings.labels
    keys = frozenset(label_key(label) for label in labels) if isinstance(labels, list) else None
    return ClassifyEnv(settings.name, settings.answer_format, keys)
