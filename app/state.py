"""What the page holds between reruns, and its conversions to and from the project's libraries.

Pure Python (no Streamlit), so the tests can hold every hand-off: the page keeps a `TableState`
(setup, owner of each track, tickets, score-track markers) and asks `scoring` for everything
that is a rule. Ticket keys are "A – B" strings in the board data's city order.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

import numpy as np

from scoring.board import Ticket, Track, load_board
from scoring.errors import TtrError
from scoring.rules import PLAYER_COLORS, VARIANTS

DASH = " – "  # between two city names in every label the page shows


def ticket_key(ticket: Ticket) -> str:
    return f"{ticket.a}{DASH}{ticket.b}"


def ticket_points(ticket: Ticket, ticket_values: str) -> int:
    """The value printed on the card in the chosen set (2004 cards fall back to the 1910 box)."""
    if ticket_values == "2004" and ticket.points_2004 is not None:
        return ticket.points_2004
    return ticket.points


def deck(variant: str) -> list[Ticket]:
    """The variant's destination tickets, sorted by first city then second."""
    tag = VARIANTS[variant].deck
    return sorted((t for t in load_board().tickets if tag in t.decks), key=lambda t: (t.a, t.b))


def ticket_labels(variant: str, ticket_values: str) -> dict[str, str]:
    """Ticket key -> "Denver – El Paso (4)" for the variant's deck."""
    return {ticket_key(t): f"{ticket_key(t)} ({ticket_points(t, ticket_values)})" for t in deck(variant)}


def track_label(track: Track) -> str:
    """"Denver – Kansas City (4 black)". The two tracks of a double route differ by printed
    colour, or, both gray, by where they lie: "Seattle – Portland (1 gray, left)"."""
    label = f"{track.a}{DASH}{track.b} ({track.length} {track.color}"
    other = load_board().double_of(track)
    if other is not None and other.color == track.color:
        label += ", " + _side(track.id, other.id)
    return label + ")"


def _side(track_id: int, other_id: int) -> str:
    """Where a track lies beside its twin on the board: upper/lower, or left/right for a
    track running more up-down than across."""
    from calibration.template import load_template

    tpl = load_template()
    mine, theirs = tpl.tracks[track_id].centers(), tpl.tracks[other_id].centers()
    run = np.abs(mine[-1] - mine[0]) if len(mine) > 1 else np.abs(
        tpl.cities[tpl.tracks[track_id].b] - tpl.cities[tpl.tracks[track_id].a])
    dx, dy = mine.mean(axis=0) - theirs.mean(axis=0)
    if run[0] >= run[1]:  # runs across: one above the other
        return "upper" if dy < 0 else "lower"
    return "left" if dx < 0 else "right"


@dataclass
class TableState:
    """Everything a person has entered or corrected, as plain values."""

    variant: str = "classic"
    ticket_values: str = "2004"
    players: list[str] = field(default_factory=lambda: ["red", "blue"])
    names: dict[str, str] = field(default_factory=dict)
    owners: dict[int, str | None] = field(default_factory=dict)  # track id -> player colour
    tickets: dict[str, list[str]] = field(default_factory=dict)  # colour -> ticket keys
    score_track: dict[str, int | None] = field(default_factory=dict)

    def claims(self) -> dict[str, list[int]]:
        """Track ids per player, every player present (a player may own none)."""
        out: dict[str, list[int]] = {c: [] for c in self.players}
        for tid, owner in sorted(self.owners.items()):
            if owner:
                out.setdefault(owner, []).append(tid)
        return out

    def ticket_pairs(self) -> dict[str, list[tuple[str, str]]]:
        return {c: [tuple(k.split(DASH)) for k in self.tickets.get(c, [])] for c in self.players}

    def markers(self) -> dict[str, int]:
        return {c: int(v) for c, v in self.score_track.items() if v is not None and c in self.players}

    def display_name(self, color: str) -> str:
        name = (self.names.get(color) or "").strip()
        return f"{name} ({color})" if name else color.capitalize()


def sort_players(colors) -> list[str]:
    """Player colours in the box's order (red, blue, green, yellow, black)."""
    chosen = set(colors)
    return [c for c in PLAYER_COLORS if c in chosen]


