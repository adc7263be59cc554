"""Taking a run's result into the live skill file, change by change (`skopt review`, `adopt`).

The proposal of a run folder is every change that took the initial skill to the best one, in
the order the run made them, read from the journal: the blocks each accepted step changed
(runtime/changes.py), with the step that brought it, the rationale and support of the edits
behind it, and its gate's evidence (the gate items the step fixed and broke); a slow update's
guidance is a change of its own. Replayed in order on the initial skill, all of them make the
best skill.

Adopting writes only the accepted changes into the live file that the recipe names. It takes a
backup first, and refuses (AdoptRefused, a sentence) when the live file changed since the run
started and an accepted change no longer applies to it, when an accepted change needs one that
was not accepted, or when a change was adopted before. The live file is replaced atomically
(temporary file, then rename), so a kill leaves the old or the new file, never a mix; the
receipt (`adopted.json` in the run folder) is written last.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from skopt.compiler.saved import PlanUnreadable, read_plan
from skopt.runtime.artifacts import RunFolder, write_atomic
from skopt.runtime.changes import Block, blocks_between, replay
from skopt.runtime.claim import NotARunFolder, open_folder, read_marker
from skopt.runtime.events import (
    BaselineScored,
    CandidateBuilt,
    EditRecord,
    EpochBoundary,
    GateDecided,
    RunStarted,
    StepFinished,
)
from skopt.runtime.journal import Journal, read_journal
from skopt.runtime.sleep.stage import manifest

RECEIPT = "adopted.json"


class AdoptRefused(Exception):
    """What adopt will not do, and why (exit 2)."""


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Change(Frozen):
    """One proposed change: `old` lines → `new` ones, between unchanged `before` and `after`
    (runtime/changes.py)."""

    number: int  # 1, 2, … as `skopt adopt --edit N` names it
    step: int  # the step that brought it (for a slow update: the step it preceded)
    source: str  # "step N", or "slow update before step N"
    before: str
    old: str
    new: str
    after: str
    at_end: bool

    @property
    def block(self) -> Block:
        return Block(self.before, self.old, self.new, self.after, self.at_end)

    rationale: str
    support: int
    fixed: list[str]  # gate items the step turned from failing to passing
    broke: list[str]  # gate items it turned from passing to failing


class Proposal(Frozen):
    folder: str
    live: str | None  # the recipe's skill file; None when it starts from `skill = empty`
    initial: str  # the skill when the run (or night) started
    best: str
    changes: list[Change]
    pinned: str | None = None  # a staged night: the live file's SHA-256 it must still have


class Adoption(Frozen):
    """One adoption, as the receipt keeps it."""

    changes: list[int]
    live: str
    backup: str
    before_sha: str
    after_sha: str
    at: float


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def proposal(root: Path) -> Proposal:
    """The changes that took a run's initial skill to its best one, or a staged night's
    proposal. Raises NotARunFolder, AdoptRefused (a night with nothing to adopt)."""
    marker = read_marker(root)
    if marker is not None and marker["kind"] == "night":
        return night_proposal(root)
    folder = open_folder(root, "run")
    try:
        plan = read_plan(root / "plan.json")
    except PlanUnreadable as exc:
        raise NotARunFolder(str(exc)) from None
    journal = read_journal(folder.events)
    first = next((e for e in journal.of(RunStarted) if not e.resumed), None)
    if first is None:
        raise NotARunFolder(f"{root}: this run has not started: there is nothing to review")
    initial = first.skill
    path, best = _path_to_best(journal, initial)
    changes = _changes(journal, initial, path)
    return Proposal(
        folder=str(root),
        live=plan.jobs[0].train.skill,
        initial=initial,
        best=best,
        changes=changes,
    )


def night_proposal(root: Path) -> Proposal:
    """A staged night's proposal: the changes from the skill it started from to the proposed
    one, pinned to the live file's SHA-256 at that time."""
    staged = manifest(root)
    if staged is None:
        raise NotARunFolder(f"{root}: this night staged nothing (a dry run, or stopped early)")
    if not staged.accepted or staged.proposed is None:
        raise AdoptRefused(
            f"{root}: nothing to adopt: the gate rejected the night ({staged.reason})"
        )
    base = (root / "base.md").read_text(encoding="utf-8")
    proposed = (root / staged.proposed).read_text(encoding="utf-8")
    journal = read_journal(RunFolder(root).events)
    built = journal.last(CandidateBuilt)
    edits = built.selected if built else []
    fixed, broke = _evidence(journal.last(GateDecided))
    changes = [
        Change(
            number=n,
            step=1,
            source=f"night {staged.night}",
            before=b.before,
            old=b.old,
            new=b.new,
            after=b.after,
            at_end=b.at_end,
            rationale="; ".join(e.rationale for e in _behind(b, edits) if e.rationale),
            support=max((e.support for e in _behind(b, edits)), default=0),
            fixed=fixed,
            broke=broke,
        )
        for n, b in enumerate(blocks_between(base, proposed), start=1)
    ]
    return Proposal(
        folder=str(root),
        live=staged.live,
        initial=base,
        best=proposed,
        changes=changes,
        pinned=staged.live_sha256,
    )


