"""`skopt init`: a starter that checks clean, is already formatted, runs with no key and learns
on its first run, and switches to OpenAI on its real task as its comments say; existing files
are never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ui.invoke import run

FILES = ("skill.skopt", "data/items.jsonl", "skills/skill.md")


@pytest.fixture
def starter(tmp_path: Path) -> Path:
    folder = tmp_path / "starter"
    code, out, err = run("init", str(folder))
    assert code == 0, err
    assert all(f"created {folder / name}" in err for name in FILES)
    assert f"skopt run {folder / 'skill.skopt'}" in out
    return folder


def test_the_starter_checks_clean_and_is_formatted(starter: Path) -> None:
    recipe = str(starter / "skill.skopt")
    code, _, err = run("check", recipe)
    assert code == 0 and "ok (0 errors, 0 warnings)" in err
    assert run("fmt", "--check", recipe)[0] == 0
    code, text, _ = run("plan", recipe)
    assert code == 0 and "simulation" in text and "fits" in text


def test_the_starter_runs_with_no_key_and_learns(starter: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = run("run", str(starter / "skill.skopt"), "--out", str(out), "--quiet")
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["simulation"] is True and summary["steps"] == 6
    assert summary["accepted"] >= 1
    assert summary["test"]["best"] >= summary["test"]["initial"] + 0.3
    code, text, _ = run("report", str(out))
    assert code == 0 and "finished · 6 of 6 steps" in text


def test_the_data_is_a_small_qa_set_in_a_house_format(starter: Path) -> None:
    items = [json.loads(line) for line in (starter / "data/items.jsonl").read_text().splitlines()]
    assert 30 <= len(items) <= 50
    assert len({i["id"] for i in items}) == len(items)
    for item in items:
        number, unit = item["answer"].split(" ")
        assert float(number) >= 0 and "," not in number and unit.strip()


def test_the_commented_lines_switch_to_openai_on_the_real_task(starter: Path) -> None:
    recipe = starter / "skill.skopt"
    lines = recipe.read_text().splitlines()
    switched = []
    for line in lines:
        if line.strip() == "provider = sim":
            continue  # "use the commented lines instead of `provider = sim`"
        if line.startswith("  # ") and "=" in line:  # a commented setting inside a block
            line = line.replace("# ", "", 1)
        if line.strip().startswith("env ") and "= rules" in line:
            line = "  env = units"  # "in train, set `env = units`"
        switched.append(line)
    recipe.write_text("\n".join(switched) + "\n")
    code, _, err = run("check", str(recipe))
    assert code == 0, err
    assert "warning: OPENAI_API_KEY is not set" in err  # the key is needed only to run
    code, text, _ = run("plan", str(recipe))
    assert code == 0 and "gpt-4o-mini" in text and "simulation" not in text
    assert "env units" in text


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "skill.md").write_text("mine\n")
    code, out, err = run("init", str(tmp_path))
    assert code == 2 and out == ""
    assert f"already there: {tmp_path / 'skills' / 'skill.md'}" in err
    assert (tmp_path / "skills" / "skill.md").read_text() == "mine\n"
    assert not (tmp_path / "skill.skopt").exists()  # nothing at all was written


def test_init_defaults_to_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("init")
    assert code == 0, err
    assert all((tmp_path / name).is_file() for name in FILES)
    assert run("check", "skill.skopt")[0] == 0
