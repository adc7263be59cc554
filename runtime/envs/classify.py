"""`kind = classify`: accuracy over declared labels (`metric = accuracy`).

The answer is matched to a label case-insensitively, ignoring surrounding whitespace and
punctuation (`**Positive.**` is `positive`). With `labels = [...]` declared, an answer that is
none of the labels scores 0 even if it equals the gold answer; without a declared list (or with
`labels` naming a data field, which items do not carry), the gold answers are the only labels
that can score. hard = soft.

Without `strict_format`, an answer that is not a label is not given up on while it names one
declared label unambiguously: when exactly one declared label occurs in it as whole words (in the
output itself, when the output had no <answer> tag), that label is the answer. A bare `billing`,
or "The queue is billing.", answers `billing`; "billing or technical" answers nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Score, check_metric, read
from skopt.runtime.envs.text import label_key

METRICS = ("accuracy",)


@dataclass(frozen=True, slots=True)
class ClassifyEnv:
    name: str
    answer_format: str
    labels: frozenset[str] | None  # label keys; None: no declared list
    strict: bool

    def score(self, item: Item, output: str) -> Score:
        reading = read(output, self.answer_format, self.strict)
        answer = reading.answer
        if not self.strict and not self._known(label_key(answer)):
            answer = self._sole_label(answer if reading.followed else output) or answer
        key = label_key(answer)
        hard = float(self._known(key) and any(key == label_key(gold) for gold in item.answers))
        return Score(hard, hard, answer, followed=reading.followed)

    def _known(self, key: str) -> bool:
        return bool(key) and (self.labels is None or key in self.labels)

    def _sole_label(self, text: str) -> str | None:
        """The one declared label that `text` names as whole words; None for none or several."""
        said = text.casefold()
        named = {k for k in self.labels or () if re.search(rf"(?<!\w){re.escape(k)}(?!\w)", said)}
        return next(iter(named)) if len(named) == 1 else None


def build(settings: EnvSettings) -> ClassifyEnv:
    check_metric(settings, METRICS)
    labels = settings.labels
    keys = frozenset(label_key(label) for label in labels) if isinstance(labels, list) else None
    return ClassifyEnv(settings.name, settings.answer_format, keys, settings.strict_format)
