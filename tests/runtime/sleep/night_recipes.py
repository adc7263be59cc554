"""Sleep recipes for the tests of whole nights: the reference transcripts (or hand-written
sessions) in a temporary project, with the simulator or a model on the scripted server."""

from __future__ import annotations

from pathlib import Path

from tests.runtime.conftest import KEY_ENV
from tests.runtime.sleep.conftest import copy_transcripts

SKILL = "# Notes for coding agents\n\n- Run the tests before saying a change is done.\n"
SIM = "model m {\n  provider = sim\n}\n"


def served(url: str) -> str:
    """The model block of a model on the scripted server, one call at a time."""
    return (
        'model m {\n  provider    = openai\n  name        = "gpt-test"\n'
        f'  base_url    = "{url}"\n  api_key_env = "{KEY_ENV}"\n  concurrency = 1\n'
        "  price { input = $1, output = $2, per = 1M }\n}\n"
    )


def night_recipe(
    tmp_path: Path, model: str = SIM, sources: str | None = None, **sleep: str
) -> Path:
    """`tmp_path/project/sleep.skopt` over a copy of the reference transcripts (or `sources`),
    with a skill file; `sleep` overrides keys of the sleep block."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "SKILL.md").write_text(SKILL)
    if sources is None:
        copy = copy_transcripts(tmp_path)
        sources = (
            f'[claude(root = "{copy}/claude"), codex(root = "{copy}/codex"),'
            f' generic("{copy}/generic")]'
        )
    settings = {
        "sources": sources,
        "within": '"/home/dana/src"',
        "since": "87_600h",
        "target": "m",
        "optimizer": "m",
        "judge": "rules",
        "skill": '"SKILL.md"',
        "max_tasks": "8",
        "lr": "2",
        "minibatch": "3",
    } | sleep
    body = "\n".join(f"  {k} = {v}" for k, v in settings.items())
    path = project / "sleep.skopt"
    path.write_text(f"skopt 1\n{model}\nsleep {{\n{body}\n  budget {{ calls = 100 }}\n}}\n")
    return path