def _path_to_best(journal: Journal, initial: str) -> tuple[list[StepFinished | EpochBoundary], str]:
    """The events that changed the current skill, up to the step that first reached the best
    score (the best skill is the current one then), and the best skill."""
    baseline, steps = journal.last(BaselineScored), journal.steps
    if baseline is None or not steps or steps[-1].result.best <= baseline.score:
        return [], initial
    best_at = next(e.result.step for e in steps if e.result.best == steps[-1].result.best)
    path: list[StepFinished | EpochBoundary] = []
    current = initial
    for e in journal.of_kinds(EpochBoundary, StepFinished):
        assert isinstance(e, EpochBoundary | StepFinished)
        step = e.step if isinstance(e, EpochBoundary) else e.result.step
        if step <= best_at and e.skill != current:
            path.append(e)
            current = e.skill
    return path, current


def _changes(
    journal: Journal, initial: str, path: list[StepFinished | EpochBoundary]
) -> list[Change]:
    built = journal.by_step(CandidateBuilt)
    gates = journal.by_step(GateDecided)
    changes: list[Change] = []
    current = initial
    for e in path:
        if isinstance(e, EpochBoundary):
            step, source = e.step, f"slow update before step {e.step}"
            edits: list[EditRecord] = []
            fixed: list[str] = []
            broke: list[str] = []
        else:
            step, source = e.result.step, f"step {e.result.step}"
            made = built.get(step)
            applied = [o.edit for o in made.outcomes if o.status == "applied"] if made else []
            edits = applied or (made.selected if made else [])
            fixed, broke = _evidence(gates.get(step))
        for block in blocks_between(current, e.skill):
            behind = _behind(block, edits)
            changes.append(
                Change(
                    number=len(changes) + 1,
                    step=step,
                    source=source,
                    before=block.before,
                    old=block.old,
                    new=block.new,
                    after=block.after,
                    at_end=block.at_end,
                    rationale="; ".join(r.rationale for r in behind if r.rationale)
                    or ("slow-update guidance" if isinstance(e, EpochBoundary) else ""),
                    support=max((r.support for r in behind), default=0),
                    fixed=fixed,
                    broke=broke,
                )
            )
        current = e.skill
    return changes


def headline(c: Change) -> str:
    """The change in a few words: its first added line (or what it removes), a line of text
    before a marker or heading (a new LEARNED region opens with both)."""
    added = [line for line in c.new.splitlines() if line.strip() and line not in c.old]
    added.sort(key=lambda line: line.lstrip().startswith(("<!--", "#")))
    gone = [line for line in c.old.splitlines() if line.strip() and line not in c.new]
    line = f"+ {added[0]}" if added else f"- {gone[0]}" if gone else "(whitespace)"
    return line if len(line) <= 60 else line[:59] + "…"


def _behind(block: Block, edits: list[EditRecord]) -> list[EditRecord]:
    """The edits whose text this block brings in (a rewrite's edits: all of them)."""
    found = [e for e in edits if e.content.strip() and e.content.strip() in block.new]
    return found or edits


def _evidence(gate: GateDecided | None) -> tuple[list[str], list[str]]:
    if gate is None:
        return [], []
    fixed = [k for k, s in gate.items.items() if s.before < 1 <= s.after]
    broke = [k for k, s in gate.items.items() if s.after < 1 <= s.before]
    return fixed, broke


