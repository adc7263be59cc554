"""`skopt tui`, `skopt review` and `skopt adopt`: watch a run, review its changes, take them."""

from __future__ import annotations

import os
from pathlib import Path

import click

from skopt.runtime.adopt import Proposal, headline
from skopt.runtime.exits import Exit, codes_help
from skopt.ui.console import fail


@click.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("rundir", required=False, type=click.Path(file_okay=False))
def tui(rundir: str | None) -> None:
    """Watch a run: progress, spending, scores, decisions, skill and diffs.

    Follows the run's journal live when it is running (in another terminal), and opens
    finished, stopped and interrupted runs alike; a sweep folder shows its cells. With no
    RUNDIR: the newest run under runs/. Press ? for the keys."""
    from skopt.runtime.claim import NotARunFolder
    from skopt.ui.tui.app import monitor_app

    root = Path(rundir) if rundir else newest_run(Path("runs"))
    try:
        app = monitor_app(root)
    except NotARunFolder as exc:
        fail(str(exc), Exit.USAGE)
    app.run()


def newest_run(runs: Path) -> Path:
    """The run or sweep folder under `runs/` (recipe/time) that changed last."""
    from skopt.runtime.claim import read_marker

    found = [p for p in runs.glob("*/*") if p.is_dir() and read_marker(p) is not None]
    if not found:
        fail(f"no run under {runs}/: give a RUNDIR, or start one with skopt run", Exit.USAGE)
    return max(found, key=lambda p: os.stat(p).st_mtime)


@click.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("rundir", type=click.Path(file_okay=False))
def review(rundir: str) -> None:
    """Review a run's changes one by one, and adopt the ones you accept.

    The changes that took the initial skill to the best one, each with the step that brought
    it, its rationale and support, and the gate items it fixed and broke. j/k move, a accept,
    r reject, space toggle, enter details, A adopt, q quit; the live file as it would be after
    adopting is always shown."""
    from skopt.runtime.claim import NotARunFolder
    from skopt.ui.tui.app import review_app

    try:
        app = review_app(Path(rundir))
    except NotARunFolder as exc:
        fail(str(exc), Exit.USAGE)
    app.run()


@click.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("rundir", type=click.Path(file_okay=False))
@click.option("--all", "everything", is_flag=True, help="Adopt every change of the run.")
@click.option("--edit", "numbers", type=int, multiple=True, metavar="N", help="Adopt change N.")
def adopt(rundir: str, everything: bool, numbers: tuple[int, ...]) -> None:
    """Adopt a run's changes into the live skill file (without the UI).

    With neither --all nor --edit, lists the changes. Writes only the chosen ones into the
    skill file the recipe names, after a backup (RUNDIR/adopt/); refuses when the live file
    changed so that a chosen change no longer applies, when a change needs one not chosen, or
    when a change was adopted before. The receipt is RUNDIR/adopted.json."""
    from skopt.runtime.adopt import AdoptRefused, proposal
    from skopt.runtime.adopt import adopt as adopting
    from skopt.runtime.claim import NotARunFolder

    if everything and numbers:
        raise click.UsageError("give --all or --edit N, not both")
    try:
        found = proposal(Path(rundir))
        if not everything and not numbers:
            click.echo(listing(found))
            return
        chosen = [c.number for c in found.changes] if everything else list(numbers)
        done = adopting(Path(rundir), chosen)
    except (AdoptRefused, NotARunFolder) as exc:
        fail(str(exc), Exit.USAGE)
    click.echo(
        f"adopted change {', '.join(map(str, done.changes))} into {done.live}"
        f" (backup {done.backup}; receipt {Path(rundir) / 'adopted.json'})"
    )


def listing(p: Proposal) -> str:
    if not p.changes:
        return "the best skill is the initial one: nothing to adopt"
    n = len(p.changes)
    lines = [f"{n} change{'s' * (n != 1)} into {p.live}; adopt with --all or --edit N:"]
    for c in p.changes:
        lines.append(
            f"  {c.number:>3}  {c.source:<26} {headline(c)}"
            f"  (fixed {len(c.fixed)}, broke {len(c.broke)})"
        )
    return "\n".join(lines)
