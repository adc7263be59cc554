"""`--set` as a shell delivers it: bare URLs and paths, and money whose `$` the shell ate."""

from __future__ import annotations

import json

from tests.conftest import RECIPES
from tests.ui.invoke import run


def test_the_readme_base_url_example_needs_no_quotes() -> None:
    code, printed, err = run(
        "plan",
        str(RECIPES / "openai.skopt"),
        "--json",
        "--set",
        "gpt-mini.base_url=http://127.0.0.1:8000/v1",
    )
    assert code == 0, err
    models = {m["name"]: m for m in json.loads(printed)["models"]}
    assert models["gpt-mini"]["base_url"] == "http://127.0.0.1:8000/v1"


def test_a_skill_path_needs_no_quotes() -> None:
    skill = RECIPES / "skills" / "demo.md"
    code, printed, err = run(
        "plan", str(RECIPES / "demo.skopt"), "--json", "--set", f"train.skill={skill}"
    )
    assert code == 0, err
    assert json.loads(printed)["jobs"][0]["train"]["skill"] == str(skill)


def test_money_eaten_by_the_shell_gets_the_single_quoted_spelling() -> None:
    # what `skopt plan demo.skopt --set budget.usd=$25` receives from the shell
    code, _, err = run("plan", str(RECIPES / "demo.skopt"), "--set", "budget.usd=5")
    assert code == 2
    assert "the shell ate '$…'" in err
    assert "--set 'budget.usd=$5'" in err


def test_a_flag_without_a_key() -> None:
    code, _, err = run("check", str(RECIPES / "demo.skopt"), "--set", "=3")
    assert code == 2
    assert "no key before '='" in err
