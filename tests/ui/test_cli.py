"""The command line: exit codes, output, and diagnostics that point at recipe lines and flags."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import RECIPES, call_events
from tests.ui.invoke import run


def test_check_every_example_recipe() -> None:
    code, _, err = run("check", *sorted(str(p) for p in RECIPES.glob("*.skopt")))
    assert code == 0, err
    assert "demo.skopt: ok (0 errors, 0 warnings)" in err
    assert "sleep.skopt: ok (0 errors, 0 warnings)" in err


def test_plan_of_a_sleep_recipe_as_text_and_json() -> None:
    code, text, err = run("plan", str(RECIPES / "sleep.skopt"))
    assert code == 0, err
    assert "calls of a night" in text and "fits: the worst case of a night" in text
    code, printed, _ = run("plan", str(RECIPES / "sleep.skopt"), "--json")
    assert code == 0
    plan = json.loads(printed)
    assert plan["job_kind"] == "sleep" and plan["jobs"] == []
    phases = [p["phase"] for p in plan["sleep"]["phases"]]
    assert phases == ["mine", "replay", "judge", "reflect", "gate"]
    assert plan["sleep"]["verdict"]["fits"] is True
    assert [s["kind"] for s in plan["sleep"]["settings"]["sources"]] == [
        "claude",
        "codex",
        "generic",
    ]


def test_check_reports_errors_with_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.skopt"
    bad.write_text(
        "model m { provider = sim }\ntrain {\n  target = m\n  optimizer = mm\n  epochs = 0\n}\n"
    )
    code, _, err = run("check", str(bad))
    assert code == 2
    assert f"--> {bad}:4:15" in err and "did you mean 'm'?" in err
    assert f"--> {bad}:5:12" in err  # epochs = 0: every error of the file in one pass
    assert "failed (4 errors, 0 warnings)" in err  # also: no env, no skill


def test_plan_text_json_and_saved_file(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    code, text, _ = run("plan", str(RECIPES / "demo.skopt"), "-o", str(out))
    assert code == 0
    assert "lr by step  4 ×3, 3 ×3, 2 ×3" in text and "simulation" in text
    saved = json.loads(out.read_text())
    assert saved["schema_version"] == 1 and saved["jobs"][0]["schedule"]["total_steps"] == 9
    code, printed, _ = run("plan", str(RECIPES / "demo.skopt"), "--json")
    assert code == 0 and json.loads(printed)["hashes"] == saved["hashes"]


def test_set_overrides_and_points_at_the_flag() -> None:
    recipe = str(RECIPES / "demo.skopt")
    code, text, _ = run("plan", recipe, "--set", "train.epochs=1", "--set", "sim.concurrency=4")
    assert code == 0 and "= 3 steps" in text and "concurrency 4" in text
    code, _, err = run("plan", recipe, "--set", "train.epochs=1.5")
    assert code == 2
    assert "--> <command line>:1:20" in err
    assert "1 | --set train.epochs=1.5" in err and "^^^" in err


def test_fmt_check_and_rewrite(tmp_path: Path) -> None:
    recipe = tmp_path / "r.skopt"
    recipe.write_text("model m {provider=sim,  concurrency = 4}\n")
    assert run("fmt", "--check", str(recipe))[0] == 1
    assert (
        recipe.read_text() == "model m {provider=sim,  concurrency = 4}\n"
    )  # --check changes nothing
    assert run("fmt", str(recipe))[0] == 0
    assert recipe.read_text() == "model m { provider = sim, concurrency = 4 }\n"
    assert run("fmt", "--check", str(recipe))[0] == 0


def test_fmt_refuses_a_broken_file(tmp_path: Path) -> None:
    recipe = tmp_path / "r.skopt"
    recipe.write_text("model m {\n")
    code, _, err = run("fmt", str(recipe))
    assert code == 2 and "never closed" in err
    assert recipe.read_text() == "model m {\n"


def test_console_script_is_installed() -> None:
    exe = shutil.which("skopt", path=str(Path(sys.executable).parent))
    assert exe is not None
    done = subprocess.run(
        [exe, "check", str(RECIPES / "demo.skopt")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_run_the_demo_and_resume_a_finished_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = run("run", str(RECIPES / "demo.skopt"), "--out", str(out), "--quiet")
    assert code == 0, err
    assert "done: best skill in" in err
    assert json.loads((out / "summary.json").read_text())["test"]["best"] > 0
    code, _, err = run("run", "--resume", str(out), "--quiet")
    assert code == 0 and "done" in err  # nothing left to do: answered from the cache


def test_run_a_saved_plan_and_refuse_a_stale_one(tmp_path: Path) -> None:
    recipe = tmp_path / "r.skopt"
    recipe.write_text((RECIPES / "demo.skopt").read_text())
    (tmp_path / "base.skopt").write_text((RECIPES / "base.skopt").read_text())
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "demo.md").write_text("# House rules\n")
    saved = tmp_path / "plan.json"
    assert run("plan", str(recipe), "-o", str(saved))[0] == 0
    code, _, err = run("run", str(saved), "--out", str(tmp_path / "run"), "--quiet")
    assert code == 0, err
    (tmp_path / "skills" / "demo.md").write_text("# House rules, changed\n")
    code, _, err = run("run", str(saved), "--out", str(tmp_path / "run2"), "--quiet")
    assert code == 4
    assert "stale: the initial skill changed" in err
    assert not (tmp_path / "run2").exists()


def test_no_cache_asks_every_call_anew(tmp_path: Path) -> None:
    recipe = str(RECIPES / "demo.skopt")
    assert run("run", recipe, "--out", str(tmp_path / "a"), "--quiet")[0] == 0
    assert run("run", recipe, "--out", str(tmp_path / "b"), "--quiet", "--no-cache")[0] == 0

    def hits(folder: Path) -> int:
        return sum(e["cache_hit"] for e in call_events(folder))

    assert hits(tmp_path / "a") > 0 and hits(tmp_path / "b") == 0
    same = [(tmp_path / d / "best_skill.md").read_text() for d in "ab"]
    assert same[0] == same[1]  # the simulator answers the same either way
