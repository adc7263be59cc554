"""skopt's exit codes, and how a run's outcome maps to one: the only place that decides them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path


class Exit(enum.IntEnum):
    OK = 0  # done; or checked, formatted, planned without errors
    FAILED = 1  # a runtime failure (what finished is kept); `fmt --check`: a file would change
    USAGE = 2  # a recipe error, a bad flag, a folder skopt will not use
    BUDGET = 3  # a run stopped by its budget (artifacts valid, test scored)
    STALE = 4  # a saved plan whose recipe, data or skill changed since
    INTERRUPTED = 130  # Ctrl-C: resumable


# What ended a run's session, as the journal writes it, and the exit code of each.
OUTCOMES = {
    "done": Exit.OK,
    "budget": Exit.BUDGET,
    "failed": Exit.FAILED,
    "interrupted": Exit.INTERRUPTED,
}

# The `--help` epilogue of each command: which codes it can exit with.
HELP = {
    Exit.OK: "0 ok",
    Exit.FAILED: "1 runtime failure (what finished is kept)",
    Exit.USAGE: "2 recipe or usage error",
    Exit.BUDGET: "3 stopped by the budget (artifacts valid, test scored)",
    Exit.STALE: "4 stale saved plan",
    Exit.INTERRUPTED: "130 interrupted (resumable)",
}


def codes_help(*codes: Exit, changed: bool = False) -> str:
    """The exit-code lines of a command's help."""
    lines = [HELP[c] for c in codes]
    if changed:
        lines[codes.index(Exit.FAILED)] = "1 a file would change (with --check)"
    return "\b\nExit codes:\n" + "\n".join(f"  {line}" for line in lines)


@dataclass(frozen=True)
class Outcome:
    exit: Exit
    folder: Path
    message: str
