"""Whole nights with the simulator (deterministic), from the command line: a staged, gated
proposal over the reference transcripts, adopted edit by edit; a night the gate rejects; a dry
run that stages nothing; refusal after the live file changes; status; the review screen on a
night; the budget; `since = last`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from skopt.runtime.sleep.stage import manifest, nights
from skopt.ui.tui.app import review_app
from skopt.ui.tui.review import ReviewScreen
from tests.runtime.sleep.night_recipes import SKILL, night_recipe
from tests.runtime.sleep.sessions_for_tests import generic
from tests.ui.invoke import run
from tests.ui.test_tui import drive

RULE = "- Use uv, not pip."


def staged(recipe: Path) -> Path:
    found = nights(recipe.parent / ".skopt" / "sleep")
    assert len(found) == 1
    return found[0]


def test_a_night_stages_a_gated_proposal_and_never_touches_the_live_file(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    code, out, err = run("sleep", "run", str(recipe))
    assert code == 0, err
    night = staged(recipe)
    live = recipe.parent / "SKILL.md"
    assert live.read_text() == SKILL

    m = manifest(night)
    assert m is not None and m.accepted and m.reason == "1.0000 beats 0.0000 (1 fixed, 0 broken)"
    assert m.live == str(live.resolve())
    assert m.live_sha256 == hashlib.sha256(SKILL.encode()).hexdigest()
    assert (m.held_out, m.before, m.after) == (1, 0.0, 1.0)
    proposed = (night / "proposed" / "SKILL.md").read_text()
    assert proposed.startswith(SKILL)  # the text outside the LEARNED region is as it was
    assert "<!-- skopt:learned -->" in proposed and RULE in proposed

    edits = json.loads((night / "edits.json").read_text())
    assert [(e["op"], e["content"], e["status"]) for e in edits] == [("add", RULE, "applied")]
    assert edits[0]["rationale"] and len(edits[0]["proposed_for"]) == 2
    tasks = json.loads((night / "tasks.json").read_text())
    assert sorted(t["split"] for t in tasks) == ["holdout", "train", "train"]
    assert {t["id"] for t in tasks} >= set(edits[0]["proposed_for"])
    replays = json.loads((night / "replays.json").read_text())
    assert all(r["hard"] == 0.0 and "pip" in r["answer"] for r in replays)
    tried = json.loads((night / "tried.json").read_text())
    assert [(r["split"], r["hard"]) for r in tried] == [("holdout", 1.0)]
    report = (night / "report.md").read_text()
    assert report == out and "Held-out tasks fixed: " in report and RULE in report
    assert "staged in" in err and "paid calls" in err

    code, out, _ = run("sleep", "status", str(recipe))
    assert (code, out) == (0, f"{night.name}  staged · held out 0.000 → 1.000\n")


def test_adopt_lists_adopts_once_and_status_says_so(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    night, live = staged(recipe), recipe.parent / "SKILL.md"
    code, out, _ = run("sleep", "adopt", str(recipe))  # no --all, no --edit: the list
    assert code == 0 and "1 change into" in out and "+ - Use uv, not pip." in out
    assert live.read_text() == SKILL

    code, out, _ = run("sleep", "adopt", str(recipe), "--edit", "1")
    assert code == 0 and "adopted change 1" in out
    assert live.read_text() == (night / "proposed" / "SKILL.md").read_text()
    receipt = json.loads((night / "adopted.json").read_text())["adoptions"]
    assert [a["changes"] for a in receipt] == [[1]]
    assert Path(receipt[0]["backup"]).read_text() == SKILL

    code, _, err = run("sleep", "adopt", str(recipe), "--all")
    assert code == 2 and "adopted before" in err
    status = run("sleep", "status", str(recipe))[1]
    assert status.endswith("staged, adopted change 1 · held out 0.000 → 1.000\n")


def test_adopt_refuses_when_the_live_file_changed_since_staging(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    live = recipe.parent / "SKILL.md"
    live.write_text(SKILL + "- A line the user added.\n")
    code, _, err = run("sleep", "adopt", str(recipe), "--all")
    assert code == 2 and "changed since the night was staged" in err
    assert live.read_text() == SKILL + "- A line the user added.\n"
    assert not (staged(recipe) / "adopted.json").exists()
    assert not (staged(recipe) / "adopt").exists()  # not even a backup


def test_a_night_the_gate_rejects_stages_its_evidence_and_nothing_to_adopt(tmp_path: Path) -> None:
    # Two users disagree: the edit one task teaches breaks (or does not help) the other.
    folder = tmp_path / "sessions"
    said = {"a": ["add httpx", "no, use uv not pip"], "b": ["add ruff", "no, use pip not uv"]}
    generic(folder, said)
    recipe = night_recipe(tmp_path, sources=f'[generic("{folder}")]')
    code, out, err = run("sleep", "run", str(recipe))
    assert code == 0, err
    m = manifest(staged(recipe))
    assert m is not None and not m.accepted
    assert "gate: rejected" in out and "night rejected by the gate" in err
    code, out, _ = run("sleep", "status", str(recipe))
    assert "rejected by the gate" in out
    code, _, err = run("sleep", "adopt", str(recipe), "--all")
    assert code == 2 and "proposes anything" in err
    assert (recipe.parent / "SKILL.md").read_text() == SKILL


def test_a_dry_run_stages_nothing_and_prints_the_report(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    code, out, err = run("sleep", "dry-run", str(recipe))
    assert code == 0, err
    assert "gate: accepted" in out and RULE in out and "nothing staged (dry run)" in err
    assert not (recipe.parent / ".skopt").exists()
    assert sorted(p.name for p in recipe.parent.iterdir()) == ["SKILL.md", "sleep.skopt"]


def test_the_review_screen_opens_a_night_and_adopts_from_it(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    night, live = staged(recipe), recipe.parent / "SKILL.md"
    app = review_app(night)

    async def script(pilot: Any) -> None:
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert [c.source for c in screen.proposal.changes] == [f"night {night.name}"]
        await pilot.press("A")
        assert screen.adopted == {1}
        await pilot.press("q")

    drive(app, script)
    assert RULE in live.read_text()
    assert json.loads((night / "adopted.json").read_text())["adoptions"][0]["changes"] == [1]


def test_a_night_whose_worst_case_passes_the_budget_asks_nothing(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path)
    recipe.write_text(recipe.read_text().replace("calls = 100", "calls = 10"))
    code, _, err = run("sleep", "run", str(recipe))
    assert code == 2 and "budget" in err  # the plan's verdict: it cannot pay for a night
    assert not (recipe.parent / ".skopt").exists()


def test_since_last_harvests_only_what_came_after_the_last_night(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path, since="last", lookback="87_600h")
    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    state = json.loads((recipe.parent / ".skopt" / "sleep" / "state.json").read_text())
    assert "last_harvest" in state
    code, out, err = run("sleep", "run", str(recipe))
    assert code == 0, err
    assert "sessions: 0 read" in out and "no held-out task to gate on" in out
    assert len(nights(recipe.parent / ".skopt" / "sleep")) == 2


def test_a_later_night_reflects_with_the_edits_earlier_gates_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    said = {"a": ["add httpx", "no, use uv not pip"], "b": ["add ruff", "no, use pip not uv"]}
    generic(folder, said)
    recipe = night_recipe(tmp_path, sources=f'[generic("{folder}")]')
    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    first = staged(recipe)
    m = manifest(first)
    assert m is not None and not m.accepted and (first / "memory.md").read_text() == ""
    tried = [e["content"] for e in json.loads((first / "edits.json").read_text())]

    assert run("sleep", "run", "--quiet", str(recipe))[0] == 0
    second = nights(recipe.parent / ".skopt" / "sleep")[-1]
    memory = (second / "memory.md").read_text()
    assert memory.startswith(f"- night {first.name}, rejected by the gate (")
    assert all(repr(content) in memory for content in tried)
    assert memory.encode() in (second / "cache.sqlite").read_bytes()  # in the reflect request
