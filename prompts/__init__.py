"""Prompt templates: Jinja2 files, one per role and purpose, rendered with StrictUndefined.

A recipe's `prompts = "dir"` replaces built-in templates by file name. The rollout template is
deliberately thin: the skill is the system message, the task is the user message, plus at most
one short line stating the env's answer format.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, Template

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
