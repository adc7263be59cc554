"""The `skopt` command line: the only place (with the TUI) that prints or colours anything."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click

from skopt.compiler.compile import Compiled, compile_recipe, stale
from skopt.compiler.plan import Plan
from skopt.compiler.saved import PlanUnreadable, plan_text, read_plan
from skopt.grammar.format import format_recipe
from skopt.grammar.parse import parse
from skopt.grammar.source import Diagnostic, Severity, read_source, render
from skopt.runtime.exits import Exit, Outcome, codes_help
from skopt.ui.plan_view import render_plan
from skopt.ui.progress import Progress, summary_line

COMPLETION = 'eval "$(_SKOPT_COMPLETE=bash_source skopt)"'


def _style(text: str, diagnostic: Diagnostic) -> str:
    colour = "red" if diagnostic.severity is Severity.ERROR else "yellow"
    head, _, rest = text.partition("\n")
    return click.style(head, fg=colour, bold=True) + ("\n" + rest if rest else "")


def fail(message: str, code: Exit) -> NoReturn:
    """An error line on standard error, then exit with `code`."""
    click.echo(click.style("error: ", fg="red", bold=True) + message, err=True)
    sys.exit(code)


def print_diagnostics(diagnostics: Sequence[Diagnostic], sources: dict[str, str]) -> None:
    for diagnostic in sorted(diagnostics, key=Diagnostic.sort_key):
        click.echo(_style(render(diagnostic, sources), diagnostic) + "\n", err=True)


def _summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=f"Shell completion (bash; zsh and fish alike): {COMPLETION}",
)
@click.version_option(package_name="skopt")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the output: auto colours only a terminal, and never when NO_COLOR is set.",
)
@click.pass_context
def main(ctx: click.Context, color: str) -> None:
    """Train an agent's skill document like a neural network."""
    if color == "always":
        ctx.color = True
    elif color == "never" or os.environ.get("NO_COLOR"):
        ctx.color = False


@main.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("recipes", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one recipe value."
)
def check(recipes: tuple[str, ...], sets: tuple[str, ...]) -> None:
    """Parse and check recipes; print every diagnostic."""
    failed = False
    for recipe in recipes:
        result = compile_recipe(recipe, sets)
        print_diagnostics(result.diagnostics, result.sources)
        failed |= not result.ok
        click.echo(
            f"{recipe}: {'ok' if result.ok else 'failed'} ({_summary(result.diagnostics)})",
            err=True,
        )
    sys.exit(Exit.USAGE if failed else Exit.OK)


@main.command(epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, changed=True))
@click.argument("recipes", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--check", "check_only", is_flag=True, help="Change nothing; exit 1 if a file would change."
)
def fmt(recipes: tuple[str, ...], check_only: bool) -> None:
    """Rewrite recipes in canonical form (comments kept)."""
    changed = errors = False
    for recipe in recipes:
        text, problem = read_source(Path(recipe))
        parsed = parse(text, recipe) if problem is None else None
        if parsed is None or parsed.recipe is None:
            print_diagnostics(
                [problem] if problem else parsed.diagnostics if parsed else [], {recipe: text}
            )
            errors = True
            continue
        formatted = format_recipe(parsed.recipe, text)
        if formatted == text:
            continue
        changed = True
        if check_only:
            click.echo(f"would reformat {recipe}", err=True)
        else:
            Path(recipe).write_text(formatted, encoding="utf-8")
            click.echo(f"reformatted {recipe}", err=True)
    sys.exit(Exit.USAGE if errors else Exit.FAILED if changed and check_only else Exit.OK)


@main.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Save the plan (JSON) to FILE."
)
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one recipe value."
)
def plan(recipe: str, as_json: bool, output: str | None, sets: tuple[str, ...]) -> None:
    """Compile a recipe and preview sizes, schedule, calls, tokens, cost and budget."""
    result: Compiled = compile_recipe(recipe, sets)
    print_diagnostics(result.diagnostics, result.sources)
    if result.plan is None:
        click.echo(f"{recipe}: failed ({_summary(result.diagnostics)})", err=True)
        sys.exit(Exit.USAGE)
    if output:
        try:
            Path(output).write_text(plan_text(result.plan, Path(output)), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}", Exit.FAILED)
        click.echo(f"plan saved to {output}", err=True)
    click.echo(result.plan.model_dump_json(indent=2) if as_json else render_plan(result.plan))


