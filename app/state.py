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
    """"Denver – Kansas City (4 black)"; a double route's two tracks differ by printed colour."""
    return f"{track.a}{DASH}{track.b} ({track.length} {track.color})"


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
    return [c for c in PLAYER_COLORS if c in set(colors)]


def sheet_csv(sheet: dict, names: dict[str, str] | None = None) -> str:
    """The score sheet (`ScoreSheet.to_dict()`) as CSV: one row per player, one per ticket."""
    names = names or {}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["player", "name", "item", "points", "detail"])
    for p in sheet["players"]:
        c, n = p["color"], names.get(p["color"], "")
        w.writerow([c, n, "routes", p["route_points"], f"{p['trains']} trains"])
        for t in p["tickets"]:
            sign = t["points"] if t["completed"] else -t["points"]
            w.writerow([c, n, "ticket", sign,
                        f"{t['a']}{DASH}{t['b']} {'completed' if t['completed'] else 'failed'}"])
        w.writerow([c, n, "longest path", p["longest_path_bonus"],
                    f"{p['longest_path']} trains: {DASH.join(p['longest_path_cities'])}"])
        w.writerow([c, n, "globetrotter", p["globetrotter_bonus"], f"{p['completed_tickets']} tickets completed"])
        w.writerow([c, n, "total", p["total"], "winner" if c in sheet["winners"] else ""])
    return out.getvalue()


def player_rows(p: dict) -> "list[tuple[str, int]]":
    """One player's score-sheet entry (`ScoreSheet.to_dict()["players"][i]`) as (item, points)
    rows: routes, each ticket completed (+) or failed (-), the bonuses, the total."""
    rows = [(f"Routes ({p['trains']} trains)", p["route_points"])]
    for t in p["tickets"]:
        done = t["completed"]
        rows.append((f"{'✅' if done else '❌'} {t['a']}{DASH}{t['b']}", t["points"] if done else -t["points"]))
    rows.append((f"Longest path: {p['longest_path']} trains", p["longest_path_bonus"]))
    if p["globetrotter_bonus"] or p["completed_tickets"]:
        rows.append((f"Globetrotter ({p['completed_tickets']} tickets done)", p["globetrotter_bonus"]))
    rows.append(("Total", p["total"]))
    return rows


def path_tracks(cities: list[str], color: str, owners: dict[int, str | None]) -> list[int]:
    """The tracks a longest path (a city sequence from the score sheet) runs along: between each
    two cities, the track of that pair the player owns."""
    board = load_board()
    out: list[int] = []
    for a, b in zip(cities, cities[1:]):
        ids = [t.id for t in board.tracks_between(a, b) if owners.get(t.id) == color and t.id not in out]
        if ids:
            out.append(ids[0])
    return out


def score(tab: TableState):
    """Score what is on the page: (`scoring.game.Game`, `ScoreSheet.to_dict()`). Raises TtrError
    (one line) when the claims break a rule (e.g. more than 45 trains)."""
    from scoring.game import Game
    from scoring.score import score_game

    game = Game.from_claims(tab.variant, tab.claims(), tickets=tab.ticket_pairs(),
                            score_track=tab.markers(), ticket_values=tab.ticket_values)
    return game, score_game(game).to_dict()


def export_json(game, tab: TableState) -> str:
    """The game file (`ttr tally` reads it), with each player's name where one was given."""
    d = game.to_dict()
    for p in d["players"]:
        if tab.names.get(p["color"]):
            p["name"] = tab.names[p["color"]]
    return json.dumps(d, ensure_ascii=False, indent=1) + "\n"


def restore(data: bytes) -> TableState:
    """A saved game file back into page state. Raises TtrError (one line) for a bad file."""
    from scoring.game import parse_game

    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise TtrError("not a game file (not text)") from None
    except json.JSONDecodeError as e:
        raise TtrError(f"not a game file: {e.msg} at line {e.lineno}, column {e.colno}") from None
    game = parse_game(raw)
    return table_from_game(game, raw)
