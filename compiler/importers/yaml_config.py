"""Reading SkillOpt YAML: one layer per file, `_base_` chains followed, every value with its span.

A layer is a flat dict of dotted keys (`train.batch_size`) to `Setting`s; `keys.canonical`
decides the dotted name of each key, so a child written flat overrides a base written in
sections, as in SkillOpt. `_base_` names one file relative to the file that names it; a cycle
is an error naming the whole chain. Secret values (`*_api_key`, tokens) are blanked in the
sources returned, so that no diagnostic can quote one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import yaml

from skopt.compiler.importers.skillopt_keys import SECTIONS, canonical, is_secret
from skopt.grammar.source import Diagnostic, Span, error

REDACTED = "<redacted>"


@dataclass(frozen=True, slots=True)
class Setting:
    value: object
    span: Span


@dataclass
class Loaded:
    settings: dict[str, Setting] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)  # the files read, child first

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def load_chain(path: str) -> Loaded:
    """The config at `path` merged over its `_base_` chain (the child's values win)."""
    loaded = Loaded()
    layers: list[dict[str, Setting]] = []
    current: str | None = os.path.normpath(path)
    by_path: dict[str, str] = {}  # absolute path -> shown path, in the order read
    where = Span.whole(os.path.normpath(path))
    while current is not None:
        absolute = os.path.abspath(current)
        if absolute in by_path:
            names = [*by_path.values(), current]
            loaded.diagnostics.append(_cycle(names, where))
            return loaded
        by_path[absolute] = current
        loaded.chain.append(current)
        layer, base = _read_layer(current, loaded)
        if layer is None:
            return loaded
        layers.append(layer)
        if base is None:
            current = None
        else:
            where = base.span
            current = os.path.normpath(os.path.join(os.path.dirname(current), str(base.value)))
    for layer in reversed(layers):
        loaded.settings.update(layer)
    return loaded


def _cycle(names: list[str], where: Span) -> Diagnostic:
    return error(
        "circular _base_ inheritance: " + " -> ".join(names),
        where,
        "this _base_ leads back to a file already in the chain",
        help="remove one _base_ of the chain",
    )


def _read_layer(path: str, loaded: Loaded) -> tuple[dict[str, Setting] | None, Setting | None]:
    """One file's settings and its `_base_`, or None (with a diagnostic) when it is unusable."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        loaded.diagnostics.append(error(f"cannot read {path}: {reason}", Span.whole(path)))
        return None, None
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        secrets: list[tuple[int, int]] = []
        result = _layer(path, root, loader, loaded, secrets)
        for start, end in sorted(secrets, reverse=True):
            text = text[:start] + REDACTED + text[end:]
        loaded.sources[path] = text
        return result
    except yaml.YAMLError as exc:
        loaded.sources[path] = text
        loaded.diagnostics.append(_yaml_error(path, exc))
        return None, None
    finally:
        loader.dispose()


def _yaml_error(path: str, exc: yaml.YAMLError) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    span = Span.point(path, mark.line + 1, mark.column + 1) if mark else Span.whole(path)
    return error(f"not valid YAML: {problem}", span)


def _span(path: str, node: yaml.Node) -> Span:
    start, end = node.start_mark, node.end_mark
    return Span(path, start.line + 1, start.column + 1, end.line + 1, end.column + 1)


def _layer(
    path: str,
    root: yaml.Node | None,
    loader: yaml.SafeLoader,
    loaded: Loaded,
    secrets: list[tuple[int, int]],
) -> tuple[dict[str, Setting] | None, Setting | None]:
    if root is None:
        return {}, None  # an empty file is an empty layer
    if not isinstance(root, yaml.MappingNode):
        loaded.diagnostics.append(
            error("a SkillOpt config is a mapping of sections and keys", _span(path, root))
        )
        return None, None
    flat: dict[str, Setting] = {}
    nested: dict[str, Setting] = {}
    base: Setting | None = None
    for key_node, value_node in root.value:
        key = str(loader.construct_object(key_node))
        if key == "_base_":
            base = _base(path, key_node, value_node, loader, loaded)
            if base is None:
                return None, None
        elif key in SECTIONS and isinstance(value_node, yaml.MappingNode):
            for sub_key, sub_value in value_node.value:
                name = canonical(f"{key}.{loader.construct_object(sub_key)}")
                nested[name] = _setting(path, sub_key, sub_value, name, loader, secrets)
        else:
            name = canonical(key)
            flat[name] = _setting(path, key_node, value_node, name, loader, secrets)
    return flat | nested, base  # within a layer the sectioned spelling wins, as in SkillOpt


def _base(
    path: str, key: yaml.Node, value: yaml.Node, loader: yaml.SafeLoader, loaded: Loaded
) -> Setting | None:
    ref = loader.construct_object(value, deep=True)
    if isinstance(ref, str) and ref:
        return Setting(ref, _span(path, value))
    loaded.diagnostics.append(
        error(
            "_base_ must name one YAML file",
            _span(path, value),
            "SkillOpt reads a single path here, relative to this file",
            help='e.g. _base_: "../_base_/default.yaml"',
        )
    )
    return None


def _setting(
    path: str,
    key: yaml.Node,
    value: yaml.Node,
    name: str,
    loader: yaml.SafeLoader,
    secrets: list[tuple[int, int]],
) -> Setting:
    constructed = loader.construct_object(value, deep=True)
    if is_secret(name) and constructed not in (None, ""):
        secrets.append((value.start_mark.index, value.end_mark.index))
    return Setting(constructed, _span(path, key))
