"""Prompt templates: Jinja2 files, one per role and purpose, rendered with StrictUndefined in a
sandbox (`sandbox.py`: a template formats text and does nothing else, within bounds).

A recipe's `prompts = "dir"` replaces built-in templates by file name. The rollout template is
deliberately thin: the skill is the system message, the task is the user message, plus at most
one short line stating the env's answer format. Whatever goes wrong in a template — it does not
parse, uses a name it is not given, tries to leave the sandbox, runs past a bound — leaves this
package as one `TemplateFailure`.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jinja2 import Environment, TemplateSyntaxError, meta

from skopt.prompts.sandbox import BUDGET, MAX_STEPS, Budget, TemplateSandbox

BUILT_IN = Path(__file__).parent
MAX_REASON = 300  # characters of an error's own text (it may quote a value)


class TemplateFailure(Exception):
    """A template that cannot be used; the message names it and says why."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"the template {name} cannot be used: {reason}")
        self.name, self.reason = name, reason


@functools.cache
def _environment(override: str | None) -> TemplateSandbox:
    return TemplateSandbox([override, str(BUILT_IN)] if override else [str(BUILT_IN)])


def _reason(exc: Exception) -> str:
    if isinstance(exc, TemplateSyntaxError):
        text = f"line {exc.lineno}: {exc.message}"
    elif isinstance(exc, RecursionError):
        text = "it calls itself too deeply"
    else:
        text = str(exc) or type(exc).__name__
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _render(name: str, override: str | None, values: dict[str, object]) -> str:
    token = BUDGET.set(Budget(MAX_STEPS, parent=BUDGET.get()))
    try:
        return _environment(override).get_template(name).render(**values).strip()
    except Exception as exc:  # whatever a template raises is that template's failure
        raise TemplateFailure(name, _reason(exc)) from exc
    finally:
        BUDGET.reset(token)


def render(name: str, override: str | None = None, **values: object) -> str:
    return _render(name, override, values)


@contextmanager
def shared_budget(steps: int) -> Iterator[None]:
    """Bound the steps of every render inside, together (a plan renders a template per item)."""
    token = BUDGET.set(Budget(steps, who="the templates of this plan take"))
    try:
        yield
    finally:
        BUDGET.reset(token)


def templates_hash(override: str | None = None) -> str:
    """A hash of every template in effect (built-in, then the override folder's)."""
    digest = hashlib.sha256()
    for folder in (BUILT_IN, Path(override) if override else None):
        if folder is None or not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.j2")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# What each template is given: the contract a `prompts = "dir"` override is checked against.
VARIABLES: dict[str, frozenset[str]] = {
    "rollout_user.j2": frozenset({"input", "context", "answer_format"}),
    "reflect.j2": frozenset(
        {"evidence", "skill", "kind", "task_kind", "max_edits", "meta_skill", "step_buffer"}
    ),
    "reflect_full.j2": frozenset({"evidence", "skill", "kind", "meta_skill", "step_buffer"}),
    "merge.j2": frozenset({"evidence", "skill", "meta_skill", "step_buffer"}),
    "merge_full.j2": frozenset({"evidence", "skill"}),
    "select.j2": frozenset({"evidence", "skill", "lr", "meta_skill", "step_buffer"}),
    "learning_rate.j2": frozenset({"evidence", "skill", "available", "meta_skill", "step_buffer"}),
    "rewrite.j2": frozenset({"evidence", "skill"}),
    "slow_update.j2": frozenset({"evidence", "skill"}),
    "meta_skill.j2": frozenset({"evidence", "meta_skill"}),
}

# What each sleep template is given (SPEC §7; the night renders them, the plan counts them). No
# recipe key overrides them, so they are not in VARIABLES, the contract of `prompts = "dir"`.
SLEEP_VARIABLES: dict[str, frozenset[str]] = {
    "sleep_mine.j2": frozenset({"session"}),
    "sleep_replay.j2": frozenset({"task"}),
    "sleep_judge.j2": frozenset({"task", "rubric", "answer"}),
    "sleep_reflect.j2": frozenset({"skill", "failures", "lr", "memory"}),
}

# A value of the type each variable has, for the trial render of `skopt check`.
EXAMPLES: dict[str, object] = {
    "input": "What is the capital of France?",
    "context": "France is a country in Europe.",
    "answer_format": "tag",
    "evidence": '{"trajectories": [\n  {"input": "2 + 2", "output": "5", "expected": "4"}\n]}',
    "skill": "# Skill\n\nAnswer briefly.",
    "kind": "failures",
    "task_kind": "qa",
    "max_edits": 4,
    "lr": 4,
    "available": 6,
    "meta_skill": "Rules about units helped.",
    "step_buffer": "Rejected: a rule about dates.",
    "session": "user: add httpx\nagent: ran `pip install httpx`\nuser: no, use uv not pip",
    "task": "Add the httpx package to the project's dependencies.",
    "rubric": "Adds the dependency with uv; pip is not used.",
    "answer": "uv add httpx",
    "failures": '{"task": "Add httpx.", "answer": "pip install httpx", "note": "Used pip."}',
    "memory": "Rejected: a rule about commit messages.",
}


def try_render(name: str, folder: str, given: frozenset[str]) -> None:
    """Render a template of `folder` once with example values. Raises TemplateFailure."""
    _render(name, folder, {key: EXAMPLES[key] for key in given})


def needed(name: str, override: str | None = None) -> frozenset[str]:
    """The variables a template uses, its includes' too. Raises TemplateFailure."""
    try:
        return _needed(_environment(override), name)
    except Exception as exc:  # parsing only: nothing of the template runs here
        raise TemplateFailure(name, _reason(exc)) from exc


def _needed(env: Environment, name: str) -> frozenset[str]:
    assert env.loader is not None
    tree = env.parse(env.loader.get_source(env, name)[0])
    found = set(meta.find_undeclared_variables(tree))
    for include in meta.find_referenced_templates(tree):
        if include:
            found |= _needed(env, include)
    return frozenset(found)


def render_file(path: str, **values: object) -> str:
    """A template given by path (an env's `prompt`), rendered like the built-in ones."""
    return _render(Path(path).name, str(Path(path).parent), values)


def rollout_user(
    input: str, context: str | None, answer_format: str, prompts: str | None, env_prompt: str | None
) -> str:
    """The target's user message for one item: the env's own template if it names one."""
    values = {"input": input, "context": context, "answer_format": answer_format}
    if env_prompt:
        return render_file(env_prompt, **values)
    return render("rollout_user.j2", prompts, **values)
