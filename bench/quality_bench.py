"""How good are the skills skopt trains? For each task family, on the local models: the test
accuracy of no skill, the starting skill, the oracle (a skill written by hand from the family's
generator: the ceiling) and the trained skill (mean ± spread over seeds), each under both
harnesses — `plain` (the training prompt) and `deploy` (the skill as a user deploys it) — with
the training's calls, tokens and wall time and the share of steps that ended with no candidate.

Every choice a run makes is made on the valid split; the test split is scored once per skill.

    .venv/bin/python bench/quality_bench.py [--family NAME]... [--seeds 3]
    .venv/bin/python bench/quality_bench.py --quick    # the demo on the simulator, one seed (CI:
                                                       # does the bench still run?)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import skopt
from skopt.api import Harness

ROOT = Path(__file__).resolve().parent.parent
RECIPES = ROOT / "recipes"
HARNESSES: tuple[Harness, ...] = ("plain", "deploy")


@dataclass(frozen=True)
class Family:
    name: str
    recipe: Path
    initial: Path
    oracle: Path


FAMILIES = {
    "house_style": Family(
        "house_style",
        RECIPES / "quickstart.skopt",
        RECIPES / "skills" / "house_style.md",
        RECIPES / "skills" / "oracles" / "house_style.md",
    ),
    "tickets": Family(
        "tickets",
        RECIPES / "tickets.skopt",
        RECIPES / "skills" / "tickets.md",
        RECIPES / "skills" / "oracles" / "tickets.md",
    ),
}
# --quick: the demo on the simulator (no oracle there: its starting skill stands in).
QUICK = Family("demo (sim)", RECIPES / "demo.skopt", *(RECIPES / "skills" / "demo.md",) * 2)


@dataclass
class Trained:
    scores: dict[str, float]  # harness -> test accuracy of the best skill
    gate_gap: float | None  # the best skill's gate score minus its test score (plain)
    calls: int
    tokens: int
    wall_s: float
    steps: int
    no_candidate: int


def train(family: Family, seed: int, out: Path) -> Trained:
    plan = skopt.compile(family.recipe, [f"train.seed={seed}"])
    began = time.perf_counter()
    result = skopt.run(plan, out / f"seed-{seed}")
    wall = time.perf_counter() - began
    record = skopt.open_run(result.folder)
    best = record.best_skill or ""
    scores = {h: skopt.evaluate(plan, best, "test", h).hard for h in HARNESSES}
    paid = [c for c in record.journal.calls if not c.cache_hit]
    gate_best = record.scores.best
    return Trained(
        scores=scores,
        gate_gap=gate_best - scores["plain"] if gate_best is not None else None,
        calls=len(paid),
        tokens=sum(c.input_tokens + c.output_tokens for c in paid),
        wall_s=wall,
        steps=len(record.report.decisions),
        no_candidate=sum(1 for d in record.report.decisions if d.reason == "no candidate"),
    )


def spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    return f"{mean:.3f} ± {statistics.pstdev(values):.3f}" if len(values) > 1 else f"{mean:.3f}"


def bench(family: Family, seeds: list[int], out: Path) -> None:
    plan = skopt.compile(family.recipe)
    fixed = {
        "no skill": "",
        "initial": family.initial.read_text(encoding="utf-8"),
        "oracle": family.oracle.read_text(encoding="utf-8"),
    }
    rows = {
        name: {h: skopt.evaluate(plan, s, "test", h) for h in HARNESSES}
        for name, s in fixed.items()
    }
    runs = [train(family, seed, out / family.name) for seed in seeds]
    items = rows["initial"]["plain"].items
    print(f"\n{family.name} · {family.recipe.relative_to(ROOT)} · test split, {items} items")
    print(f"{'skill':28} {'plain':>15} {'deploy':>15}")
    for name, scored in rows.items():
        print(f"{name:28} {scored['plain'].hard:15.3f} {scored['deploy'].hard:15.3f}")
    label = f"trained ({len(seeds)} seed{'s' if len(seeds) > 1 else ''})"
    plain = spread([r.scores["plain"] for r in runs])
    deploy = spread([r.scores["deploy"] for r in runs])
    print(f"{label:28} {plain:>15} {deploy:>15}")
    for seed, r in zip(seeds, runs, strict=True):
        gap = f"{r.gate_gap:+.3f}" if r.gate_gap is not None else "—"
        print(
            f"  seed {seed:<21} {r.scores['plain']:15.3f} {r.scores['deploy']:15.3f}"
            f"   {r.calls} calls · {r.wall_s:.0f} s · gate − test gap {gap}"
        )
    steps = sum(r.steps for r in runs)
    empty = sum(r.no_candidate for r in runs)
    gaps = [r.gate_gap for r in runs if r.gate_gap is not None]
    print(
        f"training per run: {statistics.fmean(r.calls for r in runs):.0f} calls · "
        f"{statistics.fmean(r.tokens for r in runs):,.0f} tokens · "
        f"{statistics.fmean(r.wall_s for r in runs):.0f} s wall · steps with no candidate "
        f"{empty} of {steps}" + (f" · gate − test gap {spread(gaps)}" if gaps else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", help="where the runs go (default: a temporary folder)")
    parser.add_argument("--quick", action="store_true", help="the demo on the simulator (CI)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="quality-bench-"))
    families = [QUICK] if args.quick else [FAMILIES[f] for f in args.family or sorted(FAMILIES)]
    seeds = list(range(1, (1 if args.quick else args.seeds) + 1))
    print(f"quality bench · seeds {seeds} · runs under {out}")
    for family in families:
        bench(family, seeds, out)


if __name__ == "__main__":
    main()
