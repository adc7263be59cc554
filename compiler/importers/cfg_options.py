"""`--cfg-options a.b=v c=w`: SkillOpt's overrides, applied after `_base_` inheritance.

Each option is a line of a small source of its own, `<cfg-options>`, so a bad one gets a
diagnostic with carets under it. `section.key=value` sets that key; a flat `key=value` sets
the key it names (`batch_size` is `train.batch_size`), as SkillOpt does. Values are read as
YAML scalars (`true`, `4`, `0.5`, `"text"`); an empty value is the empty string.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from skopt.compiler.importers.skillopt_keys import canonical, is_secret
from skopt.compiler.importers.yaml_config import REDACTED, Setting
from skopt.grammar.source import Diagnostic, Span, error

CFG_OPTIONS = "<cfg-options>"
PREFIX = "--cfg-options "


def options_source(options: Sequence[str]) -> str:
    """The options as the source their diagnostics quote (secret values blanked)."""
    lines = []
    for option in options:
        key, eq, _ = option.partition("=")
        secret = eq and is_secret(canonical(key.strip()))
        lines.append(PREFIX + (f"{key}={REDACTED}" if secret else option))
    return "\n".join(lines)


def apply_options(settings: dict[str, Setting], options: Sequence[str]) -> list[Diagnostic]:
    """Set each option's key in `settings` (in place); the problems, one per bad option."""
    problems = []
    for line, option in enumerate(options, start=1):
        key, eq, text = option.partition("=")
        col = len(PREFIX) + 1
        span = Span(CFG_OPTIONS, line, col, line, col + max(1, len(key)))
        if not eq or not key.strip() or key.strip() != key:
            problems.append(
                error(
                    f"--cfg-options takes KEY=VALUE, not {option!r}",
                    span,
                    "expected section.key=value",
                    help="e.g. --cfg-options train.batch_size=20 optimizer.lr_scheduler=linear",
                )
            )
            continue
        settings[canonical(key)] = Setting(_scalar(text), span)
    return problems


def _scalar(text: str) -> object:
    if not text:
        return ""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return text if isinstance(value, dict) else value
