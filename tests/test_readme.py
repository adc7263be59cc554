"""The README's opening commands are what a newcomer types first: they must work on a fresh
machine, with the pip that `python3 -m venv` provides."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    """The command lines of the README's first shell block (what .ci/run executes)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.fullmatch(r"```(sh|bash)?", line))
    end = lines.index("```", start + 1)
    return [line for line in lines[start + 1 : end] if line.strip() and not line.startswith("#")]


def normalized(extra: str) -> str:
    """An extra's name as PEP 685 (and setuptools' metadata) writes it."""
    return re.sub(r"[-_.]+", "-", extra).lower()


def test_the_readme_opens_with_an_install_and_run_then_the_tests() -> None:
    install, tests = readme_commands()
    assert "pip install" in install and "skopt run recipes/quickstart.skopt" in install
    assert tests == ".venv/bin/pytest"


def test_every_extra_the_readme_installs_is_declared_under_its_normalised_name() -> None:
    """pip 23.2 compares an extra's name as typed with the metadata's normalised one: an extra
    named `local-1.5b` is written `local-1-5b` by setuptools, and silently not installed."""
    install = readme_commands()[0]
    extras = [
        e.strip() for group in re.findall(r"\.\[([^\]]+)\]", install) for e in group.split(",")
    ]
    assert extras, install
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for extra in extras:
        assert extra in declared, extra
    for name in declared:
        assert normalized(name) == name, f"extra {name!r}: older pips will not find it"


def test_ci_runs_the_readme_commands_and_never_upgrades_pip() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and 'bash -c "$command"' in ci
    assert not re.search(r"pip[^\n|;&]*install[^\n|;&]*--upgrade[^\n|;&]*pip", ci)
