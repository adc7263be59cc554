"""The leakage guard at run level (SPEC §5.2): an optimizer that copies the gold answers of valid
and test items into what it proposes gets none of them into any skill the run writes, in every
mode, and the refusal is recorded with the step.

The run goes through the real openai SDK against the scripted local server of
test_run_openai.py, whose optimizer is made to leak: next to the rule that helps, it proposes a
list with the answer of every word (train, valid and test alike) — as one `add` edit in patch
mode, as lines of the whole skill it writes in the rewrite modes, and in its slow-update
guidance. Only the answers of valid and test items are guarded; those of train items may be
learned, so a rewrite keeps its train lines (the skill stays useful) and loses only the lines
that would leak.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from skopt.runtime.edits import LEAK_REASON
from tests.runtime.server import ScriptedServer, Seen, openai_completion
from tests.runtime.test_run_openai import (
    RULE,
    WORDS,
    Ran,
    optimizer,
    recipe,
    run,
    serve,
    target,
    task_of,
)

pytestmark = pytest.mark.usefixtures("key")


def line(word: str) -> str:
    return f"- '{word}' backwards is {word[::-1]}."


LEAK = "\n".join(line(w) for w in WORDS)


def leaking(task: str, prompt_text: str) -> dict[str, Any]:
    """The optimizer of test_run_openai.py, with every word's answer added to its proposals."""
    answer = optimizer(task, prompt_text)
    if task == "reflect":
        answer["edits"].insert(1, {"op": "add", "content": LEAK, "anchor": None})
    if task in ("rewrite", "reflect_full"):
        answer["skill"] = answer["skill"].rstrip() + "\n\n" + LEAK + "\n"
    if task == "slow_update":
        seen = re.findall(r"Spell the word '(\w+)' backwards", prompt_text)
        answer["guidance"] += "\n" + "\n".join(line(w) for w in seen)
    return answer


def respond(seen: Seen) -> bytes:
    body = seen.body
    task = task_of(body)
    if task is None:
        text = target(body)
    else:
        first = next(m["content"] for m in body["messages"] if m["role"] == "user")
        text = json.dumps(leaking(task, first))
    return openai_completion(text, 50, 10, body.get("model", "m"))


def train_words(ran: Ran) -> set[str]:
    """The words of the train split: every train item is rolled out in each epoch."""
    ids = {
        key.partition("#")[0]
        for path in (ran.folder / "steps").glob("*/record.json")
        for key in json.loads(path.read_text())["items"]
    }
    return {WORDS[int(i.removeprefix("w"))] for i in ids}


def written_skills(ran: Ran) -> dict[str, str]:
    """Every skill text the run wrote: versions, best, candidates, and the state's."""
    texts = {str(p.relative_to(ran.folder)): p.read_text() for p in ran.folder.rglob("*.md")}
    state = ran.json("state.json")
    return texts | {"state.current": state["current_skill"], "state.best": state["best_skill"]}


def refusals(ran: Ran, record: str) -> list[dict[str, Any]]:
    """The outcomes refused by the leakage guard in the steps' `record` files."""
    found = []
    for path in (ran.folder / "steps").glob(f"*/{record}"):
        data = json.loads(path.read_text())
        outcomes = data.get("outcomes", []) if isinstance(data, dict) else data
        found += [o for o in outcomes if o["status"] == "skipped" and o["reason"] == LEAK_REASON]
    return found


SLOW_UPDATE_ON_VALID = "  slow_update { samples = 6, split = valid }\n  gate {"

# (id, train settings, whether train lines survive into the best skill, where refusals are)
MODES = [
    ("patch", {}, False, "record.json"),  # the whole edit is refused: some of its lines leak
    ("rewrite", {"mode": "rewrite"}, True, "record.json"),
    ("full_rewrite", {"mode": "full_rewrite"}, True, "record.json"),
    # slow update on the valid split sees (and here copies) valid answers
    ("slow_update", {"epochs": "2"}, False, "slow_update_outcomes.json"),
]


@pytest.mark.parametrize(
    ("train", "keeps_train_lines", "record"), [m[1:] for m in MODES], ids=[m[0] for m in MODES]
)
def test_no_valid_or_test_answer_reaches_a_skill(
    tmp_path: Path,
    server: ScriptedServer,
    train: dict[str, str],
    keeps_train_lines: bool,
    record: str,
) -> None:
    serve(server, respond)
    path = recipe(tmp_path, server.openai_url, **train)
    if record == "slow_update_outcomes.json":
        path.write_text(path.read_text().replace("  gate {", SLOW_UPDATE_ON_VALID))
    ran = run(path, tmp_path / "run")
    assert ran.exit_code == 0, ran.output

    trained = train_words(ran)
    guarded = [w for w in WORDS if w not in trained]
    assert len(trained) == 18 and len(guarded) == 12  # 60% train; valid and test are guarded
    for name, text in written_skills(ran).items():
        for word in guarded:
            assert not re.search(rf"\b{word[::-1]}\b", text), (name, word)

    best = (ran.folder / "best_skill.md").read_text()
    assert RULE in best  # the skill still learned what helps
    assert ran.json("summary.json")["test"]["best"] == 1.0
    assert all(line(w) in best for w in trained) is keeps_train_lines
    assert refusals(ran, record), f"no refusal by the leakage guard in steps/*/{record}"
