"""Recipes someone else wrote: `check` and `plan` run none of their code and print none of the
secrets that sit beside them (a `.env`, a key file), and point at real places only."""

from __future__ import annotations

import importlib
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


# -- templates render in a sandbox: hostile ones end in a diagnostic, never in an effect ------

# Each `{marker}` is the path of a file the attack would create; `{var}` a variable its
# template is given, so that the variables check passes and the sandbox has to hold.
HOSTILE = {
    "globals_via_cycler": "{{ cycler.__init__.__globals__.os.system('touch {marker}') }}",
    "globals_via_self": "{{ self.__init__.__globals__.os.system('touch {marker}') }}",
    "globals_via_a_method": "{{ {var}.upper.__globals__.os.system('touch {marker}') }}",
    "subclasses": (
        "{% for c in {var}.__class__.__mro__[1].__subclasses__() %}"
        "{% if c.__name__ == 'Popen' %}{{ c(['touch', '{marker}']) }}{% endif %}{% endfor %}"
    ),
    "attr_filter_walk": (
        "{{ ({var}|attr('__class__')|attr('__base__')|attr('__subclasses__'))() }}"
    ),
    "format_walk": "{{ '{0.__class__.__init__.__globals__}'.format({var}) }}",
    "range_loop": "{% for i in range(10**9) %}{% endfor %}",
    "nested_loops": (
        "{% for a in {var} * 100000 %}{% for b in {var} * 100000 %}{% endfor %}{% endfor %}"
    ),
    "exponential_macro": (
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}"
    ),
    "huge_output": "{% for a in {var} * 1000 %}{{ {var} * 10000 }}{% endfor %}",
    "huge_number": "{{ 7 ** 1000000000 }}",
    "include_a_secret": "{% include '.env' %}",
}
ROLES = {"rollout_user.j2": "input", "reflect.j2": "skill"}


def hostile_folder(root: Path, template: str, name: str) -> Path:
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    marker = root / "PWNED"
    text = HOSTILE[template].replace("{marker}", str(marker)).replace("{var}", ROLES[name])
    (root / "prompts" / name).write_text(text + "{{ " + ROLES[name] + " }}\n")
    recipe = root / "r.skopt"
    recipe.write_text(RECIPE_HEAD + TRAIN.replace(" }", ', prompts = "prompts" }'))
    return recipe


@pytest.mark.parametrize("name", sorted(ROLES))
@pytest.mark.parametrize("template", sorted(HOSTILE))
def test_a_hostile_template_is_a_diagnostic_and_does_nothing(
    tmp_path: Path, template: str, name: str
) -> None:
    recipe = hostile_folder(tmp_path, template, name)
    for command in ("check", "plan"):
        code, out, err = run(command, str(recipe))
        assert code == 2, (command, out, err)
        assert f"the template {name}" in err, err
        assert f"--> {recipe}:4:" in err  # at `prompts = "prompts"` in the train block
        assert SECRET not in out + err
    assert not (tmp_path / "PWNED").exists()


def test_the_pwned_template_of_the_issue_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # exactly as reported: a relative `touch PWNED`, run from the recipe's folder
    recipe = hostile_folder(tmp_path, "globals_via_cycler", "rollout_user.j2")
    (tmp_path / "prompts" / "rollout_user.j2").write_text(
        "{{ cycler.__init__.__globals__.os.system('touch PWNED') }}{{ input }}"
    )
    monkeypatch.chdir(tmp_path)
    for command in ("check", "plan", "run"):
        assert run(command, recipe.name)[0] == 2
    assert not (tmp_path / "PWNED").exists()
    assert not (tmp_path / "runs").exists()  # `run` stops at the diagnostic, before a folder


def test_a_template_hostile_on_one_item_only_fails_the_plan(tmp_path: Path) -> None:
    """The trial render passes; the plan renders the rollout message of every item."""
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"input": "q{n}", "answer": "a"}}\n' for n in range(20))
    )
    (tmp_path / "ask.j2").write_text(
        "{% if input == 'q7' %}{{ input.__class__.__mro__ }}{% endif %}{{ input }}\n"
    )
    recipe = tmp_path / "r.skopt"
    recipe.write_text(
        'skopt 1\nmodel m { provider = sim }\nenv e { kind = qa, data = "items.jsonl", '
        'prompt = "ask.j2" }\n' + TRAIN
    )
    code, _, err = run("plan", str(recipe))
    assert code == 2
    assert "the template ask.j2 cannot be used: access to attribute '__class__'" in err
    assert f"--> {recipe}:3:" in err  # at the env's `prompt`


def test_the_renders_of_one_plan_share_a_bound(tmp_path: Path) -> None:
    """Each render stays under its own bound; together they pass the plan's."""
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"input": "{n:030d}", "answer": "a"}}\n' for n in range(20))
    )
    (tmp_path / "ask.j2").write_text("{% for c in input * 2000 %}{% endfor %}{{ input }}\n")
    recipe = tmp_path / "r.skopt"
    recipe.write_text(
        'skopt 1\nmodel m { provider = sim }\nenv e { kind = qa, data = "items.jsonl", '
        'prompt = "ask.j2" }\n' + TRAIN
    )
    code, _, err = run("check", str(recipe))
    assert code == 2
    assert "the templates of this plan take more than 1,000,000 loop steps and calls" in err


def test_an_ordinary_template_override_still_works(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "rollout_user.j2").write_text(
        "{% for word in input.split() %}{{ word|upper }} {% endfor %}\n"
        "{%- if answer_format == 'tag' %} Answer in <answer></answer>.{% endif %}\n"
    )
    recipe = tmp_path / "r.skopt"
    recipe.write_text(RECIPE_HEAD + TRAIN.replace(" }", ', prompts = "prompts" }'))
    code, _, err = run("plan", str(recipe))
    assert code == 0, err


# -- python envs are not imported by check or plan ----------------------------------------


def test_check_and_plan_never_import_a_python_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "IMPORTED"
    (tmp_path / "evil_env.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "class Env:\n    def score(self, item, output):\n        return 1.0\n"
    )
    (tmp_path / "items.jsonl").write_text(
        "".join(f'{{"input": "q{n}", "answer": "a"}}\n' for n in range(20))
    )
    recipe = tmp_path / "r.skopt"
    recipe.write_text(
        'skopt 1\nmodel m { provider = sim }\nenv e { kind = python("evil_env:Env"), '
        'data = "items.jsonl" }\n' + TRAIN
    )
    monkeypatch.syspath_prepend(str(tmp_path))  # importable, were anything to try
    monkeypatch.chdir(tmp_path)
    for command in ("check", "plan"):
        code, _, err = run(command, str(recipe))
        assert code == 0, err
    assert not marker.exists()
    importlib.import_module("evil_env")  # the module does what it says when imported
    assert marker.exists()
