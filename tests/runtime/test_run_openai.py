"""`skopt run` end to end through the real openai SDK against the scripted local server.

The server plays both roles, deterministically. As the target (no <task> tag) it spells a word
backwards only when its system message (the skill) states RULE, and otherwise repeats the word
(right for palindromes only). As the optimizer it reads the prompt's <task> and <evidence> and
answers the JSON that task asks for: reflect proposes RULE (then DISTRACTOR, then SPARES: those
the skill does not have yet, as a sensible optimizer would), merge takes the
union, select picks the first, and so on. So a working run learns RULE and its test score rises.

The second test makes the server answer garbage (and garbage again when re-asked) to one
optimizer task at a time: the run still finishes, writes no corrupt skill, and records the
unusable answers under steps/ (a step's optimizer.json, an epoch boundary's records).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skopt.runtime.backends.sim import read_prompt
from skopt.ui.cli import main
from tests.conftest import call_events
from tests.runtime.conftest import KEY, KEY_ENV
from tests.runtime.server import Reply, ScriptedServer, Seen, openai_completion

pytestmark = pytest.mark.usefixtures("key")

RULE = "To spell a word backwards, write its letters in reverse order."
DISTRACTOR = "Keep every answer short."
SPARES = ("Answer in lower case.", "Use no punctuation.")
GARBAGE = "Sorry, I would rather not say. GARBAGE-7f3a"
SKILL = "# Word games\n\nAnswer each question briefly.\n"
_WORDS = """
apple river level stone cloud radar bread chair noon green table light civic music paper
house plant kayak water sugar horse money glass tiger refer north dream smile ocean train
"""
WORDS = _WORDS.split()  # 30 words, 6 of them palindromes (right even without the rule)
QUESTION = re.compile(r"Spell the word '(\w+)' backwards\.")
TASK = re.compile(r"<task>(\w+)</task>")
GUIDANCE = "- Keep spelling words backwards letter by letter."
NOTES = "Edits that state how to reverse a word help."


# -- the server's two roles --------------------------------------------------------------


def task_of(body: Any) -> str | None:
    """The optimizer task of a request (from its first user message); None for the target."""
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    found = TASK.search(users[0]) if users else None
    return found.group(1) if found else None


def target(body: Any) -> str:
    system = "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    word = QUESTION.search(user)
    if word is None:
        return "<answer>I do not know</answer>"
    return f"<answer>{word.group(1)[::-1] if RULE in system else word.group(1)}</answer>"


def _add(content: str) -> dict[str, Any]:
    return {"op": "add", "content": content, "anchor": None, "rationale": "the evidence"}


def _appended(skill: str, *sentences: str) -> str:
    for sentence in sentences:
        if sentence not in skill:
            skill = f"{skill.rstrip()}\n\n{sentence}\n"
    return skill


def optimizer(task: str, prompt_text: str) -> dict[str, Any]:
    prompt = read_prompt(prompt_text)
    if task == "reflect":
        limit = re.search(r"Propose at most (\d+) edits", prompt_text)
        fresh = [_add(e) for e in (RULE, DISTRACTOR, *SPARES) if e not in prompt.skill]
        return {"edits": fresh[: int(limit.group(1)) if limit else 2]}
    if task == "merge":
        union: dict[str, dict[str, Any]] = {}
        for patch in prompt.items("patches"):
            for edit in patch["edits"]:
                seen = union.setdefault(edit["content"], {**edit, "support": 0})
                seen["support"] += edit.get("support", 1)
        return {"edits": list(union.values())}
    if task == "select":
        return {"selected": [0]}
    if task == "learning_rate":
        return {"lr": 1}
    if task in ("rewrite", "reflect_full"):
        return {"skill": _appended(prompt.skill, RULE)}
    if task == "merge_full":
        return {"skill": prompt.evidence["candidates"][0]}
    if task == "slow_update":
        return {"guidance": GUIDANCE}
    if task == "meta_skill":
        return {"meta_skill": NOTES}
    return {"error": f"unknown task {task}"}


def answering(garbage_for: str | None = None) -> Callable[[Seen], bytes]:
    """The server's reply to any request; `garbage_for` names a task answered with garbage."""

    def respond(seen: Seen) -> bytes:
        body = seen.body
        task = task_of(body)
        if task is None:
            text = target(body)
        elif task == garbage_for:
            text = GARBAGE
        else:
            first = next(m["content"] for m in body["messages"] if m["role"] == "user")
            text = json.dumps(optimizer(task, first))
        return openai_completion(text, 50, 10, body.get("model", "m"))

    return respond


def serve(server: ScriptedServer, respond: Callable[[Seen], bytes], replies: int = 4000) -> int:
    server.script(*([Reply(body=respond)] * replies))
    return replies


# -- the recipe ----------------------------------------------------------------------------


