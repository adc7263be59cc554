"""Static checks of a merged recipe: block kinds, keys, types, units, ranges, references.

Checks that need the data (split sizes) or the cost model (budgets) run later, in `lower`
and `budget`; every check reports through one list of diagnostics and keeps going.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from skopt.compiler.schema import (
    JOBS,
    REQUIRED,
    SWEEP_OPTIONS,
    SWEEPABLE,
    TOP_LEVEL,
    TRAIN,
    BlockSpec,
    Key,
    default_of,
)
from skopt.compiler.scope import two_jobs
from skopt.compiler.types import INVALID, Checked, Func, ListOf
from skopt.grammar import ast
from skopt.grammar.source import Diagnostic, Span, did_you_mean, error, warning

Reporter = Callable[[Diagnostic], None]


@dataclass
class Resolved:
    """One checked block: values with defaults filled in, and where each written value sits."""

    spec: BlockSpec
    block: ast.Block
    values: dict[str, Checked] = field(default_factory=dict)
    spans: dict[str, Span] = field(default_factory=dict)
    children: dict[str, Resolved] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.block.name.name if self.block.name else self.block.kind.name

    def span_of(self, key: str) -> Span:
        return self.spans.get(key, self.block.kind.span)

    def written(self, key: str) -> bool:
        return key in self.spans

    def get(self, key: str) -> Checked:
        return self.values.get(key)

    # typed reads of values that checking has already validated

    def integer(self, key: str) -> int:
        value = self.values[key]
        assert isinstance(value, int), (key, value)
        return value

    def number(self, key: str) -> float:
        value = self.values[key]
        assert isinstance(value, int | float), (key, value)
        return float(value)

    def flag(self, key: str) -> bool:
        return self.values[key] is True

    def word(self, key: str) -> str:
        value = self.values[key]
        assert isinstance(value, Func), (key, value)
        return value.name

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        return value if isinstance(value, str) else None

    def optional(self, key: str) -> float | None:
        value = self.values.get(key)
        return None if value is None or isinstance(value, bool) else self.number(key)

    def with_values(self, overrides: Mapping[str, Checked]) -> Resolved:
        return Resolved(
            self.spec, self.block, {**self.values, **overrides}, self.spans, self.children
        )


@dataclass
class CheckedRecipe:
    models: dict[str, Resolved] = field(default_factory=dict)
    envs: dict[str, Resolved] = field(default_factory=dict)
    job: Resolved | None = None
    budget: Resolved | None = None
    sweep: dict[str, tuple[list[Checked], Span]] = field(default_factory=dict)
    sweep_options: dict[str, Checked] = field(default_factory=dict)  # executor, stop
    has_sweep: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)


def check(blocks: list[ast.Block]) -> CheckedRecipe:
    out = CheckedRecipe()
    report = out.diagnostics.append
    for block in blocks:
        kind = block.kind.name
        spec = TOP_LEVEL.get(kind)
        if spec is None:
            help = did_you_mean(kind, TOP_LEVEL) or f"block kinds are: {', '.join(TOP_LEVEL)}"
            report(error(f"unknown block kind '{kind}'", block.kind.span, "not a block kind", help))
            continue
        if not _check_name(block, spec, report):
            continue
        if kind == "sweep":
            out.sweep, out.sweep_options = _check_sweep(block, report)
            out.has_sweep = True
            continue
        resolved = check_block(block, spec, report)
        if kind == "model":
            out.models[resolved.name] = resolved
        elif kind == "env":
            out.envs[resolved.name] = resolved
        elif kind in JOBS:
            if out.job is not None:
                report(two_jobs(block, out.job.block))
                continue
            out.job = resolved
        else:
            out.budget = resolved
    _check_models(out, report)
    _check_envs(out, report)
    if out.job is not None:
        _check_job(out, out.job, report)
    return out


def _check_name(block: ast.Block, spec: BlockSpec, report: Reporter) -> bool:
    if spec.named and block.name is None:
        report(
            error(
                f"a {spec.kind} block needs a name", block.kind.span, f"write '{spec.kind} NAME {{'"
            )
        )
        return False
    if not spec.named and block.name is not None:
        report(error(f"a {spec.kind} block takes no name", block.name.span, "remove this name"))
        return False
    return True


def check_block(block: ast.Block, spec: BlockSpec, report: Reporter) -> Resolved:
    resolved = Resolved(spec, block)
    for member in block.body:
        if isinstance(member, ast.Entry):
            _check_entry(member, spec, resolved, report)
        else:
            _check_child(member, spec, resolved, report)
    for kind, child in spec.children.items():
        if child.implied and kind not in resolved.children:
            empty = ast.Block(ast.Name(kind, block.kind.span), None, (), block.span)
            resolved.children[kind] = check_block(empty, child, report)
    for key, keyspec in spec.keys.items():
        if key in resolved.values:
            continue
        if keyspec.default is REQUIRED:
            where = block.name or block.kind
            report(
                error(
                    f"{block.label} needs '{key}'",
                    where.span,
                    f"'{key}' is not set",
                    _example(key, keyspec),
                )
            )
            resolved.values[key] = INVALID
        else:
            resolved.values[key] = default_of(keyspec)
    return resolved


def _example(key: str, keyspec: Key) -> str:
    return f"add: {key} = <{keyspec.type.describe()}>"


def _check_entry(entry: ast.Entry, spec: BlockSpec, resolved: Resolved, report: Reporter) -> None:
    key = entry.key.name
    keyspec = spec.keys.get(key)
    if keyspec is None:
        if key in spec.children:
            report(error(f"'{key}' is a block", entry.key.span, f"write {key} {{ ... }}"))
        else:
            _unknown_key(entry.key, spec, report)
        return
    resolved.values[key] = keyspec.type.check(entry.value, report)
    resolved.spans[key] = entry.value.span


def _check_child(block: ast.Block, spec: BlockSpec, resolved: Resolved, report: Reporter) -> None:
    kind = block.kind.name
    child = spec.children.get(kind)
    if child is None:
        if kind in spec.keys:
            report(
                error(f"'{kind}' is a setting, not a block", block.kind.span, f"write {kind} = ...")
            )
        else:
            _unknown_key(block.kind, spec, report, noun="block")
        return
    if block.name is not None:
        report(error(f"a {kind} block takes no name", block.name.span, "remove this name"))
        return
    resolved.children[kind] = check_block(block, child, report)
    if kind in spec.either:
        resolved.values[kind] = True
        resolved.spans[kind] = block.kind.span


def _unknown_key(name: ast.Name, spec: BlockSpec, report: Reporter, noun: str = "key") -> None:
    choices = list(dict.fromkeys([*spec.keys, *spec.children]))
    help = did_you_mean(name.name, choices) or f"{spec.kind} takes: {', '.join(choices)}"
    report(
        error(
            f"unknown {noun} '{name.name}' in {spec.kind}",
            name.span,
            f"not a {spec.kind} {noun}",
            help,
        )
    )


def _check_sweep(
    block: ast.Block, report: Reporter
) -> tuple[dict[str, tuple[list[Checked], Span]], dict[str, Checked]]:
    """The sweep's axes (train keys with lists of values) and its options."""
    axes: dict[str, tuple[list[Checked], Span]] = {}
    options: dict[str, Checked] = {}
    for member in block.body:
        if isinstance(member, ast.Entry) and member.key.name in SWEEP_OPTIONS:
            checked = SWEEP_OPTIONS[member.key.name].type.check(member.value, report)
            if checked is not INVALID:
                options[member.key.name] = checked
            continue
        if isinstance(member, ast.Block):
            report(
                error(
                    "a sweep takes lists of train settings, not blocks",
                    member.kind.span,
                    "not allowed here",
                )
            )
            continue
        key = member.key.name
        if key not in SWEEPABLE:
            fixed = key in TRAIN.keys
            known = (*SWEEPABLE, *SWEEP_OPTIONS)
            help = (
                "a sweep varies training settings; target, optimizer, env and out stay fixed"
                if fixed
                else did_you_mean(key, known) or f"sweep keys: {', '.join(known)}"
            )
            report(
                error(
                    f"'{key}' cannot be swept", member.key.span, "not a sweepable train key", help
                )
            )
            continue
        values = ListOf(TRAIN.keys[key].type).check(member.value, report)
        if isinstance(values, list):
            axes[key] = (values, member.value.span)
    return axes, options


