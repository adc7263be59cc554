"""`skopt sleep schedule` and `unschedule`: one managed crontab entry per sleep recipe, between
marker lines; every other line of the user's table stays byte for byte as it was.

The table is read with `crontab -l` and written with `crontab -` (tests put a stand-in on PATH).
The entry runs `skopt sleep run RECIPE` from the recipe's folder at the recipe's `schedule`,
appending its output to the night log beside the staged nights.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

BEGIN = "# >>> skopt sleep {recipe} (managed: skopt sleep unschedule removes it) >>>"
END = "# <<< skopt sleep {recipe} <<<"


class ScheduleFailed(Exception):
    """crontab is missing or refused the table; the message says which."""


def entry(cron: str, recipe: Path, skopt: Path, log: Path) -> str:
    """The managed block for `recipe` (absolute paths: cron runs with a bare environment)."""
    command = (
        f"cd {shlex.quote(str(recipe.parent))} && {shlex.quote(str(skopt))} sleep run"
        f" {shlex.quote(recipe.name)} >> {shlex.quote(str(log))} 2>&1"
    )
    name = str(recipe)
    return f"{BEGIN.format(recipe=name)}\n{cron} {command}\n{END.format(recipe=name)}\n"


def without_entry(table: str, recipe: Path) -> str:
    """The table less the managed block of `recipe` (the other lines untouched)."""
    begin, end = BEGIN.format(recipe=recipe), END.format(recipe=recipe)
    lines = table.splitlines(keepends=True)
    kept, inside = [], False
    for line in lines:
        stripped = line.rstrip("\r\n")
        if stripped == begin:
            inside = True
        elif stripped == end and inside:
            inside = False
        elif not inside:
            kept.append(line)
    return "".join(kept)


def with_entry(table: str, block: str, recipe: Path) -> str:
    """The table with `recipe`'s managed block replaced by (or added as) `block`."""
    rest = without_entry(table, recipe)
    if rest and not rest.endswith("\n"):
        rest += "\n"
    return rest + block


def read_table() -> str:
    """The user's crontab; empty when there is none yet."""
    try:
        done = subprocess.run(["crontab", "-l"], capture_output=True, check=False)
    except OSError as exc:
        raise ScheduleFailed(f"cannot run crontab: {exc}") from None
    if done.returncode != 0:
        if b"no crontab" in done.stderr.lower():
            return ""
        raise ScheduleFailed(f"crontab -l failed: {_text(done.stderr).strip()}")
    return _text(done.stdout)


def write_table(table: str) -> None:
    try:
        done = subprocess.run(
            ["crontab", "-"], input=_bytes(table), capture_output=True, check=False
        )
    except OSError as exc:
        raise ScheduleFailed(f"cannot run crontab: {exc}") from None
    if done.returncode != 0:
        raise ScheduleFailed(f"crontab refused the table: {_text(done.stderr).strip()}")


# Bytes, not text mode: text mode would turn the user's \r\n into \n, and an odd byte is kept.
def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def schedule(recipe: Path, cron: str, skopt: Path, log: Path) -> str:
    """Install (or replace) the recipe's entry; the block written."""
    block = entry(cron, recipe.resolve(), skopt, log)
    write_table(with_entry(read_table(), block, recipe.resolve()))
    return block


def unschedule(recipe: Path) -> bool:
    """Remove the recipe's entry; whether there was one."""
    table = read_table()
    rest = without_entry(table, recipe.resolve())
    if rest == table:
        return False
    write_table(rest)
    return True
