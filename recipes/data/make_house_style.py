"""Writes house_style.jsonl: requests to write a value in "our house style", where the house
style is a set of conventions no model can guess — dates, amounts of money, configuration keys,
file names and phone numbers each have one fixed form. A skill that states the conventions lets
even a small model answer; without it the model falls back on forms it has seen elsewhere.

Deterministic: `python recipes/data/make_house_style.py` rewrites the file byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

PER_KIND = 36
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WORDS = [
    "max",
    "retry",
    "count",
    "timeout",
    "request",
    "cache",
    "size",
    "log",
    "level",
    "user",
    "name",
    "default",
    "region",
    "page",
    "limit",
    "batch",
    "window",
    "upload",
    "path",
    "session",
    "token",
    "refresh",
    "interval",
    "queue",
    "depth",
    "worker",
    "pool",
    "backup",
    "schedule",
    "error",
    "rate",
    "alert",
    "threshold",
    "api",
    "base",
    "url",
    "feature",
    "flag",
]
TITLES = [
    "quarterly",
    "sales",
    "report",
    "team",
    "meeting",
    "notes",
    "product",
    "roadmap",
    "draft",
    "budget",
    "review",
    "onboarding",
    "guide",
    "release",
    "checklist",
    "incident",
    "summary",
    "design",
    "proposal",
    "hiring",
    "plan",
    "customer",
    "survey",
    "results",
    "security",
    "audit",
    "findings",
]


def date(rng: random.Random) -> tuple[str, str]:
    year, month, day = rng.randint(1995, 2030), rng.randint(1, 12), rng.randint(1, 28)
    name = MONTHS[month - 1]
    written = f"{name} {day}, {year}" if rng.random() < 0.5 else f"{day} {name} {year}"
    return f"Write this date in our house style: {written}", f"{year}-{month:02d}-{day:02d}"


def money(rng: random.Random) -> tuple[str, str]:
    amount = f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}"
    written = rng.choice((f"${amount}", f"{amount} dollars", f"{amount} USD"))
    return f"Write this amount in our house style: {written}", f"USD {amount}"


def config_key(rng: random.Random) -> tuple[str, str]:
    words = rng.sample(WORDS, rng.randint(2, 3))
    return (
        f"Write the configuration key for this setting in our house style: {' '.join(words)}",
        "_".join(words).upper(),
    )


def file_name(rng: random.Random) -> tuple[str, str]:
    words = rng.sample(TITLES, rng.randint(2, 4))
    title = " ".join(word.capitalize() for word in words)
    return (
        f"Write the file name for this document in our house style: {title}",
        "-".join(words) + ".md",
    )


def phone(rng: random.Random) -> tuple[str, str]:
    area, exchange, line = rng.randint(201, 989), rng.randint(200, 999), rng.randint(0, 9999)
    written = rng.choice(
        (
            f"({area}) {exchange}-{line:04d}",
            f"{area}.{exchange}.{line:04d}",
            f"{area}{exchange}{line:04d}",
        )
    )
    return (
        f"Write this phone number in our house style: {written}",
        f"+1 {area} {exchange} {line:04d}",
    )


KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "date": date,
    "money": money,
    "config_key": config_key,
    "file_name": file_name,
    "phone": phone,
}


def items(seed: int = 7) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out, seen = [], set()
    for kind, make in KINDS.items():
        count = 0
        while count < PER_KIND:
            question, answer = make(rng)
            if question in seen:
                continue
            seen.add(question)
            count += 1
            out.append(
                {"id": f"{kind}-{count:02d}", "kind": kind, "input": question, "answer": answer}
            )
    return out


def main() -> None:
    path = Path(__file__).with_name("house_style.jsonl")
    lines = (json.dumps(item, ensure_ascii=False) for item in items())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