# -- whole-recipe checks ----------------------------------------------------------------------

_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_PROVIDER_KEYS = {
    "from": ("replay",),
    "gguf": ("local",),
    "base_url": ("openai", "anthropic"),
    "latency": ("sim",),
}


def provider_of(model: Resolved) -> str:
    value = model.get("provider")
    return value.name if isinstance(value, Func) else ""


def _check_models(out: CheckedRecipe, report: Reporter) -> None:
    for model in out.models.values():
        provider = provider_of(model)
        if not provider:
            continue
        for key, providers in _PROVIDER_KEYS.items():
            if model.written(key) and provider not in providers:
                report(
                    error(
                        f"'{key}' does not apply to provider {provider}",
                        model.span_of(key),
                        f"only for {' and '.join(providers)}",
                    )
                )
        needs_name = provider in ("openai", "anthropic") or (
            provider == "local" and not model.written("gguf")
        )
        if needs_name and not model.written("name"):
            report(
                error(
                    f"model '{model.name}' needs 'name'",
                    model.block.name.span if model.block.name else model.block.span,
                    f"which {provider} model to call",
                    'e.g. name = "gpt-4o-mini"' if provider == "openai" else "",
                )
            )
        if provider == "replay" and not model.written("from"):
            report(
                error(
                    f"model '{model.name}' needs 'from'",
                    model.block.kind.span,
                    "the run folder to replay",
                    'e.g. from = "runs/quickstart/20261130-101500"',
                )
            )


