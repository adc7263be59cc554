"""The compiler's entry: recipe file (+ `--set` flags) → diagnostics and, when clean, a plan.

load (imports) → apply --set → check → settings → lower (data, schedule, phases, cost)
→ budget verdict → hashes. Every stage adds to one list of diagnostics; the plan exists only
when there are no errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skopt.compiler import budget as budgets
from skopt.compiler.check import CheckedRecipe, Resolved, api_key_warnings, check
from skopt.compiler.dataset import DataError
from skopt.compiler.lock import changes, hashes, version
from skopt.compiler.lower import (
    MAX_STEPS,
    JobInputs,
    build_job,
    cell_name,
    data_problem,
    sweep_cells,
    too_many_steps,
    total_steps,
)
from skopt.compiler.lower_sleep import build_night
from skopt.compiler.overrides import COMMAND_LINE, apply_sets, command_line_source
from skopt.compiler.plan import (
    AshaStop,
    Budget,
    EnvSettings,
    Job,
    ModelSettings,
    Plan,
    SleepJob,
    SweepSettings,
    Verdict,
)
from skopt.compiler.scope import load
from skopt.compiler.settings import (
    budget_settings,
    env_settings,
    model_settings,
    sleep_settings,
    train_settings,
)
from skopt.compiler.splits import load_splits
from skopt.compiler.templates import check_prompts, render_failure
from skopt.compiler.types import Func
from skopt.grammar.source import Diagnostic, Span, error, has_errors, warning
from skopt.prompts import TemplateFailure, shared_budget

# Loop steps and calls of all the template renders of one plan (one rollout message per item)
PLAN_RENDER_STEPS = 1_000_000


@dataclass
class Compiled:
    plan: Plan | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def compile_recipe(
    path: str, sets: Sequence[str] = (), overlay: Mapping[str, str] | None = None
) -> Compiled:
    """`overlay`: texts that stand in for recipe files, by resolved path (unsaved buffers)."""
    scope = load(path, overlay)
    result = Compiled(None, list(scope.diagnostics), dict(scope.sources))
    if sets:
        result.sources[COMMAND_LINE] = command_line_source(sets)
    if scope.broken:
        return result
    blocks, problems = apply_sets(scope.blocks, sets)
    result.diagnostics += problems
    checked = check(blocks)
    result.diagnostics += checked.diagnostics
    if result.ok:
        result.plan = _lower(path, sets, checked, result)
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _lower(path: str, sets: Sequence[str], checked: CheckedRecipe, result: Compiled) -> Plan | None:
    models = {name: model_settings(m) for name, m in checked.models.items()}
    envs = {name: env_settings(e) for name, e in checked.envs.items()}
    budget, budget_blocks = _budget(checked)
    jobs: list[Job] = []
    night: SleepJob | None = None
    job = checked.job
    if job is not None:
        used = [str(job.values["target"]), str(job.values["optimizer"])]
        judge = job.values.get("judge")
        if isinstance(judge, Func) and isinstance(judge.args.get("model"), str):
            used.append(str(judge.args["model"]))
        result.diagnostics += api_key_warnings(checked, used)
        result.diagnostics += _price_warnings(checked, models, used)
        if job.spec.kind == "train":
            result.diagnostics += check_prompts(job, checked.envs.get(str(job.values["env"])))
            if result.ok:  # templates that fail their check are never rendered
                jobs = _train_jobs(
                    checked, job, models, envs, budget, budget_blocks, result.diagnostics
                )
        else:
            night = _sleep_job(path, job, models, budget, budget_blocks, result.diagnostics)
    if not result.ok:
        return None
    kind = job.spec.kind if job else "none"
    sweep = _sweep(checked, jobs, models, budget, budget_blocks, result.diagnostics)
    return Plan(
        skopt_version=version(),
        recipe=path,
        sets=list(sets),
        job_kind=kind,
        models=list(models.values()),
        envs=list(envs.values()),
        budget=budget,
        jobs=jobs,
        hashes=hashes(
            path, result.sources, sets, list(envs.values()), jobs, list(models.values()), night
        ),
        sleep=night,
        sweep=sweep,
    )


def _sweep(
    checked: CheckedRecipe,
    jobs: list[Job],
    models: dict[str, ModelSettings],
    budget: Budget,
    budget_blocks: list[Resolved],
    diagnostics: list[Diagnostic],
) -> SweepSettings | None:
    """The sweep's options and its verdict: one budget for every cell."""
    if not checked.has_sweep:
        return None
    options = checked.sweep_options
    executor, stop = options.get("executor"), options.get("stop")
    asha = None
    if isinstance(stop, Func) and stop.name == "asha":
        grace, reduction = stop.args["grace"], stop.args["reduction"]
        assert isinstance(grace, int) and isinstance(reduction, int)
        asha = AshaStop(grace=grace, reduction=reduction)
    verdict = budgets.sweep_verdict(jobs, budget, models)
    where = _budget_span(budget_blocks, verdict)
    diagnostics += budgets.sweep_diagnostics(verdict, where) if where else []
    name = executor.name if isinstance(executor, Func) else "local"
    return SweepSettings(executor="ray" if name == "ray" else "local", stop=asha, verdict=verdict)


