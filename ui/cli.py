"""The `skopt` command line: the only place (with the TUI) that prints or colours anything."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from skopt.compiler.compile import Compiled, compile_recipe
from skopt.compiler.saved import plan_text
from skopt.grammar.format import format_recipe
from skopt.grammar.parse import parse
from skopt.grammar.source import read_source
from skopt.runtime.exits import Exit, codes_help
from skopt.ui.console import (
    compiled,
    diagnostics_summary,
    fail,
    print_diagnostics,
    set_option,
    write_report,
)
from skopt.ui.import_command import import_
from skopt.ui.plan_view import render_plan
from skopt.ui.review_commands import adopt, review, tui
from skopt.ui.run_command import run
from skopt.ui.sleep_commands import sleep

COMPLETION = 'eval "$(_SKOPT_COMPLETE=bash_source skopt)"'


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
@set_option
def check(recipes: tuple[str, ...], sets: tuple[str, ...]) -> None:
    """Parse and check recipes; print every diagnostic."""
    failed = False
    for recipe in recipes:
        result = compile_recipe(recipe, sets)
        print_diagnostics(result.diagnostics, result.sources)
        failed |= not result.ok
        verdict = "ok" if result.ok else "failed"
        click.echo(f"{recipe}: {verdict} ({diagnostics_summary(result.diagnostics)})", err=True)
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
@set_option
def plan(recipe: str, as_json: bool, output: str | None, sets: tuple[str, ...]) -> None:
    """Compile a recipe and preview sizes, schedule, calls, tokens, cost and budget."""
    result: Compiled = compile_recipe(recipe, sets)
    print_diagnostics(result.diagnostics, result.sources)
    if result.plan is None:
        click.echo(f"{recipe}: failed ({diagnostics_summary(result.diagnostics)})", err=True)
        sys.exit(Exit.USAGE)
    if output:
        try:
            Path(output).write_text(plan_text(result.plan, Path(output)), encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}", Exit.FAILED)
        click.echo(f"plan saved to {output}", err=True)
    click.echo(result.plan.model_dump_json(indent=2) if as_json else render_plan(result.plan))


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
    text = write_report(Path(rundir))
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
    type=click.Choice(["plain", "deploy"]),
    default="plain",
    show_default=True,
    help="How the target sees the skill. plain: the skill as the system message, the task as "
    "the user message with the env's answer-format line (the built-in rollout template). "
    "deploy: as a user deploys it: the skill and a one-line task statement (the env's `task`) "
    "as the system message, the item's raw input as the user message, no format line.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the score as JSON.")
@set_option
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
    plan = compiled(recipe, sets)
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


@main.command(epilog=codes_help(Exit.OK, Exit.USAGE))
def lsp() -> None:
    """Serve the language server protocol on stdio, for editors.

    Diagnostics as you type (those of check, imports followed), hover, completion,
    go-to-definition and formatting (that of fmt) for .skopt recipes."""
    from skopt.ui.lsp.server import serve

    serve()


main.add_command(run)
main.add_command(tui)
main.add_command(review)
main.add_command(adopt)
main.add_command(sleep)
main.add_command(import_)