def api_key_env(model: Resolved) -> str | None:
    written = model.get("api_key_env")
    if isinstance(written, str):
        return written
    return _KEY_ENV.get(provider_of(model))


def _check_envs(out: CheckedRecipe, report: Reporter) -> None:
    for env in out.envs.values():
        kind = env.get("kind")
        synthetic = isinstance(kind, Func) and kind.name == "synthetic"
        has_files = "files" in env.children
        if synthetic and (env.written("data") or has_files):
            report(
                error(
                    "a synthetic env makes its own items",
                    env.span_of("data")
                    if env.written("data")
                    else env.children["files"].block.kind.span,
                    "remove this",
                )
            )
        elif not synthetic and kind is not INVALID and not env.written("data") and not has_files:
            report(
                error(
                    f"env '{env.name}' needs 'data' or 'files'",
                    env.block.name.span if env.block.name else env.block.span,
                    "where the items are",
                    'e.g. data = "data/items.jsonl"',
                )
            )
        if env.written("data") and has_files:
            report(
                error(
                    "give either 'data' or 'files', not both",
                    env.children["files"].block.kind.span,
                    "'data' is already set",
                )
            )
        _check_split(env, synthetic, report)


def _check_split(env: Resolved, synthetic: bool, report: Reporter) -> None:
    split = env.children.get("split")
    if split is None:
        return
    if synthetic and split.written("stratify"):
        report(
            error(
                "a synthetic env's items have no fields to stratify by",
                split.span_of("stratify"),
                "remove this",
            )
        )
    parts = [split.get(s) for s in ("train", "valid", "test")]
    if any(not isinstance(p, float | int) for p in parts):
        return
    total = sum(p for p in parts if isinstance(p, float | int))
    if abs(total - 1.0) > 1e-9:
        report(
            error(
                f"split parts add up to {total * 100:g}%, not 100%",
                split.block.kind.span,
                "train + valid + test must be 100%",
            )
        )


def _check_job(out: CheckedRecipe, job: Resolved, report: Reporter) -> None:
    for key in ("target", "optimizer"):
        _check_ref(job, key, out.models, "model", report)
    if job.spec.kind == "train":
        _check_train(out, job, report)
    else:
        _check_sleep(out, job, report)


