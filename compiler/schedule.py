"""Learning-rate schedules (SPEC §4): how many edits step t of T may apply.

p = (t-1)/(T-1) (p = 0 when T = 1), rounded half up:
  constant(n)      = n
  linear(max, min) = max - (max-min)·p
  cosine(max, min) = min + (max-min)·(1+cos πp)/2
`autonomous` has no fixed value: the optimizer chooses each step (None here).
"""

from __future__ import annotations

import math


def progress(t: int, total: int) -> float:
    return 0.0 if total <= 1 else (t - 1) / (total - 1)


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5 + 1e-9)


def learning_rate(kind: str, args: dict[str, int], t: int, total: int) -> int | None:
    p = progress(t, total)
    if kind == "constant":
        return args["n"]
    if kind == "linear":
        return round_half_up(args["max"] - (args["max"] - args["min"]) * p)
    if kind == "cosine":
        return round_half_up(
            args["min"] + (args["max"] - args["min"]) * (1 + math.cos(math.pi * p)) / 2
        )
    if kind == "autonomous":
        return None
    raise ValueError(f"unknown schedule {kind}")


def learning_rates(kind: str, args: dict[str, int], total: int) -> list[int | None]:
    return [learning_rate(kind, args, t, total) for t in range(1, total + 1)]
