"""One real night with the local models (`provider = local`, SPEC §6) over the reference
transcripts: the 0.5B model mines, replays and reflects, and the night runs to a staged report
(a learned edit is welcome, not required). The few sessions and small replies keep it to about
a minute on two cores; `bench/sleep_bench.py` runs the full `recipes/sleep.skopt`."""

from __future__ import annotations

import json
from pathlib import Path

from skopt.runtime.artifacts import RunFolder
from skopt.runtime.journal import read_journal
from skopt.runtime.sleep.stage import manifest, nights
from tests.runtime.sleep.night_recipes import SKILL, night_recipe
from tests.ui.invoke import run

LOCAL = """model m {
  provider    = local
  name        = "qwen2.5-coder-0.5b"
  temperature = 0
  max_tokens  = 200
}
"""


def test_a_night_on_the_local_model_runs_to_a_staged_report(tmp_path: Path) -> None:
    recipe = night_recipe(tmp_path, LOCAL, max_sessions="3", max_tasks="4", lr="1")
    code, out, err = run("sleep", "run", "--quiet", str(recipe))
    assert code == 0, err
    (night,) = nights(recipe.parent / ".skopt" / "sleep")
    m = manifest(night)
    assert m is not None and (night / "report.md").read_text() == out
    assert "## Held-out tasks" in out and "## Proposed edits" in out
    assert (recipe.parent / "SKILL.md").read_text() == SKILL  # staged, never adopted

    journal = read_journal(RunFolder(night).events)
    mined = [c for c in journal.calls if c.phase == "mine"]
    assert 3 <= len(mined) <= 6  # a call a session, and one re-ask where the JSON was unusable
    assert all(c.ok and c.output_tokens > 0 for c in mined)
    tasks = json.loads((night / "tasks.json").read_text())
    replayed = [c for c in journal.calls if c.phase == "replay"]
    assert len(replayed) == len(tasks) and all(c.ok for c in replayed)
    assert journal.ended is not None and journal.ended.outcome == "done"
