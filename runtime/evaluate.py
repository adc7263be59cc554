"""Scoring one skill on one split of a recipe's env with its target model (`skopt eval`).

The pieces are the ones `skopt run` uses — `load_splits`, `env_for`, `backend_for`, the call
layer and `Scorer.rollout` — put together without a run folder: calls go through the call layer
with the recipe's budget and the model's concurrency, rate limits and retries, report to an
in-memory sink, and use no response cache, so eval writes nothing and always asks the model.

Two harnesses:
- `plain`: exactly the default rollout, with the built-in rollout template (the skill as the
  system message; the task as the user message with the env's answer-format line), even when
  the recipe's `prompts` folder overrides that template for training;
- `deploy`: the skill as a user deploys it (`runtime/harness.py`): the skill and a one-line task
  statement as the system message, the item's raw input as the user message, no format line.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from skopt.compiler.dataset import DataError, Item
from skopt.compiler.plan import ModelSettings, Plan
from skopt.compiler.splits import load_splits
from skopt.runtime.backends import Backend, backend_for
from skopt.runtime.calls import CallLayer
from skopt.runtime.envs import Env, EnvLoadError, env_for
from skopt.runtime.errors import (
    BudgetExhausted,
    CacheDamaged,
    CallFailed,
    LocalModelUnavailable,
    MissingKey,
    ReplayMiss,
)
from skopt.runtime.events import CallEvent, ListSink
from skopt.runtime.harness import deploy_task
from skopt.runtime.ledger import Ledger
from skopt.runtime.scoring import Scorer

HARNESSES = ("plain", "deploy")
SPLITS = ("test", "valid", "train")
PHASE = "eval"  # the phase name eval's calls carry in their events


class CannotEvaluate(Exception):
    """The recipe (or the request) gives nothing to score: a usage or recipe error."""


class EvalFailed(Exception):
    """Scoring started and could not finish: a missing key, a failed call, the budget."""


@dataclass(frozen=True)
class Evaluation:
    recipe: str
    split: str
    harness: str
    target: str
    env: str
    items: int
    hard: float  # mean hard score over the items
    soft: float  # mean soft score over the items
    simulation: bool
    calls: int
    cache_hits: int  # identical requests in flight at once, asked once
    usd: float | None  # None: the target has no known price
    notes: list[str] = field(default_factory=list)


def evaluate(plan: Plan, skill: str, split: str = "test", harness: str = "plain") -> Evaluation:
    """Roll `skill` out on `split` with the plan's target model and score it with its env."""
    if harness not in HARNESSES:
        raise CannotEvaluate(f"unknown harness {harness!r} (plain or deploy)")
    if split not in SPLITS:
        raise CannotEvaluate(f"unknown split {split!r} (test, valid or train)")
    if len(plan.jobs) != 1:
        raise CannotEvaluate(
            "eval needs a recipe with one train job (its target model and env score the skill)"
        )
    train = plan.jobs[0].train
    target = next(m for m in plan.models if m.name == train.target)
    settings = next(e for e in plan.envs if e.name == train.env)
    deploy = harness == "deploy"
    try:
        items = load_splits(settings).get(split)
        env = env_for(settings.model_copy(update={"strict_format": False}) if deploy else settings)
    except (DataError, EnvLoadError) as exc:
        raise CannotEvaluate(str(exc)) from None
    if not items:
        raise CannotEvaluate(f"the {split} split of env '{settings.name}' has no items")
    sink = ListSink()
    task = deploy_task(settings) if deploy else None
    hard, soft = asyncio.run(_score(plan, target, env, skill, items, sink, task))
    calls = [e for e in sink.events if isinstance(e, CallEvent)]
    paid = [e for e in calls if not e.cache_hit]
    return Evaluation(
        recipe=plan.recipe,
        split=split,
        harness=harness,
        target=target.name,
        env=settings.name,
        items=len(items),
        hard=hard,
        soft=soft,
        simulation=target.provider == "sim",
        calls=len(calls),
        cache_hits=len(calls) - len(paid),
        usd=None if any(e.usd is None for e in paid) else sum(e.usd or 0.0 for e in paid),
        notes=_notes(train.prompts) if not deploy else [f"task statement: {task}"],
    )


async def _score(
    plan: Plan,
    target: ModelSettings,
    env: Env,
    skill: str,
    items: list[Item],
    sink: ListSink,
    task: str | None,
) -> tuple[float, float]:
    try:
        backend: Backend = backend_for(target)
    except (MissingKey, LocalModelUnavailable, CacheDamaged, ValueError) as exc:
        raise EvalFailed(str(exc)) from None
    layer = CallLayer(
        {target.name: target}, {target.name: backend}, Ledger(plan.budget), sink, cache=None
    )
    # plain: the built-in template; deploy: runtime/harness.py
    scorer = Scorer(layer, env, target.name, prompts=None, deploy_task=task)
    try:
        trajectories = await scorer.rollout(skill, items, PHASE, remember=False)
    except (CallFailed, BudgetExhausted, ReplayMiss) as exc:
        raise EvalFailed(f"a call to '{target.name}' failed: {exc}") from None
    finally:
        await backend.aclose()
    n = len(trajectories)
    return sum(t.hard for t in trajectories) / n, sum(t.soft for t in trajectories) / n


def _notes(prompts: str | None) -> list[str]:
    if prompts and (Path(prompts) / "rollout_user.j2").is_file():
        return [
            f"the recipe's {prompts}/rollout_user.j2 is not used: "
            "--harness plain rolls out with the built-in template"
        ]
    return []
