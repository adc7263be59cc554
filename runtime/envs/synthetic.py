"""`kind = synthetic(...)`: the simulator's tasks (SPEC §5.6), whose gold answer is a house code
such as `KQT42`. The extracted answer must equal the code exactly (case-sensitive); hard = soft.
The items come from `compiler/synthetic.py`; the simulated target lives with the `sim` backend.
"""

from __future__ import annotations

from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.compiler.plan import EnvSettings
from skopt.runtime.envs import Score, check_metric, read

METRICS = ("exact",)


@dataclass(frozen=True, slots=True)
class SyntheticEnv:
    name: str
    answer_format: str
    strict: bool

    def score(self, item: Item, output: str) -> Score:
        reading = read(output, self.answer_format, self.strict)
        hard = float(bool(reading.answer) and reading.answer in item.answers)
        return Score(hard, hard, reading.answer, followed=reading.followed)


def build(settings: EnvSettings) -> SyntheticEnv:
    check_metric(settings, METRICS)
    return SyntheticEnv(settings.name, settings.answer_format, settings.strict_format)
