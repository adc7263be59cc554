"""The readable report of a run that `skopt report` prints and saves as report.md (SPEC §1)."""

from __future__ import annotations

from collections.abc import Sequence

from skopt.compiler.plan import Count
from skopt.runtime.report import Decision, Report, Scores, Usage
from skopt.ui.plan_view import count_text, usd_text

FLAG = "!"
RESUME = "skopt run --resume continues it"
STATUS = {
    "finished": "finished",
    "budget": "stopped by the budget ({ended}); the test was scored",
    "interrupted": f"interrupted ({RESUME})",
    "failed": f"failed: {{ended}} ({RESUME})",
    "unfinished": f"stopped before the end, no reason recorded: killed? ({RESUME})",
    "not started": "not started: no step finished yet",
}


def render_report(r: Report) -> str:
    head = f"skopt report · {r.folder} · {r.recipe}" + (" (simulation)" if r.simulation else "")
    skipped = r.steps_done - r.accepted - r.rejected
    lines = [
        head,
        f"{STATUS[r.status].format(ended=r.ended)} · {r.steps_done} of {r.steps_planned} steps · "
        f"{r.accepted} accepted, {r.rejected} rejected, {skipped} without a candidate",
        "",
        *_scores(r.scores),
        "",
        *_decisions(r.decisions),
        "",
        *_usage(r),
    ]
    if r.unreadable_events:
        lines.append(f"({r.unreadable_events} journal lines could not be read and were skipped)")
    return "\n".join(lines)


def as_markdown(text: str) -> str:
    """report.md: the same text, fenced so that a Markdown viewer keeps its columns."""
    return f"```text\n{text}\n```\n"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _scores(s: Scores) -> list[str]:
    lines = [
        "scores",
        f"  gate ({s.gate_split})  initial {_score(s.initial)} · best {_score(s.best)}"
        f" · final {_score(s.final)}",
    ]
    if s.test_initial is None and s.test_best is None:
        return [*lines, "  test          not scored (the run did not reach the final test)"]
    lines.append(f"  test          initial {_score(s.test_initial)} · best {_score(s.test_best)}")
    if s.gap is not None:
        lines.append(
            f"  gap           best skill: gate {_score(s.best)} − test {_score(s.test_best)}"
            f" = {s.gap:+.3f}"
        )
    return lines


def _verdict(d: Decision) -> str:
    """accepted, rejected or —, with the candidate that decided when it was not the first."""
    verdict = "accepted" if d.accepted else "rejected" if d.before is not None else "—"
    return verdict if d.source == "selected" else f"{verdict} ({d.source})"


def _decisions(decisions: Sequence[Decision]) -> list[str]:
    if not decisions:
        return ["gate decisions: none yet"]
    rows = [
        [
            str(d.step),
            str(d.epoch),
            "—" if d.failures is None else str(d.failures),
            _verdict(d),
            "" if d.before is None else f"{_score(d.before)} → {_score(d.after)}",
            d.reason + (f" ({d.regressions} regressed)" if d.regressions else ""),
        ]
        for d in decisions
    ]
    header = ["step", "epoch", "failures", "decision", "before → after", "reason"]
    return ["gate decisions", *_table(header, rows, right={0, 1, 2})]


def _usage(r: Report) -> list[str]:
    finished = r.status == "finished"
    lines = [
        "plan against actual, per phase and role"
        f"  ({FLAG} outside the plan's [min, max] ~expected"
        + ("" if finished else "; unfinished: only above the maximum is flagged")
        + ")",
        "  calls",
        *_calls(r.usage),
        "  tokens",
        *_tokens(r.usage),
        "  usd",
        *_dollars(r.usage),
        *_outside(r.usage),
        "  cached: calls answered from the response cache, free (in a resumed run, the calls of",
        "  the interrupted step are asked again and answered from it); expected input tokens",
        "  assume the initial skill, ranges cover every size of skill the run allows",
    ]
    return lines


def _outside(usage: Sequence[Usage]) -> list[str]:
    names = {"calls": "calls", "input_tokens": "input tokens", "output_tokens": "output tokens"}
    found = {
        what: [f"{u.phase}/{u.role}" for u in usage if what in u.outside]
        for what in (*names, "usd")
    }
    parts = [f"{names.get(k, k)} of {', '.join(v)}" for k, v in found.items() if v]
    return [f"  {FLAG} outside the plan: " + "; ".join(parts)] if parts else []


def _key(u: Usage) -> list[str]:
    return [u.phase, u.role]


def _actual(value: int, name: str, u: Usage) -> str:
    return f"{value:_}{FLAG if name in u.outside else ''}"


def _plan(c: Count | None, approx: bool = False) -> str:
    return "not planned" if c is None else count_text(c, approx)


def _calls(usage: Sequence[Usage]) -> list[str]:
    rows = [
        [
            *_key(u),
            _actual(u.calls, "calls", u),
            f"{u.cache_hits:_}",
            f"{u.failed:_}",
            _plan(u.plan_calls),
        ]
        for u in usage
    ]
    planned = [u.plan_calls for u in usage if u.plan_calls is not None]
    total = Count(
        min=sum(c.min for c in planned),
        expected=sum(c.expected for c in planned),
        max=sum(c.max for c in planned),
    )
    rows.append(
        [
            "total",
            "",
            *(f"{sum(n(u) for u in usage):_}" for n in (_n_calls, _n_hits, _n_failed)),
            count_text(total),
        ]
    )
    header = ["phase", "role", "actual", "cached", "failed", "plan"]
    return _table(header, rows, right={2, 3, 4}, indent=4)


def _n_calls(u: Usage) -> int:
    return u.calls


def _n_hits(u: Usage) -> int:
    return u.cache_hits


def _n_failed(u: Usage) -> int:
    return u.failed


def _tokens(usage: Sequence[Usage]) -> list[str]:
    rows = [
        [
            *_key(u),
            _actual(u.input_tokens, "input_tokens", u),
            _plan(u.plan_input_tokens, approx=not u.input_exact),
            _actual(u.output_tokens, "output_tokens", u),
            _plan(u.plan_output_tokens),
        ]
        for u in usage
    ]
    header = ["phase", "role", "input", "plan", "output", "plan"]
    return _table(header, rows, right={2, 4}, indent=4)


def _dollars(usage: Sequence[Usage]) -> list[str]:
    free = all(u.usd == 0 and u.plan_usd is not None and u.plan_usd.max == 0 for u in usage)
    if free:
        return ["    $0: every model of this run is free"]
    rows = [
        [
            *_key(u),
            ("unknown" if u.usd is None else f"${u.usd:,.4f}")
            + (FLAG if "usd" in u.outside else ""),
            usd_text(u.plan_usd) if u.plan_calls is not None else "not planned",
        ]
        for u in usage
    ]
    known = [u.usd for u in usage]
    total = "unknown" if None in known else f"${sum(x or 0.0 for x in known):,.4f}"
    rows.append(["total", "", total, ""])
    header = ["phase", "role", "actual", "plan min / expected / max"]
    return _table(header, rows, right={2}, indent=4)


def _table(header: list[str], rows: list[list[str]], right: set[int], indent: int = 2) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return (" " * indent + "  ".join(cells)).rstrip()

    return [line(header), *(line(row) for row in rows)]
