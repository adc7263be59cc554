"""The words that set a train item's label apart (runtime/label_phrases.py), and the rules the
demonstrations candidate states with them (runtime/tries.py)."""

from __future__ import annotations

from skopt.compiler.dataset import Item
from skopt.runtime.label_phrases import TrainPhrases
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
PHRASES = TrainPhrases(TRAIN)


def test_the_phrase_is_the_one_most_items_of_the_label_share_and_no_other_label_holds() -> None:
    # "charged twice" is in billing items too; "Ben" is a name; "enterprise" alone ties with
    # "Enterprise plan", which is longer; the written form is the item's own
    assert PHRASES.deciding(TRAIN[0]) == "Enterprise plan"
    assert PHRASES.deciding(TRAIN[1]) == "Enterprise plan"


def test_no_phrase_without_a_second_item_of_the_label() -> None:
    assert PHRASES.deciding(TRAIN[5]) is None  # "cracked" is in one train item only
    # its words are in a logistics item, but "Ben" is a name and the rest is in other labels
    assert PHRASES.deciding(TRAIN[2]) is None
    # digits make no phrase: the order numbers are each in one item, the rest is shared
    assert PHRASES.deciding(TRAIN[3]) == "twice for order"  # "for" ends none
    assert PHRASES.deciding(Item("x", "anything", ())) is None  # no answer


def failed(item: Item) -> Trajectory:
    return Trajectory(item, 0, "tech", "tech", 0.0, 0.0)


def test_rules_come_from_the_whole_train_split_the_failed_items_first_each_phrase_once() -> None:
    billing = 'If the ticket mentions "twice for order", answer billing, whatever else it says.'
    priority = 'If the ticket mentions "Enterprise plan", answer priority, whatever else it says.'
    rules = phrase_rules([failed(TRAIN[3]), failed(TRAIN[4])], PHRASES, "ticket")
    assert [e.content for e in rules] == [billing, priority]
    assert all(e.op == "add" and e.anchor is None for e in rules)
    assert [e.content for e in phrase_rules([], PHRASES, "ticket")] == [priority, billing]
    stated = phrase_rules([], PHRASES, "ticket", f"Route.\n\n{priority}\n")
    assert [e.content for e in stated] == [billing]  # none the skill states already
    assert phrase_rules([], TrainPhrases([]), "ticket") == []
