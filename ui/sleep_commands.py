"""`skopt sleep {harvest,dry-run,run,status,adopt,schedule,unschedule} RECIPE` (SPEC §7)."""

from __future__ import annotations

import asyncio
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from skopt.compiler.plan import Plan
from skopt.runtime.exits import Exit, codes_help
from skopt.ui.console import compiled, fail, set_option
from skopt.ui.progress import Progress


def sleep_plan(recipe: str, sets: tuple[str, ...] = ()) -> Plan:
    plan = compiled(recipe, sets)
    if plan.sleep is None:
        fail(f"{recipe} has no sleep block: nothing to do", Exit.USAGE)
    return plan


@click.group(name="sleep", epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, Exit.BUDGET))
def sleep() -> None:
    """Learn from past coding-agent sessions, stage a gated proposal, adopt it edit by edit.

    A night harvests the recipe's sources (read-only, redacted), mines the tasks that recur and
    the corrections typed, replays them with the target and the current skill, judges them,
    proposes at most lr edits inside the skill's LEARNED region, and gates them on held-out
    tasks. Nothing changes the live file until you adopt."""


@sleep.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the sessions as JSON (redacted).")
@set_option
def harvest(recipe: str, as_json: bool, sets: tuple[str, ...]) -> None:
    """Read the sources (read-only) and list the sessions a night would mine."""
    from skopt.runtime.sleep.night import sessions_to_mine

    plan = sleep_plan(recipe, sets)
    assert plan.sleep is not None
    found = sessions_to_mine(plan.sleep.settings, datetime.now(UTC))
    if as_json:
        click.echo(found.model_dump_json(indent=2))
        return
    for session in found.sessions:
        prompts = len(session.turns)
        click.echo(
            f"{session.agent:<11} {session.session_id[:18]:<18} {session.kind:<11}"
            f" {prompts} prompt{'s' * (prompts != 1)}  {session.cwd or '?'}"
        )
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(found.skipped.counts.items()))
    total = f"{len(found.sessions)} sessions from {found.files} files"
    click.echo(f"{total}; passed over: {skipped or 'none'}", err=True)


def _night(recipe: str, dry_run: bool, quiet: bool, sets: tuple[str, ...]) -> None:
    from skopt.runtime.errors import LocalModelUnavailable, MissingKey
    from skopt.runtime.run import FAILURES
    from skopt.runtime.sleep.cycle import sleep_job

    plan = sleep_plan(recipe, sets)
    try:
        slept = asyncio.run(sleep_job(plan, dry_run, None if quiet else Progress(plan=plan)))
    except (KeyboardInterrupt, asyncio.CancelledError):
        click.echo("interrupted: skopt sleep run continues the night", err=True)
        sys.exit(Exit.INTERRUPTED)
    except FAILURES as exc:
        if not isinstance(exc, MissingKey | LocalModelUnavailable):
            click.echo("what finished is kept: skopt sleep run continues the night", err=True)
        fail(str(exc), Exit.FAILED)
    if slept.report:
        click.echo(slept.report, nl=False)
    click.echo(slept.outcome.message, err=True)
    sys.exit(slept.outcome.exit)


@sleep.command(
    name="dry-run",
    epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, Exit.BUDGET, Exit.INTERRUPTED),
)
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="No live progress; only the report.")
@set_option
def dry_run(recipe: str, quiet: bool, sets: tuple[str, ...]) -> None:
    """A night that stages nothing: harvest, mine, replay, judge, propose, gate; the report."""
    _night(recipe, True, quiet, sets)


@sleep.command(epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE, Exit.BUDGET, Exit.INTERRUPTED))
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--quiet", is_flag=True, help="No live progress; only the report.")
@set_option
def run(recipe: str, quiet: bool, sets: tuple[str, ...]) -> None:
    """A night, staged under the project's .skopt/sleep/ (a killed night is continued)."""
    _night(recipe, False, quiet, sets)


@sleep.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
@set_option
def status(recipe: str, sets: tuple[str, ...]) -> None:
    """The recipe's nights: what each staged, and what was adopted."""
    from skopt.runtime.sleep.cycle import staging
    from skopt.runtime.sleep.stage import nights

    plan = sleep_plan(recipe, sets)
    found = nights(staging(plan))
    if not found:
        click.echo(f"no night yet under {staging(plan)}: skopt sleep run {recipe}")
        return
    for folder in found:
        click.echo(f"{folder.name}  {night_status(folder)}")


