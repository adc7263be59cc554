"""`skopt fmt`: canonical layout, comments kept, idempotent, meaning unchanged."""

from __future__ import annotations

import pytest

from skopt.grammar.format import format_recipe
from skopt.grammar.parse import parse
from tests.conftest import RECIPES


def fmt(text: str) -> str:
    recipe = parse(text, "t.skopt").recipe
    assert recipe is not None
    return format_recipe(recipe, text)


MESSY = """\
skopt 1
# library of models
import "base.skopt"
model target {   # the model under training
provider=openai, name="gpt-4o-mini"
  temperature = 0


  concurrency=16 # in flight
  price {input=$3,output=$15,per=1M}
  # closing thought
}
train { target = target, optimizer = target
  lr = cosine(max=4,min=2)
  tags = [a, "b",   # first two
          3]
}
# the end
"""

CANONICAL = """\
skopt 1
# library of models
import "base.skopt"

model target {  # the model under training
  provider    = openai
  name        = "gpt-4o-mini"
  temperature = 0

  concurrency = 16  # in flight
  price { input = $3, output = $15, per = 1M }
  # closing thought
}

train {
  target    = target
  optimizer = target
  lr        = cosine(max = 4, min = 2)
  # first two
  tags      = [a, "b", 3]
}
# the end
"""


def test_canonical_layout() -> None:
    assert fmt(MESSY) == CANONICAL


def test_idempotent_and_meaning_kept() -> None:
    once = fmt(MESSY)
    assert fmt(once) == once
    assert parse(once, "t.skopt").recipe == parse(MESSY, "t.skopt").recipe


def test_long_lists_go_one_item_per_line() -> None:
    items = ", ".join(f'"item-number-{i}"' for i in range(12))
    out = fmt(f"sweep {{\n  lr = [{items}]\n}}\n")
    assert out.splitlines()[1] == "  lr = ["
    assert out.splitlines()[2] == '    "item-number-0",'
    assert fmt(out) == out


def test_strings_are_normalised_but_triple_quotes_kept() -> None:
    text = 'env e {\n  a = "tab\\there"\n  b = """\n    raw \\n text\n  """\n}\n'
    out = fmt(text)
    assert 'a = "tab\\there"' in out and '"""\n    raw \\n text\n  """' in out


@pytest.mark.parametrize("path", sorted(RECIPES.glob("*.skopt")), ids=lambda p: p.stem)
def test_example_recipes_are_formatted(path: object) -> None:
    text = RECIPES.joinpath(str(path)).read_text()
    assert fmt(text) == text


def test_trailing_comment_stays_with_its_own_block() -> None:
    text = "model a { x = 1 }, model b { # about b\n  y = 2\n}\n"
    assert fmt(text) == "model a { x = 1 }\n\nmodel b {  # about b\n  y = 2\n}\n"
