"""Reading an env's items and splitting them into train / valid / test.

Items come from one file (.jsonl, .json array or .csv) split by percentages, or from one file
per split. The split is deterministic from the seed and the item ids alone: each id is ranked
by a hash of (seed, id), so adding an item never moves the others between splits. An item's id
is its `id` field, or else a hash of its content (stable under reordering the file). With
`split { stratify = "field" }` every split holds each of the field's values in its share.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SPLITS = ("train", "valid", "test")


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    input: str
    answers: tuple[str, ...]
    context: str | None = None
    meta: Mapping[str, object] = field(default_factory=dict)


class DataError(Exception):
    """A data file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class Fields:
    input: str = "input"
    answer: str = "answer"
    context: str | None = None
    id: str | None = None
    stratify: str | None = None


def read_items(path: Path, fields: Fields, need_answer: bool = True) -> list[Item]:
    records = _read_records(path)
    if not records:
        raise DataError(f"{path.name} holds no items")
    items = [_item(r, n, fields, path, need_answer) for n, r in records]
    return _with_unique_ids(items, path, explicit=fields.id is not None)


def _read_records(path: Path) -> list[tuple[int, Mapping[str, object]]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read {path.name}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is allowed
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{path.name}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x})"
        ) from None
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl(text, path)
    if suffix == ".json":
        return _json_array(text, path)
    if suffix == ".csv":
        try:
            rows = csv.DictReader(io.StringIO(text, newline=""))
            return [(n + 2, row) for n, row in enumerate(rows)]
        except csv.Error as exc:
            raise DataError(f"{path.name}: not valid CSV ({exc})") from None
    raise DataError(f"{path.name}: data files are .jsonl, .json or .csv")


def _jsonl(text: str, path: Path) -> list[tuple[int, Mapping[str, object]]]:
    out: list[tuple[int, Mapping[str, object]]] = []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is data
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as exc:
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "too deep or too large"
            raise DataError(f"{path.name}:{number}: not valid JSON ({reason})") from None
        if not isinstance(record, dict):
            raise DataError(f"{path.name}:{number}: each line must be a JSON object")
        out.append((number, record))
    return out


def _json_array(text: str, path: Path) -> list[tuple[int, Mapping[str, object]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path.name}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError):
        raise DataError(f"{path.name}: not valid JSON (too deep or too large)") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(f"{path.name}: expected a JSON array of objects")
    return [(n + 1, r) for n, r in enumerate(data)]


def _item(
    record: Mapping[str, object], number: int, fields: Fields, path: Path, need_answer: bool
) -> Item:
    where = (
        f"{path.name}:{number}" if path.suffix.lower() != ".json" else f"{path.name} item {number}"
    )
    if fields.input not in record:
        raise DataError(f"{where}: no field '{fields.input}' (set the field with input = \"...\")")
    answer = record.get(fields.answer)
    if need_answer and answer is None:
        raise DataError(
            f"{where}: no field '{fields.answer}' (set the field with answer = \"...\")"
        )
    answers = (
        tuple(str(a) for a in answer)
        if isinstance(answer, list)
        else (() if answer is None else (str(answer),))
    )
    context = record.get(fields.context) if fields.context else None
    ident = record.get(fields.id or "id")
    meta: dict[str, object] = {"source": where}
    if fields.stratify:
        if fields.stratify not in record:
            raise DataError(f"{where}: no field '{fields.stratify}' to stratify the split by")
        meta["stratum"] = json.dumps(record[fields.stratify], sort_keys=True)
    return Item(
        id=str(ident) if ident is not None else "",
        input=str(record[fields.input]),
        answers=answers,
        context=str(context) if context is not None else None,
        meta=meta,
    )


def _with_unique_ids(items: list[Item], path: Path, explicit: bool) -> list[Item]:
    if explicit or all(i.id for i in items):
        seen: dict[str, object] = {}
        for item in items:
            if item.id in seen:
                raise DataError(
                    f"{item.meta['source']}: duplicate id '{item.id}' (first at {seen[item.id]})"
                )
            seen[item.id] = item.meta["source"]
        return items
    counts: dict[str, int] = {}
    out = []
    for item in items:
        digest = hashlib.sha256(
            json.dumps([item.input, item.answers, item.context]).encode()
        ).hexdigest()[:12]
        counts[digest] = counts.get(digest, 0) + 1
        ident = digest if counts[digest] == 1 else f"{digest}-{counts[digest]}"
        out.append(Item(ident, item.input, item.answers, item.context, item.meta))
    return out


def rank(seed: int, ident: str) -> str:
    return hashlib.sha256(f"{seed}\x00{ident}".encode()).hexdigest()


def split_items(
    items: Sequence[Item], parts: Mapping[str, float], seed: int, stratified: bool = False
) -> dict[str, list[Item]]:
    """Split by the rank of hash(seed, id); sizes round half up, test takes the rest.

    Stratified, an item is placed by its rank within its stratum instead (the middle of its
    share: the k-th of n at (k + 0.5) / n), so each split takes about its percentage of every
    stratum, and so does every prefix of a split that `limit` keeps."""
    ordered = (
        _by_stratum(items, seed) if stratified else sorted(items, key=lambda i: rank(seed, i.id))
    )
    n = len(ordered)
    n_train = _round_half_up(n * parts["train"])
    n_valid = min(n - n_train, _round_half_up(n * parts["valid"]))
    return {
        "train": ordered[:n_train],
        "valid": ordered[n_train : n_train + n_valid],
        "test": ordered[n_train + n_valid :],
    }


def _by_stratum(items: Sequence[Item], seed: int) -> list[Item]:
    strata: dict[object, list[Item]] = {}
    for item in sorted(items, key=lambda i: rank(seed, i.id)):
        strata.setdefault(item.meta["stratum"], []).append(item)
    placed = [
        ((k + 0.5) / len(stratum), rank(seed, item.id), item)
        for stratum in strata.values()
        for k, item in enumerate(stratum)
    ]
    return [item for *_, item in sorted(placed, key=lambda p: p[:2])]


def _round_half_up(x: float) -> int:
    return int(x + 0.5 + 1e-9)


def assignment_hash(splits: Mapping[str, Sequence[Item]]) -> str:
    """The hash of which item went where — part of the plan's hashes."""
    digest = hashlib.sha256()
    for name in SPLITS:
        for item in splits.get(name, ()):
            digest.update(f"{name}\x00{item.id}\n".encode())
    return digest.hexdigest()


def epoch_order(train: Sequence[Item], seed: int, epoch: int) -> list[Item]:
    """The order in which an epoch walks the train split (a seeded shuffle per epoch)."""
    return sorted(train, key=lambda i: rank(seed * 1000 + epoch, i.id))


def batches(n_items: int, batch_size: int) -> list[int]:
    """Sizes of the batches of one epoch: full batches, then the remainder."""
    full, rest = divmod(n_items, batch_size)
    return [batch_size] * full + ([rest] if rest else [])
