"""Cron expressions of `sleep { schedule = "..." }`: the five fields crontab(5) reads.

minute hour day-of-month month day-of-week, each `*`, a number, a range `a-b`, a step `*/n` or
`a-b/n`, or a comma-separated list of these. Names (`mon`, `jan`) and macros (`@daily`) are not
taken: every cron reads numbers the same way, and the schedule is written into a crontab as is.
Day of week is 0-7 (0 and 7 are Sunday), as in Vixie cron and cronie.

`problems` returns every problem of an expression with where it sits in the text, so that a
diagnostic can point at the field itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# (name, lowest, highest) of each field, in order
FIELDS: tuple[tuple[str, int, int], ...] = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
EXAMPLE = '"17 3 * * *" (every day at 03:17)'
FORMS = "a field is *, a number, a range a-b, a step */n or a-b/n, or a list of these: 0,30"

_ITEM = re.compile(r"(?:(?P<star>\*)|(?P<low>\d+)(?:-(?P<high>\d+))?)(?:/(?P<step>\d+))?")
_FIELD = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Problem:
    start: int  # offset of the text at fault in the expression
    length: int
    message: str
    label: str
    help: str = ""


def problems(expression: str) -> list[Problem]:
    """Everything wrong with `expression`; empty when crontab would take it."""
    fields = list(_FIELD.finditer(expression))
    if len(fields) != len(FIELDS):
        return [_count_problem(expression, len(fields))]
    found: list[Problem] = []
    for match, (name, low, high) in zip(fields, FIELDS, strict=True):
        offset = match.start()
        for item in match.group().split(","):
            found += _item_problems(item, offset, name, low, high)
            offset += len(item) + 1
    return found


def normalized(expression: str) -> str:
    """The fields joined by single spaces (how the plan and the crontab entry write it)."""
    return " ".join(expression.split())


def _count_problem(expression: str, count: int) -> Problem:
    names = " ".join(name.replace(" ", "-") for name, _, _ in FIELDS)
    if expression.strip().startswith("@"):
        return Problem(
            0,
            len(expression),
            "cron macros such as @daily are not taken",
            "write the five fields",
            f"e.g. {EXAMPLE}",
        )
    return Problem(
        0,
        len(expression),
        f"a cron expression has 5 fields ({names}), found {count}",
        f"{count} field{'' if count == 1 else 's'}",
        f"e.g. {EXAMPLE}",
    )


def _item_problems(item: str, offset: int, name: str, low: int, high: int) -> list[Problem]:
    m = _ITEM.fullmatch(item)
    if m is None:
        shown = item or "(nothing)"
        return [
            Problem(
                offset,
                max(1, len(item)),
                f"cannot read '{shown}' in the {name} field of the cron expression",
                "not a number, range, step or list",
                FORMS,
            )
        ]
    found: list[Problem] = []
    for key in ("low", "high"):
        text = m.group(key)
        if text is not None and not low <= int(text) <= high:
            found.append(
                Problem(
                    offset + m.start(key),
                    len(text),
                    f"{name} {int(text)} is out of range in the cron expression",
                    f"the {name} is {low}-{high}",
                )
            )
    first, last = m.group("low"), m.group("high")
    if not found and first is not None and last is not None and int(first) > int(last):
        found.append(
            Problem(
                offset,
                len(item.split("/")[0]),
                f"the range {first}-{last} of the {name} field runs backwards",
                "the first number must not be larger",
                f"write {last}-{first}",
            )
        )
    step = m.group("step")
    if step is not None and first is not None and last is None:
        found.append(
            Problem(
                offset,
                len(item),
                f"a step needs * or a range before it, in the {name} field of the cron expression",
                "not every cron reads this",
                f"write {first}-{high}/{step} (from {first} to the end) or */{step}",
            )
        )
    elif step is not None and int(step) == 0:
        found.append(
            Problem(
                offset + m.start("step"),
                len(step),
                f"a step of 0 in the {name} field of the cron expression",
                "steps start at 1",
            )
        )
    return found
