"""The `skopt` command line: the only place (with the TUI) that prints or colours anything."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from skopt.compiler.compile import Compiled, compile_recipe
from skopt.grammar.format import format_recipe
from skopt.grammar.parse import parse
from skopt.grammar.source import Diagnostic, Severity, read_source, render
from skopt.ui.plan_view import render_plan

EXIT_OK, EXIT_CHANGED, EXIT_ERRORS = 0, 1, 2


def _style(text: str, diagnostic: Diagnostic) -> str:
    colour = "red" if diagnostic.severity is Severity.ERROR else "yellow"
    head, _, rest = text.partition("\n")
    return click.style(head, fg=colour, bold=True) + ("\n" + rest if rest else "")


def print_diagnostics(diagnostics: Sequence[Diagnostic], sources: dict[str, str]) -> None:
    for diagnostic in sorted(diagnostics, key=Diagnostic.sort_key):
        click.echo(_style(render(diagnostic, sources), diagnostic) + "\n", err=True)


def _summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="skopt")
def main() -> None:
    """Train an agent's skill document like a neural network."""


@main.command()
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
    sys.exit(EXIT_ERRORS if failed else EXIT_OK)


@main.command()
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
    sys.exit(EXIT_ERRORS if errors else EXIT_CHANGED if changed and check_only else EXIT_OK)


@main.command()
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
        sys.exit(EXIT_ERRORS)
    data = result.plan.model_dump_json(indent=2)
    if output:
        Path(output).write_text(data + "\n", encoding="utf-8")
        click.echo(f"plan saved to {output}", err=True)
    click.echo(data if as_json else render_plan(result.plan))
