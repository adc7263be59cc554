"""Rolling a skill out on items with the target model, and scoring the answers with the env.

Scores are remembered by (skill hash, item, repeat), so a skill is never scored twice on the
same items; the train rollout of each step always asks (its count is exact in the plan), and
the response cache makes a repeated question free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from skopt.compiler.dataset import Item
from skopt.prompts import rollout_user
from skopt.runtime.calls import CallLayer, gathered
from skopt.runtime.envs import Env
from skopt.runtime.harness import deploy_messages
from skopt.runtime.request import Message, Request


def skill_hash(skill: str) -> str:
    return hashlib.sha256(skill.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Trajectory:
    item: Item
    repeat: int
    output: str
    answer: str
    hard: float
    soft: float
    followed: bool = True  # the output gave its answer in the stated format

    @property
    def key(self) -> str:
        return f"{self.item.id}#{self.repeat}"

    @property
    def passed(self) -> bool:
        return self.hard >= 1

    def record(self) -> dict[str, object]:
        """As a step's rollouts.json keeps it."""
        return {
            "item": self.item.id,
            "repeat": self.repeat,
            "output": self.output,
            "answer": self.answer,
            "hard": self.hard,
            "soft": self.soft,
            "followed": self.followed,
        }


class Scorer:
    def __init__(
        self,
        layer: CallLayer,
        env: Env,
        target: str,
        prompts: str | None,
        env_prompt: str | None = None,
        deploy_task: str | None = None,  # set: the deploy harness (runtime/harness.py)
    ) -> None:
        self.layer, self.env, self.target, self.prompts = layer, env, target, prompts
        self.env_prompt, self.deploy_task = env_prompt, deploy_task
        self._seen: dict[tuple[str, str, int], Trajectory] = {}

    def messages(self, skill: str, item: Item) -> tuple[Message, ...]:
        if self.deploy_task is not None:
            return deploy_messages(skill, item, self.deploy_task)
        user = rollout_user(
            item.input, item.context, self.env.answer_format, self.prompts, self.env_prompt
        )
        return (Message("system", skill), Message("user", user))

    async def rollout(
        self, skill: str, items: Sequence[Item], phase: str, repeats: int = 1, remember: bool = True
    ) -> list[Trajectory]:
        jobs = [
            self._one(skill, item, r, phase, remember) for item in items for r in range(repeats)
        ]
        return list(await gathered(*jobs))

    async def _one(
        self, skill: str, item: Item, repeat: int, phase: str, remember: bool
    ) -> Trajectory:
        key = (skill_hash(skill), item.id, repeat)
        if remember and key in self._seen:
            return self._seen[key]
        request = Request(self.target, self.messages(skill, item), "target", phase, sample=repeat)
        completion = await self.layer.call(request)
        score = self.env.score(item, completion.text)
        trajectory = Trajectory(
            item, repeat, completion.text, score.answer, score.hard, score.soft, score.followed
        )
        self._seen[key] = trajectory
        return trajectory


def as_scores(trajectories: Sequence[Trajectory]) -> dict[str, tuple[float, float]]:
    return {t.key: (t.hard, t.soft) for t in trajectories}
