"""Recipes someone else wrote: `check` and `plan` run none of their code and print none of the
secrets that sit beside them (a `.env`, a key file), and point at real places only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.invoke import run

SECRET = "sk-proj-PLANTED-0123456789abcdef"
RECIPE_HEAD = """\
skopt 1
model m { provider = sim }
env e { kind = synthetic(items = 30) }
"""
TRAIN = "train { target = m, optimizer = m, skill = empty, epochs = 1, batch_size = 10 }\n"


def test_a_missing_recipe_is_not_shown_at_a_made_up_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.skopt"
    code, _, err = run("check", str(missing))
    assert code == 2
    assert f"--> {missing}\n" in err
    assert f"{missing}:1:1" not in err and " | " not in err  # no caret block


@pytest.mark.parametrize("command", ["check", "plan", "fmt"])
def test_a_secret_file_given_as_the_recipe_is_not_echoed(tmp_path: Path, command: str) -> None:
    env = tmp_path / ".env"
    env.write_text(f"OPENAI_API_KEY={SECRET}\nOTHER=1\n")
    code, out, err = run(command, str(env))
    assert code == 2
    assert f"{env} is not a skopt recipe" in err
    assert "OPENAI_API_KEY" not in out + err and SECRET not in out + err


@pytest.mark.parametrize("command", ["check", "plan"])
@pytest.mark.parametrize("target", [".env", "keys.skopt", "keys"])
def test_an_imported_secret_file_is_not_echoed(tmp_path: Path, command: str, target: str) -> None:
    (tmp_path / target).write_text(f"OPENAI_API_KEY={SECRET}\n")
    recipe = tmp_path / "r.skopt"
    recipe.write_text(
        f'skopt 1\nimport "{target}"\n' + RECIPE_HEAD.removeprefix("skopt 1\n") + TRAIN
    )
    code, out, err = run(command, str(recipe))
    assert code == 2
    assert f"--> {recipe}:2:8" in err  # at the import line
    assert "OPENAI_API_KEY" not in out + err and SECRET not in out + err


def test_importing_a_folder_points_at_the_import(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "main").mkdir()
    recipe = tmp_path / "main" / "r.skopt"
    recipe.write_text('skopt 1\nimport "../bad"\n')
    code, _, err = run("check", str(recipe))
    assert code == 2
    assert f"--> {recipe}:2:8" in err
    assert "bad:1:1" not in err
