"""What every command prints the same way: errors, diagnostics, a run folder's report.md."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click

from skopt.compiler.compile import compile_recipe
from skopt.compiler.plan import Plan
from skopt.grammar.source import Diagnostic, Severity, render
from skopt.runtime.exits import Exit


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


def diagnostics_summary(diagnostics: Sequence[Diagnostic]) -> str:
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    return f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}"


def compiled(recipe: str, sets: tuple[str, ...]) -> Plan:
    result = compile_recipe(recipe, sets)
    print_diagnostics(result.diagnostics, result.sources)
    if result.plan is None:
        sys.exit(Exit.USAGE)
    return result.plan


def write_report(folder: Path) -> str:
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


# `--set KEY=VALUE`, for every command that compiles a recipe.
set_option = click.option(
    "--set", "sets", multiple=True, metavar="KEY=VALUE", help="Override one recipe value."
)
