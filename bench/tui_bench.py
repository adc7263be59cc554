"""How fast is the run monitor on a big journal, and does it keep up with a busy run? Goals: the
first paint of a 10,000-event journal under 1 s; following a journal that grows by 200 events a
second, never more than 0.5 s behind.

Measured side by side in one run, headless (Textual's test driver, 120 x 40):

  open     a finished run's journal of 10,000 events (a demo plan of many steps; each step
           its phases, calls, proposals, candidate, gate decision with per-item scores and the
           skill): the time from starting the app to its first paint of the monitor
  follow   a run folder whose journal a writer thread grows by 200 events a second (in
           batches every 50 ms), followed for 10 s; every 50 ms the lag is sampled: now minus
           the time of the newest event the monitor has taken in (0 when it has all of them)

    .venv/bin/python bench/tui_bench.py [--events 10000] [--rate 200] [--seconds 10] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import threading
import time
from pathlib import Path

import skopt
from skopt.compiler.plan import Plan
from skopt.compiler.saved import plan_text
from skopt.runtime.claim import claim
from skopt.runtime.events import (
    BaselineScored,
    CallEvent,
    CandidateBuilt,
    EditRecord,
    EditsProposed,
    Event,
    GateDecided,
    GateResult,
    ItemScores,
    PhaseFinished,
    PhaseStarted,
    RunStarted,
    StepFinished,
    StepResult,
)
from skopt.ui.tui.app import SkoptApp
from skopt.ui.tui.monitor import MonitorScreen
from skopt.ui.tui.sources import FolderSource

ROOT = Path(__file__).resolve().parent.parent
GOAL_PAINT_S = 1.0
GOAL_LAG_S = 0.5
SIZE = (120, 40)
SKILL = "# House rules\n\nAnswer every question with the house code that applies to it.\n"


def plan(steps: int) -> Plan:
    epochs = max(1, -(-steps // 3))  # the demo: 3 steps an epoch
    return skopt.compile(ROOT / "recipes" / "demo.skopt", [f"train.epochs={epochs}"])


def step_events(step: int, skill: str) -> list[Event]:
    """One step's events (61): phases, 51 calls, proposals, candidate, gate, result."""
    epoch = (step - 1) // 3 + 1
    events: list[Event] = []
    for phase, calls in (("rollout", 24), ("reflect", 3), ("gate", 24)):
        events.append(PhaseStarted(phase=phase, step=step, epoch=epoch))
        role = "optimizer" if phase == "reflect" else "target"
        events += [
            CallEvent(role=role, phase=phase, model="sim", input_tokens=120, output_tokens=9,
                      usd=0.0, latency_s=0.01, retries=0, cache_hit=False, ok=True, key=f"k{i}")
            for i in range(calls)
        ]  # fmt: skip
        events.append(PhaseFinished(phase=phase, step=step, epoch=epoch))
    edit = EditRecord(op="add", anchor=None, content=f"Rule {step}.", rationale="r", support=1)
    events.append(EditsProposed(step=step, source="failures", items=["a#0"], edits=[edit]))
    events.append(
        CandidateBuilt(step=step, lr=3, selected=[edit], outcomes=[], candidate="h", skill=skill)
    )
    decision = GateResult(accepted=True, reason="better", before=0.5, after=0.6, candidate="h")
    items = {f"syn-{i:05d}#0": ItemScores(before=0.0, after=1.0) for i in range(24)}
    events.append(GateDecided(step=step, decision=decision, items=items))
    result = StepResult(step=step, epoch=epoch, failures=3, decision=decision, score=0.6, best=0.6)
    events.append(StepFinished(result=result, version=step, skill=skill))
    return events


def journal(steps: int) -> list[Event]:
    events: list[Event] = [
        RunStarted(recipe="demo.skopt", resumed=False, step=0, phase=0, steps=steps, skill=SKILL),
        BaselineScored(score=0.5, items={}),
    ]
    skill = SKILL
    for step in range(1, steps + 1):
        skill += f"\nRule {step}.\n"
        events += step_events(step, skill)
    return events


def run_folder(root: Path, p: Plan) -> Path:
    folder = claim(root, "run").root
    (folder / "plan.json").write_text(plan_text(p, folder / "plan.json"))
    return folder


def first_paint(folder: Path) -> float:
    async def go() -> float:
        began = time.perf_counter()
        app = SkoptApp(MonitorScreen(FolderSource(folder)))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            return time.perf_counter() - began

    return asyncio.run(go())


def follow(folder: Path, events: list[Event], rate: int, seconds: float) -> list[float]:
    """Lag samples (seconds) while a writer appends `rate` events a second."""
    stop = threading.Event()

    def write() -> None:
        batch = max(1, rate // 20)
        with (folder / "events.jsonl").open("a", encoding="utf-8") as out:
            for start in range(0, len(events), batch):
                if stop.is_set():
                    return
                now = time.time()
                for event in events[start : start + batch]:
                    out.write(event.model_copy(update={"at": now}).model_dump_json() + "\n")
                out.flush()
                time.sleep(batch / rate)

    async def go() -> list[float]:
        app = SkoptApp(MonitorScreen(FolderSource(folder)))
        lags: list[float] = []
        async with app.run_test(size=SIZE) as pilot:
            writer = threading.Thread(target=write)
            writer.start()
            began = time.monotonic()
            while time.monotonic() - began < seconds:
                await pilot.pause(0.05)
                seen = app.screen.source.journal.events  # type: ignore[attr-defined]
                lags.append(max(0.0, time.time() - seen[-1].at) if seen else 0.0)
            stop.set()
            writer.join()
        return lags

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rate", type=int, default=200, help="events a second, when following")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long to follow")
    parser.add_argument("--quick", action="store_true", help="1,000 events, 2 s (CI)")
    args = parser.parse_args()
    if args.quick:
        args.events, args.seconds = 1_000, 2.0
    steps = max(1, -(-(args.events - 2) // len(step_events(1, SKILL))))
    p = plan(steps)
    events = journal(steps)
    work = Path(tempfile.mkdtemp(prefix="skopt-tui-bench-"))
    try:
        finished = run_folder(work / "finished", p)
        (finished / "events.jsonl").write_text("".join(e.model_dump_json() + "\n" for e in events))
        paint = first_paint(finished)
        lags = follow(run_folder(work / "growing", p), events, args.rate, args.seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    worst = max(lags)
    lags.sort()
    median = lags[len(lags) // 2]
    print(
        f"skopt tui bench: a journal of {len(events):,} events ({steps} steps), headless"
        f" {SIZE[0]}x{SIZE[1]}; following {args.rate} events/s for {args.seconds:g} s"
        f" ({len(lags)} lag samples)\n"
    )
    rows = [
        ("measure", "measured", "goal", "met"),
        ("first paint of the finished journal", f"{paint:.3f} s", f"< {GOAL_PAINT_S:g} s",
         "yes" if paint < GOAL_PAINT_S else "no"),
        ("lag while following, median", f"{median:.3f} s", "–", "–"),
        ("lag while following, worst", f"{worst:.3f} s", f"< {GOAL_LAG_S:g} s",
         "yes" if worst < GOAL_LAG_S else "no"),
    ]  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, row in enumerate(rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    main()
