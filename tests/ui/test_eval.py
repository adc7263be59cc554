"""`skopt eval`: one skill scored on a split with the target model — on the simulator (where it
reproduces a run's own test and gate scores) and through the real openai SDK against a
scripted local server (the plain harness's messages, dollars, failures); exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RECIPES
from tests.runtime.server import Reply, ScriptedServer, Seen, json_reply, openai_completion
from tests.ui.invoke import DEMO, run

KEY_ENV = "SKOPT_EVAL_TEST_KEY"
SKILL = "# Sums\n\nAdd the two numbers.\n"


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", KEY_ENV):
        monkeypatch.delenv(name, raising=False)


def scored(*args: str) -> dict[str, Any]:
    code, out, err = run("eval", *args, "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_eval_reproduces_the_runs_test_scores(finished: Path) -> None:
    summary = json.loads((finished / "summary.json").read_text())
    best = scored(DEMO, "--skill", str(finished / "best_skill.md"))
    initial = scored(DEMO, "--skill", str(finished / "skills" / "skill_v0000.md"))
    assert best["hard"] == summary["test"]["best"] > initial["hard"] == summary["test"]["initial"]
    assert best["split"] == "test" and best["items"] == 24 and best["calls"] == 24
    assert best["harness"] == "plain" and best["simulation"] is True and best["usd"] == 0.0


def test_eval_on_the_gate_split_matches_the_gate(finished: Path) -> None:
    summary = json.loads((finished / "summary.json").read_text())
    valid = scored(DEMO, "--skill", str(finished / "best_skill.md"), "--split", "valid")
    assert valid["split"] == "valid" and valid["hard"] == summary["gate"]["best"]


def test_text_output(finished: Path) -> None:
    code, out, _ = run("eval", DEMO, "--skill", str(finished / "best_skill.md"))
    summary = json.loads((finished / "summary.json").read_text())
    score = summary["test"]["best"]
    assert code == 0
    assert f"hard {score:.3f} · soft {score:.3f} · n 24" in out
    assert "test split of env rules · target sim · harness plain (simulation)" in out


def test_set_overrides_apply(finished: Path) -> None:
    limited = scored(
        DEMO, "--skill", str(finished / "best_skill.md"), "--set", "rules.limit.test=5"
    )
    assert limited["items"] == 5


def test_usage_and_recipe_errors_exit_2(tmp_path: Path) -> None:
    skill = tmp_path / "skill.md"
    skill.write_text(SKILL)
    assert run("eval", DEMO, "--skill", str(tmp_path / "none.md"))[0] == 2
    code, _, err = run("eval", DEMO, "--skill", str(skill), "--harness", "fancy")
    assert code == 2 and "'fancy' is not one of 'plain', 'deploy'" in err
    assert run("eval", DEMO, "--skill", str(skill), "--split", "gate")[0] == 2
    code, _, err = run("eval", DEMO, "--skill", str(skill), "--set", "train.epochs=0")
    assert code == 2 and "--> <command line>" in err
    code, _, err = run("eval", str(RECIPES / "base.skopt"), "--skill", str(skill))
    assert code == 2 and "eval needs a recipe with one train job" in err


def test_a_missing_key_is_a_runtime_failure(tmp_path: Path) -> None:
    skill = tmp_path / "skill.md"
    skill.write_text(SKILL)
    code, out, err = run("eval", str(RECIPES / "openai.skopt"), "--skill", str(skill))
    assert code == 1 and out == ""
    assert "error: OPENAI_API_KEY is not set" in err and "Traceback" not in err


# -- through the openai SDK against a scripted local server ----------------------------------


def sums_recipe(folder: Path, base_url: str) -> Path:
    """A qa recipe whose target is an OpenAI-compatible server at `base_url`, priced."""
    items = [
        {"id": f"s{n}", "question": f"What is {n} + {n}?", "answer": str(2 * n)} for n in range(20)
    ]
    (folder / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (folder / "skill.md").write_text(SKILL)
    recipe = folder / "sums.skopt"
    recipe.write_text(
        f"""skopt 1
