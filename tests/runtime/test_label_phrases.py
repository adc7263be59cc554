"""The words that set a train item's label apart (runtime/label_phrases.py), and the rules the
demonstrations candidate states with them (runtime/tries.py)."""

from __future__ import annotations

from skopt.compiler.dataset import Item
from skopt.runtime.label_phrases import deciding_phrase
from skopt.runtime.scoring import Trajectory
from skopt.runtime.tries import phrase_rules

TRAIN = [
    Item(
        "e1", "Hi, I was charged twice. We are on the Enterprise plan. Thanks, Ben", ("priority",)
    ),
    Item("e2", "(Enterprise plan customer) The app crashes. Regards, Ben", ("Priority",)),
    Item("e3", "Hello, my parcel is late. Ben", ("logistics",)),
    Item("b1", "I was charged twice for order #12345.", ("billing",)),
    Item("b2", "I was charged twice for order #67890.", ("billing",)),
    Item("d1", "The lamp arrived cracked. Refund please.", ("logistics",)),
]


def test_the_phrase_is_the_one_most_items_of_the_label_share_and_no_other_label_holds() -> None:
    # "charged twice" is in billing items too; "Ben" is a name; "enterprise" alone ties with
    # "Enterprise plan", which is longer; the written form is the item's own
    assert deciding_phrase(TRAIN[0], TRAIN) == "Enterprise plan"
    assert deciding_phrase(TRAIN[1], TRAIN) == "Enterprise plan"


def test_no_phrase_without_a_second_item_of_the_label() -> None:
    assert deciding_phrase(TRAIN[5], TRAIN) is None  # "cracked" is in one train item only
    # its words are in a logistics item, but "Ben" is a name and the rest is in other labels
    assert deciding_phrase(TRAIN[2], TRAIN) is None
    # digits make no phrase: the order numbers are each in one item, the rest is shared
    assert deciding_phrase(TRAIN[3], TRAIN) == "twice for order"  # "for" ends none
    assert deciding_phrase(Item("x", "anything", ()), TRAIN) is None  # no answer


def failed(item: Item) -> Trajectory:
    return Trajectory(item, 0, "tech", "tech", 0.0, 0.0)


def test_rules_name_the_inputs_and_give_each_phrase_once() -> None:
    failures = [failed(TRAIN[0]), failed(TRAIN[5]), failed(TRAIN[1])]
    rules = phrase_rules(failures, 3, TRAIN, "ticket")
    assert [e.content for e in rules] == [
        'If the ticket mentions "Enterprise plan", answer priority, whatever else it says.'
    ]
    assert rules[0].op == "add" and rules[0].anchor is None
    assert phrase_rules(failures, 0, TRAIN, "ticket") == []
    assert phrase_rules(failures, 3, TRAIN, "ticket", rules[0].content) == []  # stated already