def recipe(tmp_path: Path, url: str, **train: str) -> Path:
    """A qa recipe over 30 words in `tmp_path`; `train` overrides keys of the train block."""
    items = [
        {"id": f"w{i:02d}", "question": f"Spell the word '{w}' backwards.", "answers": [w[::-1]]}
        for i, w in enumerate(WORDS)
    ]
    lines = [json.dumps(item) for item in items]
    (tmp_path / "words.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "skill.md").write_text(SKILL)
    settings = {
        "target": "gpt",
        "optimizer": "gpt",
        "skill": '"skill.md"',
        "epochs": "1",
        "batch_size": "6",
        "minibatch": "2",
        "merge_batch": "2",
        "lr": "linear(max = 2, min = 1)",
        "reflect": "all",
        "seed": "7",
    } | train
    body = "\n".join(f"  {k} = {v}" for k, v in settings.items())
    path = tmp_path / "words.skopt"
    path.write_text(
        f"""skopt 1
model gpt {{
  provider    = openai
  name        = "gpt-test"
  base_url    = "{url}"
  api_key_env = "{KEY_ENV}"
  concurrency = 4
  max_tokens  = 256
  timeout     = 10s
  retries     = 0
}}
env words {{
  kind   = qa
  data   = "words.jsonl"
  input  = "question"
  answer = "answers"
  metric = exact
  split {{ train = 60%, valid = 20%, test = 20%, seed = 3 }}
}}
train {{
{body}
  gate {{ split = valid, metric = hard }}
}}
budget {{ calls = 2k }}
"""
    )
    return path


@dataclass
class Ran:
    exit_code: int
    output: str
    folder: Path

    def json(self, name: str) -> Any:
        return json.loads((self.folder / name).read_text())

    def events(self) -> list[dict[str, Any]]:
        return call_events(self.folder)

    def skills(self) -> dict[str, str]:
        files = [*sorted((self.folder / "skills").glob("*.md")), self.folder / "best_skill.md"]
        return {f.name: f.read_text() for f in files}

    def records(self) -> list[dict[str, Any]]:
        """Every optimizer record the run wrote under steps/ (optimizer.json and the like)."""
        found: list[dict[str, Any]] = []
        for path in sorted((self.folder / "steps").rglob("*.json")):
            found += _records(json.loads(path.read_text()))
        return found


def _records(value: Any) -> list[dict[str, Any]]:
    """The optimizer records in a JSON value, however nested."""
    if isinstance(value, dict):
        if {"task", "usable", "raw"} <= value.keys():
            return [value]
        return [r for v in value.values() for r in _records(v)]
    if isinstance(value, list):
        return [r for v in value for r in _records(v)]
    return []


def run(recipe_path: Path, folder: Path) -> Ran:
    result = CliRunner().invoke(
        main, ["run", str(recipe_path), "--out", str(folder), "--quiet"], catch_exceptions=False
    )
    return Ran(result.exit_code, result.output, folder)


def tasks_asked(server: ScriptedServer) -> list[str | None]:
    return [task_of(r.body) for r in server.requests]


# -- the tests -----------------------------------------------------------------------------


def test_openai_run_learns_the_rule(tmp_path: Path, server: ScriptedServer) -> None:
    scripted = serve(server, answering())
    ran = run(recipe(tmp_path, server.openai_url), tmp_path / "run")
    assert ran.exit_code == 0, ran.output
    assert server.count() < scripted  # every request got the scripted brain, none the echo

    assert RULE in (ran.folder / "best_skill.md").read_text()
    summary = ran.json("summary.json")
    assert summary["simulation"] is False
    assert summary["accepted"] >= 1
    assert summary["gate"]["best"] > summary["gate"]["initial"]
    assert summary["test"]["best"] > summary["test"]["initial"]
    assert summary["test"]["best"] == 1.0

    events = ran.events()
    roles = {e["role"] for e in events if e["kind"] == "call" and e["ok"]}
    assert roles == {"target", "optimizer"}
    assert all(e["ok"] for e in events)
    paid = sum(1 for e in events if e["ok"] and not e["cache_hit"])
    assert paid == server.count()  # each request the server answered is journaled once
    assert {"reflect", "merge", "select"} <= set(tasks_asked(server))

    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    secret = KEY.encode()
    for path in ran.folder.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path


# Each optimizer task, with train settings under which the run asks it (2 epochs, so that the
# boundary phases run too).
TASKS: dict[str, dict[str, str]] = {
    "reflect": {},
    "merge": {},
    "select": {},
    "learning_rate": {"lr": "autonomous"},
    "rewrite": {"mode": "rewrite"},
    "reflect_full": {"mode": "full_rewrite"},
    "merge_full": {"mode": "full_rewrite"},
    "slow_update": {},
    "meta_skill": {},
}


@pytest.mark.parametrize("task", list(TASKS))
def test_garbage_from_the_optimizer_is_recorded_never_fatal(
    tmp_path: Path, server: ScriptedServer, task: str
) -> None:
    serve(server, answering(garbage_for=task))
    ran = run(recipe(tmp_path, server.openai_url, epochs="2", **TASKS[task]), tmp_path / "run")
    assert ran.exit_code == 0, ran.output

    asked = [r for r in server.requests if task_of(r.body) == task]
    assert asked, f"the run never asked for {task}"
    reasks = [r for r in asked if len(r.body["messages"]) > 1]
    assert reasks, f"{task}: a garbage answer was not asked again"

    unusable = [r for r in ran.records() if r["task"] == task and not r["usable"]]
    assert unusable, f"no unusable {task} record under steps/"
    # every call of the task was unusable: a record per first ask (more where the cache answered)
    assert len(unusable) >= len(asked) - len(reasks)
    for record in unusable:
        assert record["reasked"] is True
        assert record["raw"] == [GARBAGE, GARBAGE]
        assert record["problem"]
    assert all(r["usable"] for r in ran.records() if r["task"] != task)

    skills = ran.skills() | {
        "state.current_skill": ran.json("state.json")["current_skill"],
        "state.best_skill": ran.json("state.json")["best_skill"],
    }
    for name, text in skills.items():
        assert GARBAGE not in text, name
        assert text.startswith(SKILL.rstrip()), name  # the skill the run started from
    summary = ran.json("summary.json")
    assert summary["steps"] == 6
    assert GARBAGE not in json.dumps(summary)


# -- edits checked after reflection, and the reflection asked again ------------------------

BAD_ANCHOR = "Spell the word 'apple' backwards."  # a task's input, not text of the skill


BAD_EDIT = {**_add(RULE), "op": "replace", "anchor": BAD_ANCHOR}
# the rule of reflect.j2's own worked example (qa), which the 1.5B was seen to copy
PROMPT_COPY = _add(
    "Counting questions: reply with the number alone. Example: days in 3 weeks -> 21."
)


def rechecking(first: dict[str, Any]) -> Callable[[Seen], bytes]:
    """Reflect proposes `first`; asked again with its problem named, it proposes RULE."""

    def respond(seen: Seen) -> bytes:
        body = seen.body
        if task_of(body) != "reflect":
            return answering()(seen)
        edit = _add(RULE) if len(body["messages"]) > 1 else first
        return openai_completion(json.dumps({"edits": [edit]}), 50, 10, body.get("model", "m"))

    return respond


def test_an_unusable_edit_is_named_and_asked_again(tmp_path: Path, server: ScriptedServer) -> None:
    serve(server, rechecking(BAD_EDIT))
    ran = run(recipe(tmp_path, server.openai_url, reflect="failures"), tmp_path / "run")
    assert ran.exit_code == 0, ran.output
    assert RULE in (ran.folder / "best_skill.md").read_text()

    checked = [e for e in journal(ran.folder) if e["kind"] == "edits_checked"]
    assert checked, "no reflection was checked"
    first = checked[0]
    (finding,) = first["first"]
    assert finding["edit"]["anchor"] == BAD_ANCHOR
    assert finding["problems"] == [
        f'it cannot be applied to the skill "{BAD_ANCHOR}": anchor not found'
    ]
    assert first["second"] == [{"edit": {**finding["edit"], "op": "add", "anchor": None},
                                "problems": [], "repairs": []}]  # fmt: skip
    assert first["kept"] == 1

    asked_again = [r.body["messages"] for r in server.requests if len(r.body["messages"]) == 3]
    assert asked_again, "the reflection was not asked again"
    user, said, problems = asked_again[0]
    assert user["role"] == "user" and said["role"] == "assistant" and BAD_ANCHOR in said["content"]
    assert problems["role"] == "user"
    assert f'- edit 1: it cannot be applied to the skill "{BAD_ANCHOR}"' in problems["content"]
    tasks = [e["task"] for e in journal(ran.folder) if e["kind"] == "optimizer_answer"]
    assert "reflect_recheck" in tasks


def test_a_copy_of_the_prompts_own_example_is_asked_again(
    tmp_path: Path, server: ScriptedServer
) -> None:
    serve(server, rechecking(PROMPT_COPY))
    ran = run(recipe(tmp_path, server.openai_url, reflect="failures"), tmp_path / "run")
    assert ran.exit_code == 0, ran.output
    best = (ran.folder / "best_skill.md").read_text()
    assert RULE in best and "Counting questions" not in best

    first = next(e for e in journal(ran.folder) if e["kind"] == "edits_checked")
    (finding,) = first["first"]
    assert finding["edit"]["content"] == PROMPT_COPY["content"]
    assert finding["problems"] == ["it copies the prompt's example, which is not about this task"]
    assert first["kept"] == 1 and first["second"][0]["edit"]["content"] == RULE


def journal(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]
