"""Staging a night (SPEC §7) in its folder under the project's `.skopt/sleep/`: the proposed
skill, the edits with their rationale and the held-out tasks they fixed and broke, the redacted
evidence (sessions, tasks, every replay's verdict), `report.md`, and `manifest.json`, written
last, which pins the live file's path and SHA-256. Nothing here touches the live file: adopting
is `skopt sleep adopt` (or the review screen), runtime/adopt.py.

`state.json` beside the nights remembers when the last finished night harvested (`since = last`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from skopt.compiler import sleep_bounds as bounds
from skopt.runtime.artifacts import RunFolder, write_atomic, write_json
from skopt.runtime.claim import read_marker
from skopt.runtime.sleep.night import Night, Proposal, Scored

MANIFEST = "manifest.json"
STATE = "state.json"


class Manifest(BaseModel):
    """What a staged night proposes, pinned to the live file as the night found it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal[1] = 1
    night: str
    live: str  # the live skill file, as the recipe names it from the project
    live_sha256: str  # the live file when the night started: adopting refuses any other
    proposed: str | None  # the proposed file, in the night's folder (None: nothing proposed)
    proposed_sha256: str | None
    accepted: bool  # by the gate on held-out tasks
    reason: str
    held_out: int
    before: float | None
    after: float | None


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def stage(folder: RunFolder, night: Night, live: Path, when: datetime) -> Manifest:
    """Write the night's proposal and evidence, the manifest last; remember the harvest."""
    root = folder.root
    proposed = None
    if night.candidate is not None:
        proposed = f"proposed/{live.name}"
        write_atomic(root / proposed, night.candidate)
    write_json(root / "replays.json", [_replay(s, "current") for s in night.baseline + night.train])
    write_json(root / "tried.json", [_replay(s, "candidate") for s in night.tried])
    write_json(root / "edits.json", [_edit(p, i) for i, p in enumerate(night.edits, 1)])
    write_atomic(root / "report.md", report(folder, night, live))
    d = night.decision
    manifest = Manifest(
        night=root.name,
        live=str(live),
        live_sha256=sha(night.skill),
        proposed=proposed,
        proposed_sha256=sha(night.candidate) if night.candidate is not None else None,
        accepted=d.accepted,
        reason=d.reason,
        held_out=len(night.baseline),
        before=d.before,
        after=d.after,
    )
    write_atomic(root / MANIFEST, manifest.model_dump_json(indent=2) + "\n")
    write_json(root.parent / STATE, {"last_harvest": when.isoformat()})
    return manifest


def _replay(s: Scored, skill: str) -> dict[str, object]:
    return {
        "task": s.task.id,
        "split": s.task.split,
        "skill": skill,
        "answer": s.answer,
        "hard": s.verdict.hard,
        "soft": s.verdict.soft,
        "note": s.verdict.note,
    }


def _edit(p: Proposal, number: int) -> dict[str, object]:
    e = p.edit
    return {
        "number": number,
        "op": e.op,
        "anchor": e.anchor,
        "content": e.content,
        "rationale": e.rationale,
        "support": e.support,
        "proposed_for": list(p.tasks),
        "status": p.status,
        "reason": p.reason,
    }


def changed(night: Night) -> tuple[list[str], list[str]]:
    """The held-out tasks the candidate fixed (failed before, pass with it) and broke."""
    before = {s.task.id: s.verdict.passed for s in night.baseline}
    fixed = [s.task.id for s in night.tried if s.verdict.passed and not before[s.task.id]]
    broke = [s.task.id for s in night.tried if before[s.task.id] and not s.verdict.passed]
    return fixed, broke


def manifest(root: Path) -> Manifest | None:
    try:
        return Manifest.model_validate_json((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def nights(staging: Path) -> list[Path]:
    """The night folders under `staging`, oldest first."""
    if not staging.is_dir():
        return []
    found = [
        p
        for p in staging.iterdir()
        if p.is_dir() and (m := read_marker(p)) and m["kind"] == "night"
    ]
    return sorted(found)


def rejected_before(staging: Path, current: Path) -> str:
    """The memory a night reflects with: the edits that the recipe's other staged nights tried
    and their gate rejected, oldest first, so that a night does not propose again what the
    held-out tasks turned down."""
    lines = []
    for night in nights(staging):
        m = manifest(night) if night != current else None
        if m is None or m.accepted:
            continue
        try:
            edits = json.loads((night / "edits.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        lines += [
            f"- night {night.name}, rejected by the gate ({m.reason}): {e['op']} {e['content']!r}"
            for e in edits
            if isinstance(e, dict) and e.get("status") == "applied"
        ]
    return bounds.memory("\n".join(lines)) if lines else ""


def report(folder: RunFolder, night: Night, live: Path, dry_run: bool = False) -> str:
    d = night.decision
    tried = {s.task.id: s for s in night.tried}
    skipped = night.harvest.skipped.counts
    fixed, broke = changed(night)
    lines = [
        f"# skopt sleep · {'dry run' if dry_run else 'night'} {folder.root.name}",
        "",
        f"- live skill: `{live}`",
        f"- sessions: {len(night.harvest.sessions)} read; passed over: "
        + (", ".join(f"{n} {why}" for why, n in sorted(skipped.items())) or "none"),
        f"- tasks: {len(night.tasks)} ({len(night.train)} train, {len(night.baseline)} held out)",
        f"- held-out score: {_score(d.before)} → {_score(d.after)}",
        f"- gate: {'accepted' if d.accepted else 'rejected'} — {d.reason}",
        "",
        "## Held-out tasks",
        "",
        "| task | before | after | intent |",
        "|---|---:|---:|---|",
    ]
    for s in night.baseline:
        after = tried.get(s.task.id)
        was, now = _pass(s.verdict.passed), _pass(after.verdict.passed) if after else "—"
        lines.append(f"| {s.task.id} | {was} | {now} | {_cell(s.task.intent)} |")
    lines += ["", "## Proposed edits", ""]
    for i, p in enumerate(night.edits, 1):
        e = p.edit
        lines.append(f"{i}. `{e.op}` {_cell(e.content)} — {_cell(e.rationale)}")
        lines.append(
            f"   support {e.support} · proposed for {len(p.tasks)} failed task"
            f"{'s' * (len(p.tasks) != 1)} ({', '.join(p.tasks)}) · {p.status}"
            + (f" ({p.reason})" if p.status == "skipped" else "")
        )
    if not night.edits:
        lines.append("none")
    if night.tried:
        together = " (the edits together)" if len(night.edits) > 1 else ""
        lines += [
            "",
            f"Held-out tasks fixed{together}: {', '.join(fixed) or 'none'}; "
            f"broken: {', '.join(broke) or 'none'}.",
        ]
    return "\n".join(lines) + "\n"


def _pass(passed: bool) -> str:
    return "pass" if passed else "fail"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(text: str) -> str:
    one = " ".join(text.split()).replace("|", "\\|")
    return one if len(one) <= 100 else one[:99] + "…"