def sheet_csv(sheet: dict, names: dict[str, str] | None = None) -> str:
    """The score sheet (`ScoreSheet.to_dict()`) as CSV: one row per player, one per ticket."""
    names = names or {}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["player", "name", "item", "points", "detail"])
    for p in sheet["players"]:
        c, n = p["color"], names.get(p["color"], "")
        for r in p.get("routes", []):
            w.writerow([c, n, "route", r["points"], f"{r['a']}{DASH}{r['b']} ({r['length']} {r['color']})"])
        w.writerow([c, n, "route points", p["route_points"], f"{p['trains']} trains"])
        for t in p["tickets"]:
            sign = t["points"] if t["completed"] else -t["points"]
            w.writerow([c, n, "ticket", sign,
                        f"{t['a']}{DASH}{t['b']} {'completed' if t['completed'] else 'failed'}"])
        w.writerow([c, n, "longest path", p["longest_path_bonus"],
                    f"{p['longest_path']} trains: {DASH.join(p['longest_path_cities'])}"])
        w.writerow([c, n, "globetrotter", p["globetrotter_bonus"], f"{p['completed_tickets']} tickets completed"])
        check = p.get("score_track")
        if check:
            w.writerow([c, n, "score track", check["reported"],
                        f"expected {check['expected']}: {'matches' if check['matches'] else 'does not match'}"])
        w.writerow([c, n, "total", p["total"], "winner" if c in sheet["winners"] else ""])
    return out.getvalue()


def player_rows(p: dict, variant: str) -> "list[tuple[str, int]]":
    """One player's score-sheet entry (`ScoreSheet.to_dict()["players"][i]`) as (item, points)
    rows: routes, each ticket completed (+) or failed (-), the variant's bonus cards, the total."""
    rows = [(f"Routes ({p['trains']} trains)", p["route_points"])]
    for t in p["tickets"]:
        done = t["completed"]
        rows.append((f"{'✓' if done else '✗'} {t['a']}{DASH}{t['b']}", t["points"] if done else -t["points"]))
    if VARIANTS[variant].longest_path_card:
        rows.append((f"Longest path: {p['longest_path']} trains", p["longest_path_bonus"]))
    if VARIANTS[variant].globetrotter_card:
        rows.append((f"Globetrotter ({p['completed_tickets']} tickets done)", p["globetrotter_bonus"]))
    rows.append(("Total", p["total"]))
    return rows


def score(tab: TableState):
    """Score what is on the page: (`scoring.game.Game`, `ScoreSheet.to_dict()`). Raises TtrError
    (one line) when the claims break a rule (e.g. more than 45 trains)."""
    from scoring.game import Game
    from scoring.score import score_game

    game = Game.from_claims(tab.variant, tab.claims(), tickets=tab.ticket_pairs(),
                            score_track=tab.markers(), ticket_values=tab.ticket_values,
                            names={c: n.strip()[:40] for c, n in tab.names.items() if (n or "").strip()})
    return game, score_game(game).to_dict()


DECIDED = {
    "points": "",
    "completed tickets": "Tied on points; most completed tickets decides.",
    "longest path card": "Tied on points and tickets; the Longest Path card decides.",
    "shared": "Still tied after every tie-break (points, tickets, Longest Path): the win is shared.",
}


def decided_text(decided_by: str) -> str:
    """The score sheet's `decided_by` as a sentence for people."""
    return DECIDED.get(decided_by, decided_by)


def export_json(game) -> str:
    """The game file, exactly as `ttr tally` reads it."""
    return json.dumps(game.to_dict(), ensure_ascii=False, indent=1) + "\n"


def restore(data: bytes, source: str = "game file") -> TableState:
    """A saved game file back into page state. Raises TtrError (one line) for a bad file."""
    from scoring.game import parse_game, parse_json

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TtrError(f"{source}: not a text file (expected UTF-8 JSON)") from None
    game = parse_game(parse_json(text, source))
    by_pair = {t.cities: ticket_key(t) for t in deck(game.variant)}
    return TableState(
        variant=game.variant, ticket_values=game.ticket_values,
        players=sort_players(p.color for p in game.players),
        owners={**{t.id: None for t in load_board().tracks},
                **{tid: p.color for p in game.players for tid in p.track_ids}},
        tickets={p.color: [by_pair[frozenset(t)] for t in p.tickets] for p in game.players},
        score_track={p.color: p.score_track for p in game.players},
        names={p.color: p.name for p in game.players if p.name})
