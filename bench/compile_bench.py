"""How fast is the front end on a big recipe? Goal: `skopt check` of 10,000 lines under 1 s.

Generates a 10,000-line recipe (many model and env blocks, one `train` job on the simulator
with a synthetic env, comments and a realistic mix of values), writes it to a temp folder and
times, in one process:

  parse        grammar.parse.parse on the text
  check        compiler.compile.compile_recipe: the whole `skopt check` path (read, parse,
               imports, checks, settings, lowering, budget verdict, hashes)
  plan         compile_recipe + ui.plan_view.render_plan: `skopt plan`
  fmt          parse + grammar.format.format_recipe: `skopt fmt`
  fmt only     format_recipe on an already parsed recipe

Each is the best of --repeat runs after one warm-up (the first call in a process also builds
the LALR tables; that cold cost is shown on its own line), then `skopt check` as a new process
(interpreter start and imports included), which is what a person waits for.

    .venv/bin/python bench/compile_bench.py [--lines 10000] [--repeat 3] [--keep DIR] [--quick]
    .venv/bin/python -m cProfile -s cumtime bench/compile_bench.py --repeat 1
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

GOAL_S = 1.0

PROVIDERS = [
    ("openai", ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "o3-mini"]),
    ("anthropic", ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"]),
]
COMMENTS = [
    "# shared by the nightly jobs",
    "# keep in sync with the price sheet",
    "# TODO: raise once the rate limit is lifted",
    "# cheaper, a little worse on long inputs",
    "# see docs/recipes.md",
]


def model_block(rng: random.Random, i: int) -> list[str]:
    if i % 5 == 0:
        return [
            f"model sim{i} {{",
            "  provider    = sim",
            f"  concurrency = {rng.choice([8, 16, 32])}",
            "}",
        ]
    provider, names = rng.choice(PROVIDERS)
    lines = [
        f"# model {i}: {provider}" if rng.random() < 0.5 else rng.choice(COMMENTS),
        f"model m{i} {{",
        f"  provider    = {provider}                # {provider} API",
        f'  name        = "{rng.choice(names)}"',
        f"  temperature = {rng.choice(['0', '0.2', '0.7', '1'])}",
        f"  max_tokens  = {rng.choice([512, 1024, 2048, 4096])}",
        f"  concurrency = {rng.choice([4, 8, 16])}  # in-flight calls",
        f"  timeout     = {rng.choice(['30s', '2min', '120s'])}",
        f"  retries     = {rng.randint(0, 6)}",
    ]
    if rng.random() < 0.4:
        lines.append(
            f"  rpm = {rng.choice(['500', '1k', '10k'])}, tpm = {rng.choice(['200k', '2M'])}"
        )
    if rng.random() < 0.5:
        lines.append(
            f"  price {{ input = ${rng.choice(['0.15', '3', '2.5'])}, "
            f"output = ${rng.choice(['0.6', '15', '10'])}, per = 1M }}"
        )
    lines.append("}")
    return lines


def env_block(rng: random.Random, i: int) -> list[str]:
    rules, items = rng.randint(4, 16), rng.choice([60, 120, 200])
    lines = [
        f"# env {i}: hidden rules, generated items",
        f"env e{i} {{",
        f"  kind   = synthetic(rules = {rules}, items = {items}, noise = {rng.randint(0, 10)}%, "
        f"seed = {rng.randint(1, 99)})",
        f"  metric = {rng.choice(['exact', 'f1', 'contains', 'numeric(tol = 1e-6)'])}",
        f"  answer_format = {rng.choice(['tag', 'last_line', 'raw'])}",
        f"  workers = {rng.choice([2, 4, 8])}",
        "  split {",
        "    train = 60%   # fit",
        "    valid = 20%   # gate",
        "    test  = 20%   # final score only",
        f"    seed  = {rng.randint(1, 1000)}",
        "  }",
    ]
    if rng.random() < 0.3:
        lines.append(f"  limit {{ train = {items // 2}, valid = {items // 5} }}")
    lines.append("}")
    return lines


TRAIN = """\
# the one job of this file
train {
  target    = sim0
  optimizer = sim0
  env       = e1
  skill     = empty
  epochs     = 4
  batch_size = 24
  minibatch  = 8
  lr         = cosine(max = 4, min = 2)   # edits per step
  mode       = patch
  reflect    = all
  gate { split = valid, metric = mixed(0.5), no_regression = off }
  slow_update { samples = 20 }
  meta_skill = on
  seed = 42
}

