"""`skopt import skillopt CONFIG.yaml [-o RECIPE]`: another tool's config as a skopt recipe."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from skopt.runtime.exits import Exit, codes_help
from skopt.ui.console import diagnostics_summary, fail, print_diagnostics


@click.group(name="import", epilog=codes_help(Exit.OK, Exit.USAGE))
def import_() -> None:
    """Convert another tool's configuration into a recipe."""


@import_.command(epilog=codes_help(Exit.OK, Exit.USAGE))
@click.argument("config", type=click.Path(dir_okay=False))
@click.option(
    "--cfg-options",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a config key after inheritance, as SkillOpt does (section.key=value; "
    "repeatable, and every KEY=VALUE after the file counts too).",
)
@click.argument("more_options", nargs=-1, metavar="[KEY=VALUE]...")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Write the recipe to FILE (refused if it exists) instead of standard output.",
)
@click.option("--force", is_flag=True, help="With -o: overwrite an existing FILE.")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    default=".",
    show_default=True,
    help="The folder SkillOpt ran in: its relative paths (skill_init, data_path, split_dir, "
    "out_root) start there.",
)
def skillopt(
    config: str,
    options: tuple[str, ...],
    more_options: tuple[str, ...],
    output: str | None,
    force: bool,
    root: str,
) -> None:
    """Convert a SkillOpt research-trainer YAML config into a recipe.

    Follows the _base_ chain, applies --cfg-options, maps every key that skopt has a
    counterpart for, and reports every other key by name with the reason (a warning); values
    that had to be approximated carry a comment in the recipe. Nothing is written when the
    config cannot be read, is cyclic or holds an invalid value (exit 2)."""
    from skopt.compiler.importers.skillopt import import_skillopt

    target = Path(output) if output else None
    if target is not None and target.exists() and not force:
        fail(f"{output} already exists; nothing was written (--force overwrites it)", Exit.USAGE)
    recipe_dir = target.parent if target is not None else Path(".")
    result = import_skillopt(config, [*options, *more_options], Path(root), recipe_dir)
    print_diagnostics(result.diagnostics, result.sources)
    summary = diagnostics_summary(result.diagnostics)
    if result.recipe is None:
        click.echo(f"{config}: not converted ({summary})", err=True)
        sys.exit(Exit.USAGE)
    if target is None:
        click.echo(result.recipe, nl=False)
    else:
        try:
            with target.open("w" if force else "x", encoding="utf-8") as handle:
                handle.write(result.recipe)
        except FileExistsError:
            fail(f"{output} already exists; nothing was written", Exit.USAGE)
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}", Exit.USAGE)
    where = f" to {output}" if output else ""
    click.echo(f"{config}: converted{where} ({summary})", err=True)
