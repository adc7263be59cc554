"""Prompt templates: Jinja2 files, one per role and purpose, rendered with StrictUndefined.

A recipe's `prompts = "dir"` replaces built-in templates by file name. The rollout template is
deliberately thin: the skill is the system message, the task is the user message, plus at most
one short line stating the env's answer format.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template, meta

BUILT_IN = Path(__file__).parent


@functools.cache
def _environment(override: str | None) -> Environment:
    folders = [override, str(BUILT_IN)] if override else [str(BUILT_IN)]
    return Environment(
        loader=FileSystemLoader(folders),
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def template(name: str, override: str | None = None) -> Template:
    return _environment(override).get_template(name)


def render(name: str, override: str | None = None, **values: object) -> str:
    return template(name, override).render(**values).strip()


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
        {"evidence", "skill", "kind", "max_edits", "meta_skill", "step_buffer"}
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


def needed(name: str, override: str | None = None) -> frozenset[str]:
    """The variables a template uses, its includes' too. Raises jinja2.TemplateError."""
    return _needed(_environment(override), name)


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
    folder = str(Path(path).parent)
    return template(Path(path).name, folder).render(**values).strip()


def rollout_user(
    input: str, context: str | None, answer_format: str, prompts: str | None, env_prompt: str | None
) -> str:
    """The target's user message for one item: the env's own template if it names one."""
    values = {"input": input, "context": context, "answer_format": answer_format}
    if env_prompt:
        return render_file(env_prompt, **values)
    return render("rollout_user.j2", prompts, **values)
