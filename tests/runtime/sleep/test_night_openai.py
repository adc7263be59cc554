"""Whole nights through the real openai SDK against the scripted server on 127.0.0.1, over the
reference transcripts: the server answers every request (miner, target, rubric judge, optimizer)
as the simulator would (runtime/backends/sim.py), so a night learns "use uv, not pip".

The secret test: harvest, dry-run, run, status and adopt over the fixtures, then every file
written under the project (the cache's SQLite pages and the journal included), every request
body the server received, and everything printed is searched for every literal of
`fake_secret_literals`. None may be there; the redaction marks must be (the secrets were seen,
and replaced)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skopt.runtime.backends.sim import reply
from skopt.runtime.request import Message, Request
from skopt.runtime.sleep.stage import manifest, nights
from tests.runtime.conftest import KEY
from tests.runtime.server import Reply, ScriptedServer, Seen, openai_completion
from tests.runtime.sleep.conftest import SECRETS
from tests.runtime.sleep.night_recipes import SKILL, night_recipe, served
from tests.runtime.sleep.sessions_for_tests import generic
from tests.ui.invoke import run

pytestmark = pytest.mark.usefixtures("key")
RULE = "- Use uv, not pip."


def as_simulator(seen: Seen) -> bytes:
    """The simulator's answer to the request the SDK sent."""
    body: Any = seen.body
    messages = tuple(Message(m["role"], m["content"]) for m in body["messages"])
    text = reply(Request("m", messages))
    return openai_completion(text, 40, 12, body["model"])


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        scripted.script(*([Reply(body=as_simulator)] * 5_000))
        yield scripted


def recipe_on(server: ScriptedServer, tmp_path: Path, **sleep: str) -> Path:
    return night_recipe(tmp_path, served(server.openai_url), judge="rubric(model = m)", **sleep)


def everything_written(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_no_planted_secret_reaches_a_file_a_request_or_the_terminal(
    server: ScriptedServer, tmp_path: Path
) -> None:
    recipe = recipe_on(server, tmp_path)
    printed = []
    for command in (["harvest", "--json"], ["dry-run"], ["run"], ["status"], ["adopt", "--all"]):
        code, out, err = run("sleep", *command, str(recipe))
        assert code == 0, (command, err)
        printed.append(out + err)

    written = everything_written(recipe.parent)
    sent = json.dumps([r.body for r in server.requests], ensure_ascii=False)
    shown = "\n".join(printed)
    assert server.count() > 20 and "[REDACTED:" in sent and "[REDACTED:" in shown
    assert b"[REDACTED:" in written
    for name, literal in SECRETS.items():
        assert literal.encode() not in written, f"{name} in a file under the project"
        assert literal not in sent, f"{name} in a request body"
        assert literal not in shown, f"{name} on the terminal"
    assert KEY.encode() not in written and KEY not in shown


def test_a_night_through_the_sdk_stages_adopts_and_refuses_a_changed_file(
    server: ScriptedServer, tmp_path: Path
) -> None:
    recipe = recipe_on(server, tmp_path)
    code, out, err = run("sleep", "run", str(recipe))
    assert code == 0, err
    (night,) = nights(recipe.parent / ".skopt" / "sleep")
    m = manifest(night)
    assert m is not None and m.accepted and m.before is not None and m.before < m.after == 1.0
    assert "gate: accepted" in out and RULE in (night / "proposed" / "SKILL.md").read_text()
    roles = {r.body["messages"][0]["role"] for r in server.requests}
    assert roles == {"system", "user"}  # replays carry the skill as the system message
    judged = [e for e in _events(night) if e["kind"] == "call" and e["role"] == "judge"]
    assert judged and all(e["ok"] and not e["cache_hit"] for e in judged)

    live = recipe.parent / "SKILL.md"
    live.write_text(SKILL + "- A line of the user's.\n")
    code, _, err = run("sleep", "adopt", str(recipe), "--all")
    assert code == 2 and "changed since the night was staged" in err
    live.write_text(SKILL)
    code, out, _ = run("sleep", "adopt", str(recipe), "--all")
    assert code == 0 and "adopted change 1" in out
    assert live.read_text() == (night / "proposed" / "SKILL.md").read_text()


def test_a_night_through_the_sdk_that_the_gate_rejects(
    server: ScriptedServer, tmp_path: Path
) -> None:
    folder = tmp_path / "sessions"
    said = {"a": ["add httpx", "no, use uv not pip"], "b": ["add ruff", "no, use pip not uv"]}
    generic(folder, said)
    recipe = recipe_on(server, tmp_path, sources=f'[generic("{folder}")]')
    code, out, err = run("sleep", "run", str(recipe))
    assert code == 0, err
    (night,) = nights(recipe.parent / ".skopt" / "sleep")
    m = manifest(night)
    assert m is not None and not m.accepted and m.proposed is not None
    assert "gate: rejected" in out
    code, _, err = run("sleep", "adopt", str(recipe), "--all")
    assert code == 2 and (recipe.parent / "SKILL.md").read_text() == SKILL


def _events(night: Path) -> list[dict[str, Any]]:
    lines = (night / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_a_night_stops_before_a_phase_once_its_time_is_up(tmp_path: Path) -> None:
    # every answer takes 0.2 s, so mining the fixtures' sessions alone takes longer than 1 s
    with ScriptedServer() as slow:
        slow.script(*([Reply(body=as_simulator, delay=0.2)] * 100))
        recipe = recipe_on(slow, tmp_path)
        recipe.write_text(recipe.read_text().replace("calls = 100", "calls = 100, time = 1s"))
        code, _, err = run("sleep", "run", str(recipe))
        assert code == 3 and "the time budget is used up" in err
        (night,) = nights(recipe.parent / ".skopt" / "sleep")
        phases = [e["phase"] for e in _events(night) if e["kind"] == "phase_started"]
        assert phases == ["mine"] and manifest(night) is None
        code, out, _ = run("sleep", "status", str(recipe))
        assert "stopped by the budget, nothing staged" in out
        run("sleep", "run", str(recipe))  # a night stopped by the budget has ended:
        assert len(nights(recipe.parent / ".skopt" / "sleep")) == 2  # the next one is new
