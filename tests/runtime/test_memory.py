"""What the loop carries across steps and epochs (SPEC §5.1), read from what a simulator run
actually sent and wrote: slow-update guidance lands in its protected region and stays there
(also when an optimizer's rewrite rewords or drops it: that run goes through the openai SDK
against the scripted server of test_run_openai.py), the meta skill reaches the next epoch's
optimizer prompts, and edits the gate rejected reach the later reflections of their epoch (the
step buffer), and no others.

Requests are read from the run's response cache (the canonical request of each answer, by
key) and attributed to steps through the journal, whose call events carry the same keys in
the order the calls were made: steps run one after another, each starting with its rollout.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skopt.compiler.compile import compile_recipe
from skopt.runtime.artifacts import RunFolder
from skopt.runtime.backends.sim import GUIDANCE, META_SKILL
from skopt.runtime.edits import SLOW_UPDATE, close_marker, find_regions, open_marker
from skopt.runtime.exits import Exit
from skopt.runtime.run import start
from tests.conftest import RECIPES
from tests.runtime import test_run_openai as words
from tests.runtime.server import ScriptedServer, Seen, openai_completion

TASK = re.compile(r"<task>(\w+)</task>")
MEMORY_TASKS = ("reflect", "merge", "select", "learning_rate")  # prompts that include _memory.j2
META_HEADING = "What you learned in earlier epochs about improving this skill:\n"


@dataclass(frozen=True)
class Sent:
    """One call of the run: the step it belongs to, its phase, and the messages sent."""

    step: int  # 0: the baseline; boundary phases count with the step before them
    phase: str
    messages: list[dict[str, str]]

    @property
    def prompt(self) -> str:
        """An optimizer call's prompt; a target call's user message."""
        return next(m["content"] for m in self.messages if m["role"] == "user")

    @property
    def system(self) -> str:
        return "".join(m["content"] for m in self.messages if m["role"] == "system")

    @property
    def task(self) -> str | None:
        found = TASK.search(self.prompt)
        return found.group(1) if found else None


def sent(folder: Path) -> list[Sent]:
    with contextlib.closing(sqlite3.connect(folder / "cache.sqlite")) as db:
        requests = dict(db.execute("SELECT key, request FROM responses"))
    lines = (folder / "events.jsonl").read_text().splitlines()
    calls = [e for e in map(json.loads, lines) if e["kind"] == "call" and e["ok"]]
    found, step, previous = [], 0, ""
    for event in calls:
        if event["phase"] == "rollout" and previous != "rollout":
            step += 1
        previous = event["phase"]
        messages = json.loads(requests[event["key"]])["messages"]
        found.append(Sent(step, event["phase"], messages))
    return found


@dataclass(frozen=True)
class Ran:
    folder: Path
    history: list[dict[str, Any]]
    calls: list[Sent]

    def epoch(self, step: int) -> int:
        epoch: int = self.history[step - 1]["epoch"]
        return epoch

    def skill(self, version: int) -> str:
        return (self.folder / "skills" / f"skill_v{version:04d}.md").read_text()

    def record(self, step: int, name: str = "record.json") -> Any:
        return json.loads((self.folder / "steps" / f"{step:04d}" / name).read_text())

    def asked(self, task: str, step: int | None = None) -> list[Sent]:
        return [c for c in self.calls if c.task == task and step in (None, c.step)]


def demo(folder: Path, *overrides: str) -> Ran:
    result = compile_recipe(str(RECIPES / "demo.skopt"), list(overrides))
    assert result.plan is not None, result.diagnostics
    outcome = start(result.plan, RunFolder(folder))
    assert outcome.exit is Exit.OK, outcome.message
    history = json.loads((folder / "state.json").read_text())["history"]
    return Ran(folder, history, sent(folder))


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """The demo (3 epochs of 3 steps) with no_regression on: it rejects candidates at the
    start, middle and end of epochs."""
    return demo(tmp_path_factory.mktemp("memory") / "run", "train.gate.no_regression=on")


# -- slow update ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["patch", "rewrite", "full_rewrite"])
def test_slow_update_guidance_lands_in_its_protected_region(tmp_path: Path, mode: str) -> None:
    ran = demo(tmp_path / "run", "train.epochs=2", f"train.mode={mode}")
    assert [h["epoch"] for h in ran.history] == [1, 1, 1, 2, 2, 2]
    assert [r["usable"] for r in ran.record(4, "slow_update.json")] == [True]
    for version in range(4):  # the baseline and epoch 1: no slow update yet
        assert find_regions(ran.skill(version)) == (), version
    for version in range(4, 7):  # every skill of epoch 2, whatever its steps edited
        skill = ran.skill(version)
        (region,) = find_regions(skill)
        assert region.name == SLOW_UPDATE and region.closed
        assert skill[region.body_start : region.body_end] == f"\n{GUIDANCE}\n"
        assert skill.count(GUIDANCE) == 1, version
    # The target read it: every rollout of epoch 2, none of epoch 1.
    rollouts = [c for c in ran.calls if c.phase == "rollout"]
    assert {c.step for c in rollouts} == set(range(1, 7))
    for call in rollouts:
        assert (open_marker(SLOW_UPDATE) in call.system) is (call.step >= 4), call.step


MANGLED = "- MANGLED guidance"
REGION = f"{open_marker(SLOW_UPDATE)}\n{words.GUIDANCE}\n{close_marker(SLOW_UPDATE)}"
# What the optimizer makes of the region when it writes a whole skill.
MANGLINGS = {
    "reworded": f"{open_marker(SLOW_UPDATE)}\n{MANGLED}\n{close_marker(SLOW_UPDATE)}",
    "dropped": "",
}


def mangling(region: str) -> Callable[[Seen], bytes]:
    """The scripted server of test_run_openai.py, with an optimizer whose whole skills put
    `region` where the slow-update region was, and add a line (so that a rewrite is never the
    skill it started from)."""

    def respond(seen: Seen) -> bytes:
        body = seen.body
        task = words.task_of(body)
        if task is None:
            return openai_completion(words.target(body), 50, 10, "m")
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        answer = words.optimizer(task, prompt)
        if "skill" in answer:
            rewritten = answer["skill"].replace(REGION, region)
            answer["skill"] = f"{rewritten.rstrip()}\n\nCheck the spelling twice.\n"
        return openai_completion(json.dumps(answer), 50, 10, "m")

    return respond


@pytest.mark.usefixtures("key")
@pytest.mark.parametrize("mangled", MANGLINGS)
@pytest.mark.parametrize("mode", ["rewrite", "full_rewrite"])
def test_a_rewrite_keeps_the_region_verbatim(
    tmp_path: Path, server: ScriptedServer, mode: str, mangled: str
) -> None:
    words.serve(server, mangling(MANGLINGS[mangled]))
    recipe = words.recipe(tmp_path, server.openai_url, epochs="2", mode=mode)
    ran = words.run(recipe, tmp_path / "run")
    assert ran.exit_code == 0, ran.output
    raw = [
        json.loads(text) for r in ran.records() if r["task"] != "slow_update" for text in r["raw"]
    ]
    assert any(REGION not in a.get("skill", REGION) for a in raw)  # it did mangle the region
    epoch2 = [p for p in (ran.folder / "steps").glob("*/candidate.md") if int(p.parent.name) > 3]
    assert epoch2, "no rewrite in epoch 2"
    skills = [ran.folder / "skills" / f"skill_v{v:04d}.md" for v in (4, 5, 6)]
    for path in epoch2 + skills:
        text = path.read_text()
        (region,) = find_regions(text)
        assert text[region.body_start : region.body_end] == f"\n{words.GUIDANCE}\n", path
        assert MANGLED not in text, path


# -- meta skill ----------------------------------------------------------------------------


def test_meta_skill_reaches_the_optimizer_prompts_of_later_epochs(gated: Ran) -> None:
    memory = [c for c in gated.calls if c.task in MEMORY_TASKS]
    assert {c.task for c in memory} >= {"reflect", "merge", "select"}
    for call in memory:
        later = gated.epoch(call.step) > 1
        assert (META_HEADING + META_SKILL in call.prompt) is later, (call.step, call.task)
    assert {gated.epoch(c.step) for c in memory if META_SKILL in c.prompt} == {2, 3}
    # Each boundary's meta-skill call is given the notes of the boundary before it.
    meta = gated.asked("meta_skill")
    assert [c.step for c in meta] == [3, 6]
    assert [f"Your notes so far:\n{META_SKILL}" in c.prompt for c in meta] == [False, True]


# -- the step buffer -----------------------------------------------------------------------


def rejected_lines(ran: Ran, step: int) -> list[str]:
    """The step buffer's lines for the edits step `step` tried and the gate rejected."""
    record = ran.record(step)
    decision = record["decision"]
    if decision["accepted"] or "before" not in decision:
        return []
    before, after = decision["before"], decision["after"]
    return [
        f"- rejected ({before:.3f} -> {after:.3f}): {e['content'][:160]}"
        for e in record["selected"]
    ]


def test_rejected_edits_reach_the_later_reflections_of_their_epoch(gated: Ran) -> None:
    steps = range(1, len(gated.history) + 1)
    rejected = {s: lines for s in steps if (lines := rejected_lines(gated, s))}
    reached = 0
    for s, lines in rejected.items():
        for t in steps:
            prompts = [c.prompt for c in gated.asked("reflect", t)]
            assert prompts, f"step {t} reflected on nothing"
            expected = gated.epoch(t) == gated.epoch(s) and t > s
            # the same line rejected again earlier in t's epoch is read for that rejection
            earlier = [u for u in rejected if u < t and gated.epoch(u) == gated.epoch(t)]
            again = {x for u in earlier for x in rejected[u]}
            for line in lines:
                assert all((line in p) is (expected or line in again) for p in prompts), (
                    s,
                    t,
                    line,
                )
            reached += expected
    # The run exercised both sides: rejections read later in their epoch, and one at an
    # epoch's end that the next epoch does not see.
    assert reached >= 2
    ends = [s for s in rejected if s == len(gated.history) or gated.epoch(s + 1) != gated.epoch(s)]
    assert ends
