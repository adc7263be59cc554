"""Plan files: a plan saved by `skopt plan -o`, or the `plan.json` of a run folder.

A compiled plan's paths (the recipe, data files, the skill, prompt templates, weights, a
replayed run) are relative to the folder skopt ran in. In a plan file they are relative to the
file's own folder, and reading the file turns them back into paths from the current folder:
a plan works from any folder, and a folder holding a recipe, its data and a plan can move as
a whole. Absolute paths stay as they are; `out` is where runs go from the current folder, so it
is not moved (a sleep recipe's `out` is relative to its project, which moves). `--set` flags
are kept as typed: a flag naming a relative path resolves against the folder skopt runs in,
like any command-line path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from skopt.compiler.plan import EnvSettings, Job, ModelSettings, Plan, SleepJob

Move = Callable[[str], str]


class PlanUnreadable(Exception):
    """The file is not a plan this skopt can read."""


def plan_text(plan: Plan, path: Path) -> str:
    """The plan as the JSON text of a file at `path`."""
    moved = _moved(plan, _mover(Path.cwd(), path.absolute().parent))
    return moved.model_dump_json(indent=2) + "\n"


def read_plan(path: Path) -> Plan:
    """The plan in the file at `path`, its paths from the current folder."""
    try:
        plan = Plan.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValidationError) as exc:
        raise PlanUnreadable(f"{path} is not a plan skopt can read: {str(exc)[:200]}") from None
    return _moved(plan, _mover(path.absolute().parent, Path.cwd()))


def inputs(plan: Plan) -> list[str]:
    """Every path the plan names (the recipe, data, skills, templates, weights, recorded runs,
    a night's sources), as the plan has them."""
    found: list[str] = []

    def note(path: str) -> str:
        found.append(path)
        return path

    _moved(plan, note)
    return found


def _mover(old: Path, new: Path) -> Move:
    """Re-express a path relative to `old` as one relative to `new`."""

    def move(path: str) -> str:
        if Path(path).is_absolute():
            return path
        return os.path.relpath(os.path.join(old, path), new)

    return move


def _moved(plan: Plan, move: Move) -> Plan:
    return plan.model_copy(
        update={
            "recipe": move(plan.recipe),
            "models": [_model(m, move) for m in plan.models],
            "envs": [_env(e, move) for e in plan.envs],
            "jobs": [_job(j, move) for j in plan.jobs],
            "sleep": _night(plan.sleep, move) if plan.sleep else None,
        }
    )


def _maybe(path: str | None, move: Move) -> str | None:
    return None if path is None else move(path)


def _model(model: ModelSettings, move: Move) -> ModelSettings:
    return model.model_copy(
        update={"gguf": _maybe(model.gguf, move), "replay_from": _maybe(model.replay_from, move)}
    )


def _env(env: EnvSettings, move: Move) -> EnvSettings:
    return env.model_copy(
        update={
            "data": _maybe(env.data, move),
            "files": {split: move(path) for split, path in env.files.items()},
            "prompt": _maybe(env.prompt, move),
        }
    )


def _job(job: Job, move: Move) -> Job:
    train = job.train.model_copy(
        update={"skill": _maybe(job.train.skill, move), "prompts": _maybe(job.train.prompts, move)}
    )
    return job.model_copy(update={"train": train})


def _night(night: SleepJob, move: Move) -> SleepJob:
    s = night.settings
    settings = s.model_copy(
        update={
            "sources": [r.model_copy(update={"root": move(r.root)}) for r in s.sources],
            "project": move(s.project),
            "within": _maybe(s.within, move),
            "skill": move(s.skill),
        }
    )
    return night.model_copy(update={"settings": settings})
