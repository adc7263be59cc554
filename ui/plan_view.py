"""The readable preview of a plan that `skopt plan` prints (SPEC §4)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Sequence

from skopt.compiler.cost import add
from skopt.compiler.gate_bound import fewest_fixes, stated
from skopt.compiler.night_calls import split_sizes
from skopt.compiler.plan import (
    PHASE_ORDER,
    Budget,
    Count,
    EnvSettings,
    Job,
    ModelSettings,
    Plan,
    Role,
    SleepJob,
    SlowUpdate,
    SweepSettings,
    Update,
    Usd,
    Verdict,
)


def count_text(c: Count, approx: bool = False) -> str:
    """`180`, or `[0, 1_440] ~720` where outcomes decide; digits grouped as in a recipe."""
    mark = "~" if approx else ""
    if c.min == c.max:
        return f"{mark}{c.min:_}"
    return f"[{c.min:_}, {c.max:_}] {mark or '~'}{round(c.expected):_}"


def usd_text(usd: Usd | None) -> str:
    if usd is None:
        return "unknown"
    if usd.max == 0:
        return "$0 (free)"
    return f"${usd.min:,.4f} / ${usd.expected:,.4f} / ${usd.max:,.4f}"


def render_plan(plan: Plan) -> str:
    lines = [
        f"skopt plan · {plan.recipe}" + (f" · --set {' '.join(plan.sets)}" if plan.sets else "")
    ]
    used = {m for job in plan.jobs for m in (job.train.target, job.train.optimizer)}
    if plan.sleep is not None:
        used = {m.model for m in plan.sleep.models}
    if any(m.provider == "sim" and m.name in used for m in plan.models):
        lines.append("(the sim provider is a simulation: no model is called, nothing is paid)")
    if plan.job_kind == "none":
        lines.append("no job block: this file is a library for imports")
        return "\n".join(lines)
    lines += ["", "models"] + [f"  {_model_line(m)}" for m in plan.models if m.name in used]
    if plan.sleep is not None:
        return "\n".join(lines + night_lines(plan.sleep, plan.budget))
    envs = {job.train.env for job in plan.jobs}
    lines += ["", "envs"] + [f"  {_env_line(e)}" for e in plan.envs if e.name in envs]
    if len(plan.jobs) == 1:
        lines += _job_lines(plan.jobs[0], plan.budget)
    else:
        lines += _sweep_lines(plan.jobs, plan.budget, plan.sweep)
    return "\n".join(lines)


def _model_line(m: ModelSettings) -> str:
    parts = [f"{m.name}: {m.provider}" + (f" {m.model}" if m.model else "")]
    parts.append(
        f"temperature {m.temperature:g}, max_tokens {m.max_tokens}, concurrency {m.concurrency}"
    )
    if m.base_url:
        parts.append(f"base_url {m.base_url}")
    price = m.price
    if price is None:
        parts.append("price unknown")
    elif price.source == "free":
        parts.append("free")
    else:
        parts.append(
            f"${price.input_usd:g} in / ${price.output_usd:g} out"
            f" per {price.per:,} ({price.source})"
        )
    return " · ".join(parts)


def _env_line(e: EnvSettings) -> str:
    kind = e.kind + (
        f"({', '.join(f'{k} = {v}' for k, v in e.kind_args.items())})" if e.kind_args else ""
    )
    source = e.data or ", ".join(f"{k} = {v}" for k, v in e.files.items()) or "generated"
    metric = e.metric + "".join(f"({k} = {v:g})" for k, v in e.metric_args.items())
    split = (
        f"split {e.split.train:.0%}/{e.split.valid:.0%}/{e.split.test:.0%} seed {e.split.seed}"
        + (f" stratified by {e.split.stratify}" if e.split.stratify else "")
        if e.split
        else "split by files"
    )
    return (
        f"{e.name}: {kind} · {source} · metric {metric} · answer_format {e.answer_format} · {split}"
    )


def _gate_bound(job: Job) -> str:
    """The smallest gain the gate can accept, at its confidence and on its items."""
    g = job.train.gate
    size = getattr(job.splits, g.split)
    items = min(g.samples, size) if g.samples else size
    fewest = fewest_fixes(g.confidence, g.tries)
    if not fewest:
        return f"gate confidence off: any gain above min_delta on {items} items is accepted"
    at = f"gate {stated(g.confidence, g.tries)}"
    if fewest > items:
        return f"{at}: no gain on {items} items can be accepted"
    fewer = fewest_fixes(g.confidence, 1)
    alone = f", {fewer} when a step can score only one candidate" if fewer < fewest else ""
    return (
        f"{at}: the smallest gain it accepts is {fewest} of {items} items fixed with none broken"
        f" (+{fewest / items:.1%}){alone}"
    )


def _job_lines(job: Job, budget: Budget) -> list[str]:
    t = job.train
    g = t.gate
    slow = (
        f"{t.slow_update.samples} {t.slow_update.split} samples, gate {_on(t.slow_update.gate)}"
        if t.slow_update
        else "off"
    )
    lines = [
        "",
        "settings",
        f"  target {t.target} · optimizer {t.optimizer} · env {t.env} · skill {t.skill or 'empty'}",
        f"  epochs {t.epochs} · batch_size {t.batch_size} · minibatch {t.minibatch}"
        f" · merge_batch {t.merge_batch}"
        f" · rollouts {t.rollouts} · lr {t.lr} · mode {t.mode} · reflect {t.reflect}"
        f" · demonstrations {_on(t.demonstrations)}",
        f"  gate: split {g.split}, metric {g.metric}"
        + (f"({g.mixed_weight:g})" if g.mixed_weight is not None else "")
        + f", samples {g.samples or 'all'}, repeats {g.repeats}, min_delta {g.min_delta:g}"
        + f", no_regression {_on(g.no_regression)}, tries {g.tries}",
        "  " + _gate_bound(job),
        f"  slow_update: {slow} · meta_skill {_on(t.meta_skill)} · test {_on(t.test)}"
        f" · seed {t.seed}",
        "",
        f"splits      train {job.splits.train} · valid {job.splits.valid} · test {job.splits.test}"
        f"   (assignment {job.assignment_hash[:12]})",
        f"schedule    {_n(job.schedule.steps_per_epoch, 'step')}/epoch × {_n(t.epochs, 'epoch')}"
        f" = {_n(job.schedule.total_steps, 'step')}",
        f"lr by step  {lr_text(job.schedule.lr)}",
        "",
        *_calls_table(job),
        "",
        *_cost_table(job),
    ]
    lines += ["", f"budget      {_verdict_text(budget, job.verdict)}"]
    return lines


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _on(flag: bool) -> str:
    return "on" if flag else "off"


MAX_LR_RUNS = 16  # a schedule with more runs shows its first and last ones


def lr_text(rates: Iterable[int | None]) -> str:
    """The lr of every step as runs (`4 ×3, 3 ×3, 2`): a 10,000-step plan stays one short line."""
    runs = [
        (value, len(list(group)))
        for value, group in itertools.groupby("auto" if r is None else str(r) for r in rates)
    ]
    shown = [value if n == 1 else f"{value} ×{n}" for value, n in runs]
    if len(shown) > MAX_LR_RUNS:
        half = MAX_LR_RUNS // 2
        hidden = len(shown) - 2 * half
        shown = [*shown[:half], f"… {hidden} more runs …", *shown[-half:]]
    return ", ".join(shown) or "(no steps)"


def _calls_table(job: Job) -> list[str]:
    rows = [("calls", "target", "optimizer")]
    by_key = {(t.phase, t.role): t for t in job.totals}
    for phase in PHASE_ORDER:
        by_target, by_optimizer = by_key.get((phase, "target")), by_key.get((phase, "optimizer"))
        if by_target is None and by_optimizer is None:
            continue
        rows.append(
            (
                phase,
                count_text(by_target.calls) if by_target else "—",
                count_text(by_optimizer.calls) if by_optimizer else "—",
            )
        )
    totals = {m.model: m.calls for m in job.models}
    target, optimizer = job.train.target, job.train.optimizer
    if target == optimizer:
        rows.append(("total (one model)", count_text(totals[target]), ""))
    else:
        rows.append(("total", count_text(totals[target]), count_text(totals[optimizer])))
    note = "  exact where the algorithm fixes it; [min, max] ~expected where it depends on outcomes"
    return [*_table(rows), note]


def _cost_table(job: Job) -> list[str]:
    rows = [("model", "input tokens", "output tokens", "usd min / expected / max")]
    for m in job.models:
        approx = (
            not m.tokens.exact or m.model == job.train.optimizer
        )  # optimizer prompts carry outputs
        rows.append(
            (
                m.model,
                count_text(m.input_tokens, approx),
                count_text(m.output_tokens),
                usd_text(m.usd),
            )
        )
    notes = [
        "  tokenizer: "
        + ", ".join(sorted({f"{m.model} {m.tokens.tokenizer}" for m in job.models}))
        + "; ~ marks estimates"
    ]
    bounds = [p.max_skill_tokens for p in job.phases if isinstance(p, Update | SlowUpdate)]
    if bounds:
        notes += [
            f"  skill grows to at most {max(bounds):_} target tokens, enforced while running"
            " (each edit, rewrite or",
            "  guidance is one optimizer reply at most); target input ranges run from an empty"
            " skill to it",
        ]
    return _table(rows) + notes


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return [
        "  " + "   ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in rows
    ]


def _verdict_text(budget: Budget, verdict: Verdict | None, night: bool = False) -> str:
    limits = _budget_text(budget)
    if verdict is None:
        return "none set" if not limits else f"{limits} (nothing to check)"
    if night:
        state = (
            "fits: the worst case of a night"
            if verdict.fits
            else f"cannot pay for a night's worst case ({', '.join(verdict.limits)})"
        )
    elif verdict.fits:
        state = f"fits: the worst case of all {verdict.total_steps} steps"
    elif verdict.covered_steps == 0:
        state = f"cannot pay for the first step's worst case ({', '.join(verdict.limits)})"
    else:
        state = (
            f"covers {verdict.covered_steps} of {verdict.total_steps} steps"
            f" (worst case runs out of {', '.join(verdict.limits)})"
        )
    extra = "".join(f"\n            {u}" for u in verdict.unchecked)
    return f"{limits} → {state}{extra}"


def _budget_text(budget: Budget) -> str:
    parts = []
    if budget.calls is not None:
        parts.append(f"calls {budget.calls:_}")
    if budget.tokens is not None:
        parts.append(f"tokens {budget.tokens:_}")
    if budget.usd is not None:
        parts.append(f"usd ${budget.usd:,.2f}")
    if budget.time_s is not None:
        parts.append(f"time {duration_text(budget.time_s)}")
    return ", ".join(parts)


def duration_text(seconds: float) -> str:
    for unit, size in (("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g}{unit}"
    return f"{seconds:g}s"


def _sweep_lines(jobs: list[Job], budget: Budget, sweep: SweepSettings | None) -> list[str]:
    rows = [("cell", "steps", "lr by step", "target calls", "optimizer calls", "usd max", "alone")]
    for job in jobs:
        by_model = {m.model: m for m in job.models}
        target, optimizer = by_model[job.train.target], by_model[job.train.optimizer]
        usd_max = (
            sum(m.usd.max for m in job.models if m.usd) if all(m.usd for m in job.models) else None
        )
        v = job.verdict
        fit = (
            "—" if v is None else ("fits" if v.fits else f"{v.covered_steps}/{v.total_steps} steps")
        )
        rows.append(
            (
                job.name,
                str(job.schedule.total_steps),
                lr_text(job.schedule.lr),
                count_text(target.calls),
                count_text(optimizer.calls) if optimizer is not target else "(same model)",
                "unknown" if usd_max is None else f"${usd_max:,.4f}",
                fit,
            )
        )
    total_calls = sum(m.calls.max for job in jobs for m in job.models)
    executor = sweep.executor if sweep else "local"
    lines = [
        "",
        f"sweep       {len(jobs)} cells on the {executor} executor (each cell is one run; the"
        " cells share one budget and one response cache)",
        *_table(rows),
        f"  total: at most {total_calls:,} calls over all cells; 'alone': the budget against"
        " one cell's worst case",
    ]
    if sweep is not None and sweep.stop is not None:
        a = sweep.stop
        lines.append(
            f"  early stop: asha(grace = {a.grace}, reduction = {a.reduction}) — at steps"
            f" {a.grace}, {a.grace * a.reduction}, …, a cell goes on only among the best"
            f" 1/{a.reduction} so far"
        )
    if _budget_text(budget):
        v = sweep.verdict if sweep else None
        if v is None:
            verdict = ""
        elif v.fits:
            verdict = " → fits: the worst case of every cell"
        else:
            verdict = (
                f" → covers the worst case of {v.covered_steps} of {v.total_steps} cells"
                f" (runs out of {', '.join(v.limits)})"
            )
        lines.append(f"budget      {_budget_text(budget)} for the whole sweep{verdict}")
    return lines


# -- a sleep night ----------------------------------------------------------------------------

ROLES: tuple[Role, ...] = ("target", "optimizer", "judge")


def night_lines(night: SleepJob, budget: Budget) -> list[str]:
    s = night.settings
    lines = ["", "sources"]
    lines += _table([(src.kind, os.path.normpath(src.root)) for src in s.sources])
    within = f"whose folder is inside {s.within}" if s.within else "from any folder"
    since = (
        f"since the last night (the first looks back {duration_text(s.lookback_s)})"
        if s.since_s is None
        else f"from the last {duration_text(s.since_s)}"
    )
    lines.append(f"  {', '.join(s.include)} sessions {within}, {since}")
    train, held = split_sizes(s.max_tasks, s.holdout)
    g = s.gate
    judge = f"rubric(model = {s.judge.model})" if s.judge.model else f"{s.judge.kind} (local)"
    return [
        *lines,
        "",
        "settings",
        f"  target {s.target} · optimizer {s.optimizer} · judge {judge} · skill {s.skill}",
        f"  max_sessions {s.max_sessions:_} · max_tasks {s.max_tasks:_} ({train:_} train,"
        f" {held:_} held out: holdout {s.holdout:.0%}) · lr {s.lr} · minibatch {s.minibatch}"
        f" · seed {s.seed}",
        f"  gate: held-out tasks, metric {g.metric}"
        + (f"({g.mixed_weight:g})" if g.mixed_weight is not None else "")
        + f", min_delta {g.min_delta:g}, no_regression {_on(g.no_regression)}",
        f"  project {s.project} · staged in {os.path.normpath(os.path.join(s.project, s.out))}"
        f" · schedule {s.schedule or 'none'}",
        "",
        *_night_calls(night),
        "",
        *_night_cost(night),
        "",
        f"budget      {_verdict_text(budget, night.verdict, night=True)}",
    ]


def _night_calls(night: SleepJob) -> list[str]:
    roles = [r for r in ROLES if any(rc.role == r for p in night.phases for rc in p.calls)]
    rows = [("calls of a night", *roles)]
    totals: dict[Role, Count] = {}
    for phase in night.phases:
        by_role = {rc.role: rc for rc in phase.calls}
        rows.append(
            (phase.phase, *(count_text(by_role[r].calls) if r in by_role else "—" for r in roles))
        )
        for rc in phase.calls:
            totals[rc.role] = add(totals[rc.role], rc.calls) if rc.role in totals else rc.calls
    rows.append(("total", *(count_text(totals[r]) for r in roles)))
    notes = [
        "  [none, most] ~expected: none when no session is found; the most when every session"
        " and task is",
        "  there, every train task fails and every optimizer or judge answer is asked again",
    ]
    if night.settings.judge.model is None:
        notes.append(f"  judge: {night.settings.judge.kind} checks run here, with no model call")
    return [*_table(rows), *notes]


def _night_cost(night: SleepJob) -> list[str]:
    rows = [("model", "input tokens", "output tokens", "usd min / expected / max")]
    for m in night.models:
        rows.append(
            (
                m.model,
                count_text(m.input_tokens, approx=True),  # run-time texts, counted at bounds
                count_text(m.output_tokens),
                usd_text(m.usd),
            )
        )
    notes = [
        "  tokenizer: "
        + ", ".join(sorted({f"{m.model} {m.tokens.tokenizer}" for m in night.models}))
        + "; ~ marks estimates",
        "  inputs carry texts of the night (sessions, tasks, notes), cut to their bounds while"
        " running and",
        "  counted at them here; answers at max_tokens",
    ]
    if night.max_skill_tokens is not None:
        notes += [
            f"  a candidate skill counts at most {night.max_skill_tokens:_} target tokens,"
            " enforced while running (the live",
            f"  skill and {_n(night.settings.lr, 'edit')} of one optimizer reply at most)",
        ]
    return _table(rows) + notes
