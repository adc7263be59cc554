"""Checking prompt overrides: a recipe's `prompts = "dir"` (templates replacing built-in ones
by file name) and an env's `prompt = "file"` (the rollout's user message). A template that
does not parse, uses a variable its phase does not provide, or fails a trial render with
example values (in the sandbox: it tried to leave it, or ran past a bound) is an error; a file
that replaces no built-in template is a warning. A template that fails only on some item while
the plan is built is reported by `render_failure`."""

from __future__ import annotations

from pathlib import Path

from skopt.compiler.check import Resolved
from skopt.grammar.source import Diagnostic, Span, did_you_mean, error, warning
from skopt.prompts import VARIABLES, TemplateFailure, needed, try_render

ROLLOUT = "rollout_user.j2"


def check_prompts(job: Resolved, env: Resolved | None) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    folder = job.text("prompts")
    if folder:
        where = job.span_of("prompts")
        for path in sorted(Path(folder).glob("*.j2")):
            found += _check_override(path, folder, where)
    prompt = env.text("prompt") if env else None
    if env is not None and prompt:
        path = Path(prompt)
        found += _check_variables(
            path.name, str(path.parent), VARIABLES[ROLLOUT], env.span_of("prompt")
        )
    return found


def _check_override(path: Path, folder: str, where: Span) -> list[Diagnostic]:
    if path.name.startswith("_"):
        return []  # a partial, checked through the templates that include it
    if path.name not in VARIABLES:
        help = did_you_mean(path.name, VARIABLES) or f"templates: {', '.join(VARIABLES)}"
        return [
            warning(
                f"{path.name} in the prompts folder replaces no built-in template",
                where,
                "never used",
                help,
            )
        ]
    return _check_variables(path.name, folder, VARIABLES[path.name], where)


def _check_variables(
    name: str, folder: str, given: frozenset[str], where: Span
) -> list[Diagnostic]:
    try:
        missing = sorted(needed(name, folder) - given)
        if not missing:
            try_render(name, folder, given)
    except TemplateFailure as exc:
        return [error(str(exc), where, "this template")]
    if not missing:
        return []
    return [
        error(
            f"the template {name} uses {', '.join(map(repr, missing))}, which its phase lacks",
            where,
            "in this template",
            help=f"{name} is given: {', '.join(sorted(given))}",
        )
    ]


def render_failure(failure: TemplateFailure, job: Resolved, env: Resolved | None) -> Diagnostic:
    """A template that failed while the plan rendered it for an item: at the key naming it."""
    if env is not None and env.text("prompt"):
        where = env.span_of("prompt")
    elif job.text("prompts"):
        where = job.span_of("prompts")
    else:
        where = job.block.kind.span
    return error(str(failure), where, "this template")