def preview(p: Proposal, accepted: list[int], live: str) -> tuple[str, list[str]]:
    """The live text after the accepted changes, and why each one that does not apply fails."""
    text, failed = _replay(p, accepted, live)
    return text, [f"change {c.number} ({c.source}) {_why(p, c, accepted, live)}" for c in failed]


def _replay(p: Proposal, accepted: list[int], live: str) -> tuple[str, list[Change]]:
    text, failed = live, []
    for change in p.changes:
        if change.number not in accepted:
            continue
        made = replay(text, change.block)
        if made is None:
            failed.append(change)
        else:
            text = made
    return text, failed


def _why(p: Proposal, change: Change, accepted: list[int], live: str) -> str:
    """Why an accepted change does not apply: it needs changes that were left out (the fewest
    of the earlier ones it applies with), or the live file no longer holds its text."""
    needed = [c.number for c in p.changes if c.number < change.number and c.number not in accepted]
    if change in _replay(p, [*accepted, *needed], live)[1]:
        return "no longer finds its text in the live file"
    for number in list(needed):
        fewer = [n for n in needed if n != number]
        if change not in _replay(p, [*accepted, *fewer], live)[1]:
            needed = fewer
    names = ", ".join(map(str, needed))
    return f"needs change {names}, which {'is' if len(needed) == 1 else 'are'} not accepted"


def adopt(root: Path, accepted: list[int]) -> Adoption:
    """Write the accepted changes into the live file. Raises AdoptRefused, NotARunFolder."""
    p = proposal(root)
    if not p.live:
        raise AdoptRefused(
            f"{root}: the recipe starts from skill = empty, so there is no live file to adopt"
            f" into; copy {root / 'best_skill.md'} where the skill should live"
        )
    chosen = _chosen(p, accepted)
    live_path = Path(p.live)
    earlier = receipts(root)
    again = sorted(set(chosen) & {n for a in earlier for n in a.changes})
    live = _read(live_path)
    if again:
        raise AdoptRefused(f"change {', '.join(map(str, again))} was adopted before")
    ours = {p.pinned, *(a.after_sha for a in earlier)}  # as staged, or as an adoption left it
    if p.pinned is not None and sha(live) not in ours:
        raise AdoptRefused(
            f"nothing adopted: {live_path} changed since the night was staged;"
            " stage a new night (skopt sleep run) on the file as it is now"
        )
    result, problems = preview(p, chosen, live)
    if problems and live == preview(p, chosen, p.initial)[0]:
        problems = []  # an adopt stopped before its receipt: the live file holds its result
        result = live
    if problems:
        changed = " (it changed since the run started)" if live != p.initial else ""
        raise AdoptRefused(f"nothing adopted into {live_path}{changed}: " + "; ".join(problems))
    backup = root / "adopt" / f"{live_path.name}.{sha(live)[:12]}.bak"
    write_atomic(backup, live)
    write_atomic(live_path, result)
    adoption = Adoption(
        changes=chosen,
        live=str(live_path),
        backup=str(backup),
        before_sha=sha(live),
        after_sha=sha(result),
        at=time.time(),
    )
    write_atomic(
        root / RECEIPT,
        Receipts(adoptions=[*earlier, adoption]).model_dump_json(indent=2) + "\n",
    )
    return adoption


class Receipts(Frozen):
    adoptions: list[Adoption]


def receipts(root: Path) -> list[Adoption]:
    path = root / RECEIPT
    if not path.is_file():
        return []
    return Receipts.model_validate_json(path.read_text(encoding="utf-8")).adoptions


def _chosen(p: Proposal, accepted: list[int]) -> list[int]:
    if not p.changes:
        raise AdoptRefused(f"{p.folder}: the best skill is the initial one: nothing to adopt")
    unknown = sorted(set(accepted) - {c.number for c in p.changes})
    if unknown:
        raise AdoptRefused(
            f"no change {', '.join(map(str, unknown))}: this run proposes 1 to {len(p.changes)}"
        )
    if not accepted:
        raise AdoptRefused("no change accepted: nothing to adopt")
    return sorted(set(accepted))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise AdoptRefused(f"cannot read the live file {path}: {exc}") from None