model local {{
  provider    = openai
  name        = "gpt-test"
  base_url    = "{base_url}"
  api_key_env = "{KEY_ENV}"
  retries     = 0
  price {{ input = $1, output = $2, per = 1M }}
}}
env sums {{
  kind   = qa
  data   = "items.jsonl"
  input  = "question"
  answer = "answer"
  metric = exact
  split {{ train = 50%, valid = 25%, test = 25%, seed = 3 }}
}}
train {{
  target    = local
  optimizer = local
  skill     = "skill.md"
}}
"""
    )
    return recipe


QUESTION = re.compile(r"What is (\d+) \+ (\d+)\?")


def asked(seen: Seen) -> int:
    """The n of the question "What is n + n?" in a request."""
    found = QUESTION.search(seen.body["messages"][-1]["content"])
    assert found is not None
    return int(found.group(1))


def answer_odd_ones(seen: Seen) -> bytes:
    """Right for odd numbers, wrong for even ones."""
    n = asked(seen)
    said = 2 * n if n % 2 else 2 * n + 1
    return openai_completion(f"<answer>{said}</answer>", 30, 4, "gpt-test")


def test_eval_through_the_openai_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-eval")
    with ScriptedServer() as server:
        recipe = sums_recipe(tmp_path, server.openai_url)
        server.script(*[Reply(body=answer_odd_ones) for _ in range(5)])
        before = sorted(p.name for p in tmp_path.iterdir())
        result = scored(str(recipe), "--skill", str(tmp_path / "skill.md"))
        seen = list(server.requests)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no cache, no run folder
    odd = sum(asked(s) % 2 for s in seen)
    assert result["items"] == len(seen) == 5 and result["calls"] == 5
    assert result["hard"] == result["soft"] == odd / 5
    assert result["usd"] == pytest.approx(5 * (30 * 1 + 4 * 2) / 1_000_000)
    assert result["simulation"] is False
    for request in seen:
        system, user = request.body["messages"]
        assert system == {"role": "system", "content": SKILL}  # the plain harness
        assert user["role"] == "user"
        assert QUESTION.fullmatch(user["content"].split("\n")[0])
        assert user["content"].endswith("Give your final answer inside <answer></answer>.")


def answer_bare(seen: Seen) -> bytes:
    """The right sum, alone on the last line, with no <answer> tag (nothing asked for one)."""
    return openai_completion(f"Let me add.\n{2 * asked(seen)}", 30, 4, "gpt-test")


def test_the_deploy_harness_shows_the_skill_as_deployed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-eval")
    with ScriptedServer() as server:
        recipe = sums_recipe(tmp_path, server.openai_url)
        task = "Add the numbers the user gives."
        server.script(*[Reply(body=answer_bare) for _ in range(5)])
        code, out, err = run(
            "eval", str(recipe), "--skill", str(tmp_path / "skill.md"), "--harness", "deploy",
            "--json", "--set", f"sums.task={task}", "--set", "sums.strict_format=on",
        )  # fmt: skip
        seen = list(server.requests)
    assert code == 0, err
    result = json.loads(out)
    assert result["harness"] == "deploy" and result["items"] == len(seen) == 5
    assert result["hard"] == 1.0  # read from the last line: deploy asks for no format
    assert f"task statement: {task}" in result["notes"]
    for request in seen:
        system, user = request.body["messages"]
        assert system == {"role": "system", "content": SKILL.rstrip() + "\n\n" + task}
        assert QUESTION.fullmatch(user["content"])  # the raw input, no answer-format line


def test_a_failed_call_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-eval")
    with ScriptedServer() as server:
        recipe = sums_recipe(tmp_path, server.openai_url)
        server.script(*[json_reply(400, "bad request, says the server") for _ in range(5)])
        code, out, err = run("eval", str(recipe), "--skill", str(tmp_path / "skill.md"))
    assert code == 1 and out == ""
    assert "a call to 'local' failed" in err and "sk-test-eval" not in err