budget { calls = 50k, time = 2h }  # generous: the sim is free
"""


def recipe_text(lines: int, seed: int = 7) -> str:
    """Exactly `lines` lines: whole blocks while they fit, then comment lines."""
    rng = random.Random(seed)
    out = [
        "skopt 1",
        "# A big generated recipe for the front-end benchmark.",
        "",
        *TRAIN.splitlines(),
        "",
    ]
    i = 0
    while True:
        block = model_block(rng, i) if i % 2 == 0 else env_block(rng, i)
        if len(out) + len(block) + 1 > lines:
            break
        out += [*block, ""]
        i += 1
    out += [f"# padding {n}" for n in range(lines - len(out))]
    return "\n".join(out) + "\n"


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="write the recipe here instead of a temp folder")
    ap.add_argument("--no-subprocess", action="store_true", help="skip the `skopt check` process")
    ap.add_argument("--quick", action="store_true", help="a 500-line recipe, once (CI)")
    args = ap.parse_args()
    if args.quick:
        args.lines, args.repeat = 500, 1

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="skopt-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.skopt"
    text = recipe_text(args.lines)
    path.write_text(text, encoding="utf-8")
    n_lines = text.count("\n")

    t0 = time.perf_counter()
    from skopt.compiler.compile import compile_recipe
    from skopt.grammar.format import format_recipe
    from skopt.grammar.parse import parse
    from skopt.ui.plan_view import render_plan

    imports = time.perf_counter() - t0

    start = time.perf_counter()
    cold = compile_recipe(str(path))  # builds the parser tables on first use
    cold_check = time.perf_counter() - start
    if not cold.ok or cold.plan is None:
        for d in cold.diagnostics[:10]:
            print(f"{d.severity}: {d.message} at {d.span.line}:{d.span.col}", file=sys.stderr)
        print("the generated recipe does not check clean", file=sys.stderr)
        return 1
    n_warnings = len(cold.diagnostics)
    parsed = parse(text, str(path))
    assert parsed.recipe is not None
    recipe = parsed.recipe

    rows: list[tuple[str, float]] = []
    t, _ = best(lambda: parse(text, str(path)), args.repeat)
    rows.append(("parse", t))
    t_check, _ = best(lambda: compile_recipe(str(path)), args.repeat)
    rows.append(("check (compile_recipe)", t_check))

    def plan() -> str:
        result = compile_recipe(str(path))
        assert result.plan is not None
        return render_plan(result.plan)

    t, _ = best(plan, args.repeat)
    rows.append(("plan (compile + render)", t))
    t, formatted = best(lambda: format_recipe(parse(text, str(path)).recipe, text), args.repeat)  # type: ignore[arg-type]
    rows.append(("fmt (parse + format)", t))
    t, _ = best(lambda: format_recipe(recipe, text), args.repeat)
    rows.append(("fmt only (format)", t))

    print(
        f"recipe: {path} ({n_lines:,} lines, {len(text):,} bytes, "
        f"{len(recipe.blocks):,} blocks, {len(recipe.comments):,} comments, {n_warnings} warnings)"
    )
    print(
        f"best of {args.repeat}; imports {imports:.3f}s; first check in process {cold_check:.3f}s "
        "(includes building the parser)"
    )
    print()
    print(f"{'step':<26} {'seconds':>9} {'lines/s':>11} {'vs 1 s goal':>12}")
    print(f"{'-' * 26} {'-' * 9} {'-' * 11} {'-' * 12}")
    for name, seconds in rows:
        print(f"{name:<26} {seconds:>9.3f} {n_lines / seconds:>11,.0f} {seconds / GOAL_S:>11.2f}x")

    skopt = Path(sys.executable).with_name("skopt")
    if not args.no_subprocess and skopt.exists():
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            proc = subprocess.run([str(skopt), "check", str(path)], capture_output=True, text=True)
            times.append(time.perf_counter() - start)
        t = min(times)
        print(
            f"{'skopt check (new process)':<26} {t:>9.3f} {n_lines / t:>11,.0f} "
            f"{t / GOAL_S:>11.2f}x"
            f"   exit {proc.returncode}"
        )
    print()
    verdict = "meets" if t_check <= GOAL_S else "MISSES"
    print(
        f"check of {n_lines:,} lines: {t_check:.3f}s = {t_check / GOAL_S:.2f}x "
        f"the {GOAL_S:.0f} s goal "
        f"({verdict} it in-process)"
    )
    assert formatted == format_recipe(parse(formatted, str(path)).recipe, formatted), (
        "fmt not idempotent"
    )  # type: ignore[arg-type, arg-type]
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