@main.command(
    epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, Exit.BUDGET, Exit.STALE, Exit.INTERRUPTED)
)
@click.argument("recipe", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--resume", "resume_dir", type=click.Path(file_okay=False), help="Continue an interrupted run."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="The run folder: absent or empty (default: the recipe's out, a new folder).",
)
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one recipe value."
)
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Ask every call anew (answers are still cached for --resume).",
)
@click.option(
    "--cache-from",
    "cache_from",
    type=click.Path(file_okay=False, exists=True),
    help="An earlier run folder whose answers this run may use (free, booked as cache hits).",
)
@click.option("--quiet", is_flag=True, help="No live progress; only the outcome.")
@click.option(
    "--parallel",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="A sweep's cells run at most this many at a time.",
)
def run(
    recipe: str | None,
    resume_dir: str | None,
    out: str | None,
    sets: tuple[str, ...],
    no_cache: bool,
    cache_from: str | None,
    quiet: bool,
    parallel: int,
) -> None:
    """Train: carry out a recipe's plan (or continue one with --resume).

    A new run writes only into a new or empty folder. A recipe with a sweep runs every cell,
    each in its own run folder OUT/cells/NN, and ends with a table comparing them (also in
    OUT/sweep.md); --resume OUT continues every unfinished cell."""
    from skopt.runtime.claim import FolderRefused
    from skopt.runtime.errors import LocalModelUnavailable, MissingKey
    from skopt.runtime.launch import destination, launch, relaunch
    from skopt.runtime.run import FAILURES

    started = time.monotonic()
    show = None if quiet else _displays
    try:
        if resume_dir:
            if recipe or out or sets or no_cache:
                raise click.UsageError(
                    "--resume continues a run as it was started: give it no RECIPE, --out,"
                    " --set, --no-cache or --cache-from"
                )
            outcome = relaunch(Path(resume_dir), show, parallel)
        else:
            if recipe is None:
                raise click.UsageError("give a RECIPE, or --resume RUNDIR")
            plan = (
                _saved_plan(recipe, sets) if recipe.endswith(".json") else _compiled(recipe, sets)
            )
            if not plan.jobs:
                raise click.UsageError("this recipe has no train job to run")
            root, unique = destination(plan, out)
            _assemble_local_models(plan)
            earlier = Path(cache_from) if cache_from else None
            outcome = launch(plan, root, unique, show, no_cache, parallel, earlier)
    except KeyboardInterrupt:
        click.echo("interrupted: continue with skopt run --resume RUNDIR", err=True)
        sys.exit(Exit.INTERRUPTED)
    except FolderRefused as exc:
        fail(str(exc), Exit.USAGE)
    except FAILURES as exc:
        if not isinstance(exc, MissingKey | LocalModelUnavailable):  # failed mid-run
            click.echo("what finished is kept: continue with skopt run --resume RUNDIR", err=True)
        fail(str(exc), Exit.FAILED)
    _end_of_run(outcome, time.monotonic() - started)


def _displays(label: str, plan: Plan) -> Progress:
    return Progress(f"[{label}] " if label else "", plan)


def _end_of_run(outcome: Outcome, seconds: float) -> None:
    """A sweep's table, or a run's report.md and summary line; then the outcome's exit code."""
    from skopt.runtime.report import report as read_report
    from skopt.runtime.sweep import is_sweep

    table = outcome.folder / "sweep.md"
    if is_sweep(outcome.folder):
        if table.is_file():
            click.echo(table.read_text(encoding="utf-8"), nl=False)
        click.echo(outcome.message, err=True)
    else:
        _write_report(outcome.folder)  # SPEC §5.3: every run folder ends with its report.md
        click.echo(outcome.message, err=True)
        click.echo(summary_line(read_report(outcome.folder), seconds), err=True)
    sys.exit(outcome.exit)


def _write_report(folder: Path) -> str:
    """Make a run folder's report, save it as report.md, and return its text."""
    from skopt.runtime.artifacts import write_atomic
    from skopt.runtime.report import report as read_report
    from skopt.ui.report_view import as_markdown, render_report

    text = render_report(read_report(folder))
    try:
        write_atomic(folder / "report.md", as_markdown(text))
    except OSError as exc:
        click.echo(f"warning: report.md not written: {exc}", err=True)
    return text


def _assemble_local_models(plan: Plan) -> None:
    """Assemble the weights of the catalog models a run uses (once per machine), with a
    progress bar, before the run starts."""
    from skopt.runtime.local.weights import weights_for

    used = {name for job in plan.jobs for name in (job.train.target, job.train.optimizer)}
    for model in plan.models:
        if model.provider == "local" and model.name in used and not model.gguf:
            bar = _Bar(f"assembling {model.model}")
            try:
                weights_for(model.model, None, bar)
            finally:
                bar.close()


class _Bar:
    """A progress callback that shows a bar on stderr once there is progress to show."""

    def __init__(self, label: str) -> None:
        self.label = label
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(done - self._bar.pos)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def _compiled(recipe: str, sets: tuple[str, ...]) -> Plan:
    result = compile_recipe(recipe, sets)
    print_diagnostics(result.diagnostics, result.sources)
    if result.plan is None:
        sys.exit(Exit.USAGE)
    return result.plan


