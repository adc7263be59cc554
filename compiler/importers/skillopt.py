"""`skopt import skillopt`: a SkillOpt research-trainer YAML config → a skopt recipe.

load the `_base_` chain → apply `--cfg-options` → map every key (models, env, train) →
report every key left over with the reason it has no counterpart → render canonical text.
The recipe exists only when no error was found; warnings name what was dropped or
approximated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skopt.compiler.importers.cfg_options import CFG_OPTIONS, apply_options, options_source
from skopt.compiler.importers.config import Config
from skopt.compiler.importers.draft import render
from skopt.compiler.importers.skillopt_env import Paths, env_block
from skopt.compiler.importers.skillopt_models import model_blocks
from skopt.compiler.importers.skillopt_train import train_block, update_mode
from skopt.compiler.importers.yaml_config import load_chain
from skopt.grammar.source import Diagnostic, Span, has_errors


@dataclass
class Imported:
    recipe: str | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def import_skillopt(
    config: str, options: Sequence[str] = (), root: Path = Path("."), recipe_dir: Path = Path(".")
) -> Imported:
    loaded = load_chain(config)
    result = Imported(None, list(loaded.diagnostics), dict(loaded.sources))
    if options:
        result.sources[CFG_OPTIONS] = options_source(options)
        result.diagnostics += apply_options(loaded.settings, options)
    if not result.ok:
        return result
    cfg = Config(loaded.settings, Span.whole(loaded.chain[0]))
    paths = Paths(root, recipe_dir)
    mode = update_mode(cfg)
    models = model_blocks(cfg, rewrites=mode != "patch")
    env = env_block(cfg, paths)
    train = train_block(cfg, env.head.split(" ", 1)[1], paths, mode)
    cfg.report_rest()
    result.diagnostics += cfg.diagnostics
    result.diagnostics.sort(key=Diagnostic.sort_key)
    if result.ok:
        result.recipe = render(_header(loaded.chain, options), [*models, env, train], config)
    return result


def _header(chain: list[str], options: Sequence[str]) -> list[str]:
    lines = [f"Imported from the SkillOpt config {chain[0]} by `skopt import skillopt`."]
    if len(chain) > 1:
        lines.append("Inherits (_base_): " + " <- ".join(chain[1:]) + ".")
    if options:
        keys = ", ".join(o.partition("=")[0] for o in options)
        lines.append(f"Overridden with --cfg-options: {keys}.")
    lines.append("Comments mark approximated values; keys with no counterpart were reported.")
    return lines
