"""The issue's acceptance example: 100 items split 60/20/20, batch 16, 3 epochs, cosine(6, 2)."""

from __future__ import annotations

import json
from pathlib import Path

from skopt.compiler.compile import compile_recipe

RECIPE = """\
skopt 1
model m { provider = sim }
env e {
  kind = qa
  data = "items.jsonl"
  split { train = 60%, valid = 20%, test = 20% }
}
train {
  target = m
  optimizer = m
  skill = empty
  batch_size = 16
  epochs = 3
  lr = cosine(max = 6, min = 2)
}
"""


def write(tmp_path: Path) -> Path:
    rows = [{"id": f"q{i}", "input": f"question {i}", "answer": str(i)} for i in range(100)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    recipe = tmp_path / "example.skopt"
    recipe.write_text(RECIPE)
    return recipe


def test_schedule_and_rollout_calls(tmp_path: Path) -> None:
    result = compile_recipe(str(write(tmp_path)))
    assert result.ok, result.diagnostics
    assert result.plan is not None
    job = result.plan.jobs[0]
    assert (job.splits.train, job.splits.valid, job.splits.test) == (60, 20, 20)
    assert job.schedule.steps_per_epoch == 4
    assert job.schedule.total_steps == 12
    assert job.schedule.lr == [6, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 2]
    rollout = next(t for t in job.totals if t.phase == "rollout" and t.role == "target")
    assert (rollout.calls.min, rollout.calls.max) == (180, 180)