def _budget(checked: CheckedRecipe) -> tuple[Budget, list[Resolved]]:
    """The top-level budget, overridden key by key by one inside the job block.

    Also returns the blocks that set it, innermost first, to point diagnostics at.
    """
    inner = checked.job.children.get("budget") if checked.job else None
    blocks = [b for b in (inner, checked.budget) if b is not None]
    merged: dict[str, object] = {}
    for block in reversed(blocks):
        merged |= {k: v for k, v in budget_settings(block).model_dump().items() if v is not None}
    return Budget.model_validate(merged), blocks


def _price_warnings(
    checked: CheckedRecipe, models: dict[str, ModelSettings], used: list[str]
) -> list[Diagnostic]:
    found = []
    for name in dict.fromkeys(used):
        settings = models.get(name)
        if settings is None or settings.price is not None:
            continue
        block = checked.models[name]
        where = block.span_of("name") if block.written("name") else block.block.kind.span
        found.append(
            warning(
                f"no price known for model '{name}' ({settings.model or settings.provider})",
                where,
                "its cost will show as unknown",
                help="add: price { input = $..., output = $..., per = 1M }",
            )
        )
    return found


def _train_jobs(
    checked: CheckedRecipe,
    job: Resolved,
    models: dict[str, ModelSettings],
    envs: dict[str, EnvSettings],
    budget: Budget,
    budget_blocks: list[Resolved],
    diagnostics: list[Diagnostic],
) -> list[Job]:
    env_name = str(job.values["env"])
    env = envs[env_name]
    try:
        splits = load_splits(env)
    except DataError as exc:
        diagnostics.append(data_problem(exc, checked.envs[env_name]))
        return []
    skill_text = _skill_text(job, diagnostics)
    if skill_text is None:
        return []
    jobs = []
    cells = sweep_cells(checked.sweep)
    for overrides in cells:
        train = train_settings(job, overrides)
        if total_steps(train, splits) > MAX_STEPS:
            diagnostics.append(too_many_steps(train, splits, job))
            return []
        inputs = JobInputs(
            train, splits, models[train.target], models[train.optimizer], env, skill_text
        )
        try:
            with shared_budget(PLAN_RENDER_STEPS):
                built = build_job(cell_name(overrides), overrides, inputs, diagnostics, job)
        except TemplateFailure as failure:
            diagnostics.append(render_failure(failure, job, checked.envs.get(env_name)))
            return []
        built = built.model_copy(update={"verdict": budgets.verdict(built, budget, models)})
        where = _budget_span(budget_blocks, built.verdict)
        found = budgets.diagnostics(built, where) if where else []
        # the cells of a sweep share the budget: what one cell alone would cover says little
        # (the sweep's verdict says it); one that cannot even start is still an error
        diagnostics += [d for d in found if len(cells) == 1 or d.is_error]
        jobs.append(built)
    return jobs


def _sleep_job(
    path: str,
    job: Resolved,
    models: dict[str, ModelSettings],
    budget: Budget,
    budget_blocks: list[Resolved],
    diagnostics: list[Diagnostic],
) -> SleepJob | None:
    skill_text = _skill_text(job, diagnostics)
    if skill_text is None:
        return None
    settings = sleep_settings(job, path)
    try:
        with shared_budget(PLAN_RENDER_STEPS):
            night = build_night(settings, models, skill_text)
    except TemplateFailure as failure:  # the built-in templates: a bug, but never a traceback
        diagnostics.append(error(str(failure), job.block.kind.span, "this night"))
        return None
    night = night.model_copy(update={"verdict": budgets.night_verdict(night, budget, models)})
    where = _budget_span(budget_blocks, night.verdict)
    diagnostics += budgets.night_diagnostics(night, where) if where else []
    return night


def _budget_span(blocks: list[Resolved], verdict: Verdict | None) -> Span | None:
    """Where the binding limit is written (inner budget first), or the budget block."""
    if not blocks or verdict is None:
        return None
    for key in verdict.limits:
        for block in blocks:
            if block.written(key):
                return block.span_of(key)
    return blocks[0].block.kind.span


def _skill_text(job: Resolved, diagnostics: list[Diagnostic]) -> str | None:
    skill = job.values["skill"]
    if not isinstance(skill, str):
        return ""
    try:
        return Path(skill).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        problem = f"the skill file {skill} is not valid UTF-8"
    except OSError as exc:
        problem = f"cannot read the skill file {skill}: {exc.strerror or exc}"
    diagnostics.append(error(problem, job.span_of("skill"), "this skill"))
    return None


def stale(plan: Plan) -> list[str]:
    """Why a saved plan no longer matches its recipe; empty when it is fresh."""
    result = compile_recipe(plan.recipe, plan.sets)
    if result.plan is None:
        return ["the recipe no longer compiles"]
    return changes(plan.hashes, result.plan.hashes, sleep=plan.job_kind == "sleep")
