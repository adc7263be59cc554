"""The starter that `skopt init` writes: a recipe, a skill and a small data file.

As written, the recipe trains on a synthetic task whose hidden house rules the simulator can
learn (SPEC §5.6), with both models on the simulator: `skopt check`, `plan`, `run` and `report`
work at once with no API key, and the first run learns something. Its comments say how to
switch to a real model and to the real task it ships: unit conversions answered in a house
format (data/items.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

RECIPE = "skill.skopt"
DATA = "data/items.jsonl"
SKILL = "skills/skill.md"

RECIPE_TEXT = """\
skopt 1
# A starter recipe. As written it runs at once, with no model and no API key: both models are
# the simulator (provider = sim), and the env is a synthetic task whose hidden house rules the
# simulator can learn, so the first run already trains a better skill.
#
#   skopt plan skill.skopt && skopt run skill.skopt --out runs/first && skopt report runs/first
#
# To train for real (needs OPENAI_API_KEY): in both model blocks, use the commented lines
# instead of `provider = sim`, and in train, set `env = units`: unit conversions answered in
# a house format (data/items.jsonl). Then `skopt plan skill.skopt` shows the cost first.

model target {
  provider = sim
  # provider = openai
  # name = "gpt-4o-mini"
  # max_tokens = 512
}

model optimizer {
  provider = sim
  # provider = openai
  # name = "gpt-4o-mini"
}

env rules {
  kind = synthetic(rules = 6, items = 90, noise = 5%, seed = 1)
  split { train = 60%, valid = 20%, test = 20%, seed = 42 }
}

env units {
  kind   = qa
  data   = "data/items.jsonl"
  input  = "question"
  answer = "answer"
  metric = exact
  split { train = 50%, valid = 25%, test = 25%, seed = 42 }
}

train {
  target     = target
  optimizer  = optimizer
  env        = rules  # units: the real task, with a real model
  skill      = "skills/skill.md"
  epochs     = 2
  batch_size = 18
  minibatch  = 6
  lr         = linear(max = 4, min = 2)
  gate { split = valid, metric = hard }
}

budget { calls = 2k, usd = $2 }
"""

SKILL_TEXT = """\
# House answers

Answer each question the way this house does.
"""

# The house format: the number (at most two decimals, no thousands separators), a space, and
# the unit's symbol.
ITEMS = (
    ("Convert 3 km to metres.", "3000 m"),
    ("Convert 2.5 kg to grams.", "2500 g"),
    ("Convert 90 minutes to hours.", "1.5 h"),
    ("Convert 1500 m to kilometres.", "1.5 km"),
    ("Convert 4 hours to minutes.", "240 min"),
    ("Convert 750 g to kilograms.", "0.75 kg"),
    ("Convert 2 litres to millilitres.", "2000 mL"),
    ("Convert 250 mL to litres.", "0.25 L"),
    ("Convert 12 inches to centimetres.", "30.48 cm"),
    ("Convert 1 mile to kilometres.", "1.61 km"),
    ("Convert 100 °C to Fahrenheit.", "212 °F"),
    ("Convert 32 °F to Celsius.", "0 °C"),
    ("Convert 3 days to hours.", "72 h"),
    ("Convert 7200 seconds to hours.", "2 h"),
    ("Convert 5 tonnes to kilograms.", "5000 kg"),
    ("Convert 45 cm to metres.", "0.45 m"),
    ("Convert 2 feet to centimetres.", "60.96 cm"),
    ("Convert 10 pounds to kilograms.", "4.54 kg"),
    ("Convert 1 gallon (US) to litres.", "3.79 L"),
    ("Convert 3.2 GB to megabytes.", "3200 MB"),
    ("Convert 4500 kB to megabytes.", "4.5 MB"),
    ("Convert 60 km/h to metres per second.", "16.67 m/s"),
    ("Convert 10 m/s to kilometres per hour.", "36 km/h"),
    ("Convert 2 square metres to square centimetres.", "20000 cm²"),
    ("Convert 1 hectare to square metres.", "10000 m²"),
    ("Convert 0.5 km to centimetres.", "50000 cm"),
    ("Convert 8 ounces to grams.", "226.8 g"),
    ("Convert 20 °C to kelvin.", "293.15 K"),
    ("Convert 2 weeks to days.", "14 d"),
    ("Convert 1.2 kW to watts.", "1200 W"),
    ("Convert 3500 W to kilowatts.", "3.5 kW"),
    ("Convert 6 feet to metres.", "1.83 m"),
    ("Convert 26.2 miles to kilometres.", "42.16 km"),
    ("Convert 500 mg to grams.", "0.5 g"),
    ("Convert 1.5 litres to centilitres.", "150 cL"),
    ("Convert 180 seconds to minutes.", "3 min"),
    ("Convert 2 years (365 days each) to days.", "730 d"),
    ("Convert 25 mm to centimetres.", "2.5 cm"),
    ("Convert 1 nautical mile to metres.", "1852 m"),
    ("Convert 0.25 hours to seconds.", "900 s"),
)


def items_text() -> str:
    return "".join(
        json.dumps({"id": f"unit-{n:02d}", "question": q, "answer": a}, ensure_ascii=False) + "\n"
        for n, (q, a) in enumerate(ITEMS, start=1)
    )


def starter_files() -> dict[str, str]:
    """Relative path → text of every file `skopt init` writes."""
    return {RECIPE: RECIPE_TEXT, DATA: items_text(), SKILL: SKILL_TEXT}


def existing(folder: Path) -> list[Path]:
    """The starter's files that already exist in `folder` (init refuses to overwrite them)."""
    return [folder / name for name in starter_files() if (folder / name).exists()]


def write_starter(folder: Path) -> list[Path]:
    """Write the starter into `folder` (created if missing); the paths written, in order."""
    written = []
    for name, text in starter_files().items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