def _check_ref(
    job: Resolved, key: str, declared: dict[str, Resolved], noun: str, report: Reporter
) -> None:
    name = job.get(key)
    if isinstance(name, str) and name not in declared:
        help = did_you_mean(name, declared) or (
            f"declared {noun}s: {', '.join(declared)}"
            if declared
            else f"declare one: {noun} {name} {{ ... }}"
        )
        report(
            error(f"unknown {noun} '{name}'", job.span_of(key), "not declared in this recipe", help)
        )
        job.values[key] = INVALID


def _check_train(out: CheckedRecipe, job: Resolved, report: Reporter) -> None:
    if job.written("env"):
        _check_ref(job, "env", out.envs, "env", report)
    elif len(out.envs) == 1:
        job.values["env"] = next(iter(out.envs))
    else:
        found = f"{len(out.envs)} are declared" if out.envs else "none is declared"
        report(error("train needs 'env'", job.block.kind.span, f"which env to train on: {found}"))
        job.values["env"] = INVALID
    for child in ("gate", "slow_update"):
        _check_not_test(job.children.get(child), report)


def _check_sleep(out: CheckedRecipe, job: Resolved, report: Reporter) -> None:
    judge = job.get("judge")
    model = judge.args.get("model") if isinstance(judge, Func) else None
    if isinstance(judge, Func) and isinstance(model, str) and model not in out.models:
        where = _argument(job, "judge", "model") or job.span_of("judge")
        help = did_you_mean(model, out.models) or (
            f"declared models: {', '.join(out.models)}" if out.models else ""
        )
        report(error(f"unknown model '{model}'", where, "not declared in this recipe", help))
        job.values["judge"] = INVALID
    for key in ("sources", "include"):
        _check_listed_once(job, key, report)


def _written_value(job: Resolved, key: str) -> ast.Value | None:
    """The value of `key` as written in the job block (the last entry wins, as in checking)."""
    found = None
    for member in job.block.body:
        if isinstance(member, ast.Entry) and member.key.name == key:
            found = member.value
    return found


def _argument(job: Resolved, key: str, name: str) -> Span | None:
    """Where a call's argument (given by name or in first place) is written."""
    value = _written_value(job, key)
    if not isinstance(value, ast.Call):
        return None
    for index, arg in enumerate(value.args):
        if (arg.name is not None and arg.name.name == name) or (arg.name is None and index == 0):
            return arg.value.span
    return None


def _check_listed_once(job: Resolved, key: str, report: Reporter) -> None:
    """A list of sources or session kinds that names one thing twice is a slip: say where."""
    values, written = job.get(key), _written_value(job, key)
    if not isinstance(values, list) or not isinstance(written, ast.ListValue):
        return
    seen: list[Func] = []  # Func holds a dict: compared, not hashed
    for value, item in zip(values, written.items, strict=False):
        if not isinstance(value, Func):
            continue
        if value in seen:
            same = " with the same root" if any(v is not None for v in value.args.values()) else ""
            report(
                error(
                    f"'{value.name}' is listed twice in '{key}'{same}",
                    item.span,
                    "already listed",
                    help="remove one",
                )
            )
            job.values[key] = INVALID
        seen.append(value)


def _check_not_test(block: Resolved | None, report: Reporter) -> None:
    if block is None:
        return
    split = block.get("split")
    if isinstance(split, Func) and split.name == "test":
        report(
            error(
                f"the {block.spec.kind} may not use the test split",
                block.span_of("split"),
                "the test split is only for the final score",
                help="use split = valid (or train)",
            )
        )


def api_key_warnings(out: CheckedRecipe, used: list[str]) -> list[Diagnostic]:
    """An API key variable that is not set: a warning now, an error at `run`."""
    found: list[Diagnostic] = []
    for name in dict.fromkeys(used):
        model = out.models.get(name)
        variable = api_key_env(model) if model else None
        if model and variable and not os.environ.get(variable):
            where = (
                model.span_of("api_key_env")
                if model.written("api_key_env")
                else model.span_of("provider")
            )
            found.append(
                warning(
                    f"{variable} is not set",
                    where,
                    f"model '{name}' reads its API key from it",
                    f"export {variable}=... before 'skopt run'",
                )
            )
    return found
