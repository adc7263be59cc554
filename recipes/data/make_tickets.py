"""Writes tickets.jsonl: customer support tickets to route to one of five queues under house
rules a model cannot guess. The obvious topics go where anyone would send them (charges to
`billing`, crashes to `tech`, passwords to `accounts`, parcels to `logistics`), but four house
rules override them, in this order:

1. a chargeback, a lawyer or legal action, or cancelling the contract: `priority`;
2. a customer on the Enterprise plan, whatever the topic: `priority`;
3. a refund or replacement for an item that arrived damaged or wrong: `logistics`, not billing;
4. a change to the company name, address or VAT number on an invoice: `accounts`, not billing.

`recipes/skills/oracles/tickets.md` states these rules: the ceiling a trained skill can reach.
Deterministic: `python recipes/data/make_tickets.py` rewrites the file byte for byte.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

QUEUES = ("billing", "tech", "accounts", "logistics", "priority")
NAMES = ["Ana", "Ben", "Chen", "Dana", "Eli", "Fatima", "Goran", "Hana", "Ivo", "Jun", "Kofi"]
PRODUCTS = ["desk lamp", "office chair", "monitor arm", "keyboard", "standing desk", "headset"]
COMPANIES = ["Lumen GmbH", "Baxter & Co", "Nordlight AB", "Sato Trading", "Okafor Ltd"]
GREETINGS = ["Hi,", "Hello,", "Dear support,", "Hi team,", ""]
SIGNOFFS = ["Thanks", "Regards", "Best", "Cheers", ""]


def _order(rng: random.Random) -> str:
    return f"#{rng.randint(10000, 99999)}"


def _amount(rng: random.Random) -> str:
    return f"${rng.randint(5, 900)}.{rng.randint(0, 99):02d}"


def billing(rng: random.Random) -> str:
    return rng.choice(
        [
            f"I was charged twice for order {_order(rng)}, {_amount(rng)} each time.",
            f"Could you send me a copy of the invoice for order {_order(rng)}?",
            f"I changed my mind about order {_order(rng)}. Can I get a refund of {_amount(rng)}?",
            f"Why does my receipt for {_order(rng)} show {_amount(rng)} instead of the sale price?",
            "My card was charged before the trial ended. Please explain the charge.",
        ]
    )


def tech(rng: random.Random) -> str:
    return rng.choice(
        [
            "The app crashes every time I open the reports page.",
            f"Your API returns error 500 on every request since {rng.randint(1, 12)} am today.",
            "Syncing takes forever: the dashboard is very slow to load.",
            "The export button does nothing in the desktop app.",
            "I get a blank screen after the latest update.",
        ]
    )


def accounts(rng: random.Random) -> str:
    return rng.choice(
        [
            "I forgot my password and the reset email never arrives.",
            "My two-factor codes are rejected, so I cannot log in.",
            "Please change the email address on my account to my new one.",
            "I am locked out of my account after too many login attempts.",
            "How do I add a second user to my login?",
        ]
    )


def logistics(rng: random.Random) -> str:
    return rng.choice(
        [
            f"Where is my parcel? Order {_order(rng)} has not moved for a week.",
            f"The tracking link for order {_order(rng)} does not work.",
            f"Can you deliver order {_order(rng)} to my office address instead?",
            f"My {rng.choice(PRODUCTS)} was delivered to the wrong neighbour.",
            "When will my order ship? It says processing since Monday.",
        ]
    )


def legal(rng: random.Random) -> str:  # rule 1: priority, whatever the topic
    return rng.choice(
        [
            f"I have filed a chargeback with my bank for order {_order(rng)}.",
            f"My lawyer will contact you about the {_amount(rng)} you charged me.",
            "I want to cancel the contract: the app has been down for days.",
            f"If the refund for {_order(rng)} does not arrive, I will take legal action.",
            "We are cancelling our contract with you at the end of the month.",
        ]
    )


def enterprise(rng: random.Random) -> str:  # rule 2: priority, whatever the topic
    topic = rng.choice([billing, tech, accounts, logistics])(rng)
    where = rng.choice(["We are on the Enterprise plan.", "(Enterprise plan customer)"])
    return f"{topic} {where}" if rng.random() < 0.5 else f"{where} {topic}"


def damaged(rng: random.Random) -> str:  # rule 3: logistics, not billing
    product = rng.choice(PRODUCTS)
    return rng.choice(
        [
            f"The {product} from order {_order(rng)} arrived broken. I want a refund.",
            f"I received the wrong {product}. Please refund the {_amount(rng)}.",
            f"My {product} came damaged. Can you send a replacement?",
            f"Order {_order(rng)}: the {product} is cracked. Refund please.",
        ]
    )


def invoice_details(rng: random.Random) -> str:  # rule 4: accounts, not billing
    company = rng.choice(COMPANIES)
    return rng.choice(
        [
            f"Please re-issue the invoice for {_order(rng)} with our company name, {company}.",
            f"Our VAT number is missing from invoice {_order(rng)}. Please add it.",
            f"The address on our invoices is out of date: we moved. We are {company}.",
            f"Please put {company} instead of my own name on future invoices.",
        ]
    )


# kind -> (queue, writer, how many)
KINDS: dict[str, tuple[str, Callable[[random.Random], str], int]] = {
    "billing": ("billing", billing, 24),
    "tech": ("tech", tech, 24),
    "accounts": ("accounts", accounts, 24),
    "logistics": ("logistics", logistics, 24),
    "legal": ("priority", legal, 24),
    "enterprise": ("priority", enterprise, 24),
    "damaged": ("logistics", damaged, 18),
    "invoice_details": ("accounts", invoice_details, 18),
}


def ticket(rng: random.Random, body: str) -> str:
    greeting, signoff = rng.choice(GREETINGS), rng.choice(SIGNOFFS)
    name = rng.choice(NAMES)
    parts = [greeting, body, f"{signoff}, {name}" if signoff else name]
    return " ".join(p for p in parts if p)


def items(seed: int = 11) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out, seen = [], set()
    for kind, (queue, write, count) in KINDS.items():
        made = 0
        while made < count:
            text = ticket(rng, write(rng))
            if text in seen:
                continue
            seen.add(text)
            made += 1
            out.append({"id": f"{kind}-{made:02d}", "kind": kind, "ticket": text, "queue": queue})
    return out


def main() -> None:
    path = Path(__file__).with_name("tickets.jsonl")
    lines = (json.dumps(item, ensure_ascii=False) for item in items())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
