"""How many LLM calls each phase of a sleep night makes, as a function of how the night goes.

The night (runtime) and the plan both use these definitions, as training's engine and plan share
`compiler/phases.py`: the runtime asks with what it found, the plan with the worst and the typical
night. A night runs its phases in this order, each call labelled with its phase:

- mine (optimizer): one call per harvested session.
- replay (target): every mined task once with the current skill, train and held-out.
- judge (judge model, rubric only): every replay of the replay phase; rules and exact judge
  locally and call nothing.
- reflect (optimizer): one call per minibatch of failed train tasks, then one that selects at most
  lr edits from what they proposed (when they proposed anything usable).
- gate: the candidate skill replayed on the held-out tasks (target), and each replay judged
  (judge model, rubric only); nothing when no candidate was made.

Every optimizer and rubric-judge call may be asked once more when its JSON is unusable
(`phases.REASKS`, as in training), so the maxima count it twice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from skopt.compiler.phases import REASKS, Span3, minibatches
from skopt.compiler.plan import Role, SleepPhaseName

Key = tuple[SleepPhaseName, Role]


def split_sizes(tasks: int, holdout: float) -> tuple[int, int]:
    """(train, held out) of `tasks` mined tasks: round(tasks × holdout), half up, held out, at
    least one and leaving at least one to train on; fewer than two tasks are all train (there
    is nothing to gate on, so nothing is proposed). Which tasks go where: the runtime's hash."""
    if tasks < 2:
        return tasks, 0
    held = min(tasks - 1, max(1, math.floor(tasks * holdout + 0.5)))
    return tasks - held, held


@dataclass(frozen=True, slots=True)
class NightShape:
    """What a night's calls depend on, apart from how it goes."""

    holdout: float
    minibatch: int
    rubric: bool  # the judge is a model (judge = rubric(model = ...))


@dataclass(frozen=True, slots=True)
class NightOutcome:
    """How one night went."""

    sessions: int  # sessions harvested (at most max_sessions)
    tasks: int  # tasks mined and kept (at most max_tasks)
    failures: int  # train tasks that failed with the current skill
    usable: bool  # the reflections proposed at least one usable edit: a candidate is made


def reflect_calls(shape: NightShape, outcome: NightOutcome) -> tuple[int, int]:
    """(reflections, selections) of the reflect phase: a reflection per minibatch of failed
    train tasks, and one selection when they proposed anything usable."""
    train, _ = split_sizes(outcome.tasks, shape.holdout)
    reflections = minibatches(min(outcome.failures, train), shape.minibatch)
    return reflections, 1 if outcome.usable and reflections else 0


def night_calls(shape: NightShape, outcome: NightOutcome) -> dict[Key, int]:
    """The calls of every phase of a night that went as `outcome` says (first answers only)."""
    train, held = split_sizes(outcome.tasks, shape.holdout)
    reflections, selection = reflect_calls(shape, outcome)
    replays = train + held
    gate = held if selection else 0  # a selection means a candidate
    calls: dict[Key, int] = {
        ("mine", "optimizer"): outcome.sessions,
        ("replay", "target"): replays,
        ("reflect", "optimizer"): reflections + selection,
        ("gate", "target"): gate,
    }
    if shape.rubric:
        calls["judge", "judge"] = replays
        calls["gate", "judge"] = gate
    return calls


def extremes(
    shape: NightShape, max_sessions: int, max_tasks: int
) -> tuple[NightOutcome, NightOutcome, NightOutcome]:
    """The nights the plan counts: none (no session), the typical one (every session harvested,
    every task mined, half the train tasks failing, a candidate made) and the worst (every train
    task failing). Each count grows with sessions, tasks and failures, so these are the
    extremes (a test walks every outcome of small nights)."""
    train, _ = split_sizes(max_tasks, shape.holdout)
    return (
        NightOutcome(0, 0, 0, False),
        NightOutcome(max_sessions, max_tasks, math.floor(train / 2 + 0.5), True),
        NightOutcome(max_sessions, max_tasks, train, True),
    )


def explain_night(shape: NightShape, max_sessions: int, max_tasks: int) -> dict[Key, Span3]:
    """Every phase's calls over all nights: [none, worst] with the typical night's as expected;
    the worst asks every optimizer and judge call twice."""
    none, typical, worst = (night_calls(shape, o) for o in extremes(shape, max_sessions, max_tasks))
    return {key: Span3(none[key], typical[key], asked(key[1], worst[key])) for key in worst}


def explain_reflect(shape: NightShape, max_sessions: int, max_tasks: int) -> tuple[Span3, Span3]:
    """The reflect phase's reflections and selection apart (their prompts differ)."""
    parts = [reflect_calls(shape, o) for o in extremes(shape, max_sessions, max_tasks)]
    return (
        Span3(parts[0][0], parts[1][0], asked("optimizer", parts[2][0])),
        Span3(parts[0][1], parts[1][1], asked("optimizer", parts[2][1])),
    )


def asked(role: Role, calls: int) -> int:
    """The most calls: an optimizer or judge call may be asked once more."""
    return calls if role == "target" else calls * (1 + REASKS)