def _saved_plan(path: str, sets: tuple[str, ...]) -> Plan:
    """A plan saved with `skopt plan -o`; refused (exit 4) when its recipe changed since."""
    if sets:
        flags = " ".join(f"--set {shlex.quote(s)}" for s in sets)
        fail(
            f"--set cannot change a saved plan: it was compiled already. Make a new one with:"
            f" skopt plan RECIPE {flags} -o {shlex.quote(path)}",
            Exit.USAGE,
        )
    try:
        plan = read_plan(Path(path))
    except PlanUnreadable as exc:
        fail(str(exc), Exit.USAGE)
    reasons = stale(plan)
    if reasons:
        flags = "".join(f" --set {shlex.quote(s)}" for s in plan.sets)
        click.echo(f"the plan {path} is stale: " + "; ".join(reasons), err=True)
        click.echo(
            f"make it again with: skopt plan {shlex.quote(plan.recipe)}{flags}"
            f" -o {shlex.quote(path)}",
            err=True,
        )
        sys.exit(Exit.STALE)
    return plan


@main.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("rundir", type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def report(rundir: str, as_json: bool) -> None:
    """Report a run: scores, decisions, plan vs actual.

    Scores on the gate and test splits, each step's gate decision, and plan against actual
    calls, tokens and USD per phase and role; also saved as RUNDIR/report.md (on a run
    folder only: anything else is refused, and nothing is written)."""
    from skopt.runtime.claim import NotARunFolder
    from skopt.runtime.report import report as read_report

    try:
        made = read_report(Path(rundir))
    except NotARunFolder as exc:
        fail(str(exc), Exit.USAGE)
    text = _write_report(Path(rundir))
    click.echo(made.model_dump_json(indent=2) if as_json else text)


@main.command(name="eval", epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option(
    "--skill",
    "skill_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The skill to score (a Markdown file).",
)
@click.option(
    "--split",
    type=click.Choice(["test", "valid", "train"]),
    default="test",
    show_default=True,
    help="The env split to score on.",
)
@click.option(
    "--harness",
    type=click.Choice(["plain"]),
    default="plain",
    show_default=True,
    help="How the target sees the skill. plain, the only one for now: the skill as the system "
    "message, the task as the user message with the env's answer-format line (the built-in "
    "rollout template).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the score as JSON.")
@click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one recipe value."
)
def eval_(
    recipe: str, skill_file: str, split: str, harness: str, as_json: bool, sets: tuple[str, ...]
) -> None:
    """Score one skill with the recipe's target model.

    Rolls the skill out on a split of the recipe's env (default: test) and prints the mean
    hard and soft scores.
    Calls go through the call layer under the recipe's budget, with no response cache and no
    run folder: nothing is written."""
    import dataclasses
    import json

    from skopt.runtime.evaluate import CannotEvaluate, EvalFailed, evaluate

    try:
        skill = Path(skill_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(str(exc), param_hint="--skill") from None
    plan = _compiled(recipe, sets)
    try:
        result = evaluate(plan, skill, split, harness)
    except CannotEvaluate as exc:
        fail(str(exc), Exit.USAGE)
    except EvalFailed as exc:
        fail(str(exc), Exit.FAILED)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(result) | {"skill": skill_file}, indent=2))
        return
    sim = " (simulation)" if result.simulation else ""
    usd = "unknown" if result.usd is None else f"${result.usd:.4f}"
    click.echo(
        f"eval · {recipe} · skill {skill_file} · {split} split of env {result.env}"
        f" · target {result.target} · harness {harness}{sim}\n"
        f"hard {result.hard:.3f} · soft {result.soft:.3f} · n {result.items}\n"
        f"calls {result.calls} (cached {result.cache_hits}) · {usd}"
    )


@main.command(epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE))
@click.argument("directory", default=".", required=False, type=click.Path(file_okay=False))
def init(directory: str) -> None:
    """Scaffold a starter: recipe, skill and data.

    Writes skill.skopt (both models on the simulator, on a synthetic task it can learn: no API
    key needed), skills/skill.md and data/items.jsonl (a real task for a real model) into
    DIRECTORY (default: here). Refuses to overwrite a file."""
    from skopt.ui.scaffold import RECIPE, existing, write_starter

    folder = Path(directory)
    clash = existing(folder)
    if clash:
        names = ", ".join(str(p) for p in clash)
        fail(
            f"already there: {names}; nothing was written, choose another folder: skopt init DIR",
            Exit.USAGE,
        )
    try:
        written = write_starter(folder)
    except OSError as exc:
        fail(str(exc), Exit.FAILED)
    for path in written:
        click.echo(f"created {path}", err=True)
    recipe, run_dir = folder / RECIPE, folder / "runs" / "first"
    click.echo(
        f"next: skopt plan {recipe}\n"
        f"      skopt run {recipe} --out {run_dir}\n"
        f"      skopt report {run_dir}\n"
        "both models are the simulator, on a task it can learn (no API key needed);"
        f" the comments in {recipe} say how to train a real model on the real task"
    )