def night_status(folder: Path) -> str:
    """What a night staged and what of it was adopted, or how it ended before staging."""
    from skopt.runtime.adopt import receipts
    from skopt.runtime.artifacts import RunFolder
    from skopt.runtime.journal import read_journal
    from skopt.runtime.sleep.stage import manifest

    m = manifest(folder)
    if m is None:
        ended = read_journal(RunFolder(folder).events).ended
        if ended is not None and ended.outcome == "budget":
            return f"stopped by the budget, nothing staged ({ended.detail})"
        how = ended.outcome if ended is not None else "killed"
        return f"not staged ({how}: skopt sleep run continues it)"
    scores = f" · held out {m.before:.3f} → {m.after:.3f}" if m.after is not None else ""
    if not m.accepted:
        return f"rejected by the gate ({m.reason}){scores}"
    adopted = sorted({n for a in receipts(folder) for n in a.changes})
    taken = f", adopted change {', '.join(map(str, adopted))}" if adopted else ""
    return f"staged{taken}{scores}"


@sleep.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
@click.option("--night", help="The night to adopt from (default: the newest staged one).")
@click.option("--all", "everything", is_flag=True, help="Adopt every change of the night.")
@click.option("--edit", "numbers", type=int, multiple=True, metavar="N", help="Adopt change N.")
@set_option
def adopt(
    recipe: str,
    night: str | None,
    everything: bool,
    numbers: tuple[int, ...],
    sets: tuple[str, ...],
) -> None:
    """Adopt a staged night's changes into the live file (with neither --all nor --edit: list
    them). A backup first; refused when the live file changed since staging."""
    from skopt.runtime.sleep.cycle import staging
    from skopt.runtime.sleep.stage import manifest, nights
    from skopt.ui.review_commands import adopt as adopting

    plan = sleep_plan(recipe, sets)
    root = staging(plan)
    staged = [p for p in nights(root) if (m := manifest(p)) and m.accepted]
    chosen = root / night if night else (staged[-1] if staged else None)
    if chosen is None:
        fail(f"no night under {root} proposes anything: skopt sleep status {recipe}", Exit.USAGE)
    args = [str(chosen), *(["--all"] if everything else []), *(f"--edit={n}" for n in numbers)]
    adopting.main(args, standalone_mode=False)


@sleep.command(epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
def schedule(recipe: str) -> None:
    """Install the recipe's nightly crontab entry (its `schedule`), replacing an older one."""
    from skopt.runtime.sleep.cycle import staging
    from skopt.runtime.sleep.schedule import ScheduleFailed
    from skopt.runtime.sleep.schedule import schedule as scheduling

    plan = sleep_plan(recipe)
    assert plan.sleep is not None
    cron = plan.sleep.settings.schedule
    if not cron:
        fail(f'{recipe} has no `schedule` in its sleep block (e.g. "17 3 * * *")', Exit.USAGE)
    skopt = Path(shutil.which("skopt") or Path(sys.executable).with_name("skopt"))
    log = (staging(plan) / "cron.log").resolve()
    log.parent.mkdir(parents=True, exist_ok=True)  # cron's shell opens the log before skopt runs
    try:
        block = scheduling(Path(recipe), cron, skopt, log)
    except ScheduleFailed as exc:
        fail(str(exc), Exit.FAILED)
    click.echo(block, nl=False)


@sleep.command(epilog=codes_help(Exit.OK, Exit.FAILED, Exit.USAGE))
@click.argument("recipe", type=click.Path(dir_okay=False))
def unschedule(recipe: str) -> None:
    """Remove the recipe's crontab entry (the other entries stay as they are)."""
    from skopt.runtime.sleep.schedule import ScheduleFailed
    from skopt.runtime.sleep.schedule import unschedule as unscheduling

    try:
        removed = unscheduling(Path(recipe))
    except ScheduleFailed as exc:
        fail(str(exc), Exit.FAILED)
    click.echo("removed the entry" if removed else "there was no entry for this recipe")
