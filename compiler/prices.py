"""The shipped, dated price table (`data/prices.json`) and price lookup for a model."""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
import re
from dataclasses import dataclass

from skopt.compiler.plan import Price

FREE_PROVIDERS = ("sim", "local", "replay")
_SNAPSHOT = re.compile(r"(-\d[\w.-]*|-latest)?")


@dataclass(frozen=True)
class Table:
    as_of: str
    per: int
    models: dict[str, tuple[float, float]]
    digest: str


@functools.cache
def table() -> Table:
    raw = importlib.resources.files("skopt.compiler").joinpath("data/prices.json").read_bytes()
    data = json.loads(raw)
    models = {name: (float(i), float(o)) for name, (i, o) in data["models"].items()}
    return Table(data["as_of"], int(data["per"]), models, hashlib.sha256(raw).hexdigest())


def lookup(provider: str, model: str | None) -> Price | None:
    """The price of a model: free for local/simulated/replayed calls, else the table's entry."""
    if provider in FREE_PROVIDERS:
        return Price(input_usd=0.0, output_usd=0.0, per=1_000_000, source="free")
    if not model:
        return None
    prices = table()
    name = model.split("/")[-1].lower()
    matches = [
        k for k in prices.models if name.startswith(k) and _SNAPSHOT.fullmatch(name[len(k) :])
    ]
    if not matches:
        return None
    key = max(matches, key=len)
    usd_in, usd_out = prices.models[key]
    return Price(
        input_usd=usd_in, output_usd=usd_out, per=prices.per, source=f"table {prices.as_of}"
    )
