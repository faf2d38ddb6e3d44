"""A `ScoreSheet` as text for a terminal: one table, then the detail behind each number."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from scoring.rules import VARIANTS
from scoring.score import ScoreSheet

COLUMNS = ("player", "trains", "routes", "tickets", "done", "path", "path card", "globetrotter", "total")


def render_text(sheet: ScoreSheet, score_track_notes: Mapping[str, Sequence[str]] | None = None) -> str:
    """The score sheet as a fixed-width table followed by tickets, paths and checks per player;
    `score_track_notes`: lines to print under a player's score-track check (what may explain a
    marker that does not match)."""
    variant = VARIANTS[sheet.variant]
    rows = [COLUMNS]
    for p in sheet.players:
        rows.append((p.color, str(p.trains), str(p.route_points), f"{p.ticket_points:+d}",
                     f"{p.completed_tickets}/{len(p.tickets)}", str(p.longest_path),
                     str(p.longest_path_bonus) if variant.longest_path_card else "-",
                     str(p.globetrotter_bonus) if variant.globetrotter_card else "-", str(p.total)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    lines = [f"{variant.title}; ticket values: {sheet.ticket_values}", ""]
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    names = " and ".join(sheet.winners)
    reason = {
        "points": "on points",
        "completed tickets": "tied on points, more completed tickets",
        "longest path card": "tied on points and tickets, holds the Longest Path card",
        "shared": "tied on every tie-break: the win is shared",
    }[sheet.decided_by]
    lines.append(f"Winner{'s' if len(sheet.winners) > 1 else ''}: {names} ({reason})")
    for p in sheet.players:
        lines.append("")
        lines.append(f"{p.color}:")
        for t in p.tickets:
            mark = "done  " if t.completed else "failed"
            lines.append(f"  ticket {mark} {t.a}–{t.b}: {t.points if t.completed else -t.points:+d}")
        if p.longest_path:
            lines.append(f"  longest path {p.longest_path}: {' – '.join(p.longest_path_cities)}")
        if p.score_track is not None:
            verdict = "matches" if p.score_track.matches else "DOES NOT MATCH"
            lines.append(f"  score track: marker at {p.score_track.reported}, route points "
                         f"{p.score_track.expected}: {verdict}")
            lines += [f"    {note}" for note in (score_track_notes or {}).get(p.color, ())]
    return "\n".join(lines) + "\n"
