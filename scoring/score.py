"""End-of-game scoring: a checked `Game` in, a `ScoreSheet` that explains every number out.

Per player: route points by track length, trains used, each ticket completed (its two cities
joined by the player's own tracks) or failed, the exact longest continuous path, the bonus cards
of the variant, the total, and the score-track check. Then the winners with the rulebook's
tie-breaks: highest total, then most completed tickets, then the holder of the Longest Path card
(variants that have it); players still tied share the win.

`ScoreSheet.to_dict()` is the `ttr tally --json` format; `ScoreSheet.from_dict(d).to_dict() == d`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from scoring.board import Board, load_board
from scoring.game import Game, PlayerClaims, ticket_card, ticket_value
from scoring.longest_path import longest_path
from scoring.rules import DEFAULT_SETTINGS, VARIANTS, ScoringSettings, route_points

SCORE_TRACK_LAP = 100  # the printed score track runs 0..99 and markers lap it

# How the winners were decided, in tie-break order.
DECIDED_BY = ("points", "completed tickets", "longest path card", "shared")


@dataclass(frozen=True)
class RouteScore:
    track: int  # board track id
    a: str
    b: str
    color: str  # printed colour
    length: int
    points: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TicketScore:
    a: str
    b: str
    points: int  # the card's value (added if completed, subtracted if not)
    completed: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ScoreTrackCheck:
    reported: int  # where the player's marker stands
    expected: int  # route points computed
    matches: bool  # equal modulo the 100-space track

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class PlayerScore:
    color: str
    trains: int
    route_points: int
    routes: tuple[RouteScore, ...]
    tickets: tuple[TicketScore, ...]
    ticket_points: int
    completed_tickets: int
    longest_path: int  # trains in the longest continuous path
    longest_path_cities: tuple[str, ...]  # one such path, city by city
    longest_path_tracks: tuple[int, ...]  # its track ids in travel order
    longest_path_bonus: int
    globetrotter_bonus: int
    total: int
    score_track: ScoreTrackCheck | None

    def to_dict(self) -> dict[str, Any]:
        # (written out, not asdict: the `ttr tally --json` key order, and lists for the tuples)
        return {
            "color": self.color, "trains": self.trains, "route_points": self.route_points,
            "tickets": [t.to_dict() for t in self.tickets],
            "ticket_points": self.ticket_points, "completed_tickets": self.completed_tickets,
            "longest_path": self.longest_path, "longest_path_cities": list(self.longest_path_cities),
            "longest_path_bonus": self.longest_path_bonus, "globetrotter_bonus": self.globetrotter_bonus,
            "total": self.total,
            "score_track": self.score_track.to_dict() if self.score_track else None,
            # beyond the contract: the detail behind route_points and the path
            "routes": [r.to_dict() for r in self.routes],
            "longest_path_tracks": list(self.longest_path_tracks),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlayerScore:
        return cls(
            color=d["color"], trains=d["trains"], route_points=d["route_points"],
            routes=tuple(RouteScore(**r) for r in d.get("routes", [])),
            tickets=tuple(TicketScore(**t) for t in d["tickets"]),
            ticket_points=d["ticket_points"], completed_tickets=d["completed_tickets"],
            longest_path=d["longest_path"], longest_path_cities=tuple(d["longest_path_cities"]),
            longest_path_tracks=tuple(d.get("longest_path_tracks", [])),
            longest_path_bonus=d["longest_path_bonus"], globetrotter_bonus=d["globetrotter_bonus"],
            total=d["total"],
            score_track=ScoreTrackCheck(**d["score_track"]) if d.get("score_track") else None,
        )


@dataclass(frozen=True)
class ScoreSheet:
    variant: str
    ticket_values: str
    players: tuple[PlayerScore, ...]  # in the game's player order
    winners: tuple[str, ...]  # colours, in player order
    decided_by: str  # one of DECIDED_BY: what separated the winner(s) from the rest

    def to_dict(self) -> dict[str, Any]:
        return {"variant": self.variant, "ticket_values": self.ticket_values,
                "players": [p.to_dict() for p in self.players],
                "winners": list(self.winners), "decided_by": self.decided_by}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ScoreSheet:
        return cls(variant=d["variant"], ticket_values=d["ticket_values"],
                   players=tuple(PlayerScore.from_dict(p) for p in d["players"]),
                   winners=tuple(d["winners"]), decided_by=d["decided_by"])

    def player(self, color: str) -> PlayerScore:
        return next(p for p in self.players if p.color == color)


def score_game(game: Game, settings: ScoringSettings | None = None, board: Board | None = None) -> ScoreSheet:
    """Score a checked game (from `parse_game` or `Game.from_claims`)."""
    settings = settings or DEFAULT_SETTINGS
    board = board or load_board()
    variant = VARIANTS[game.variant]
    parts = [_score_player(p, game, board) for p in game.players]

    best_path = max(part["longest_path"] for part in parts)
    most_completed = max(part["completed_tickets"] for part in parts)
    holders = set()
    players = []
    for p, part in zip(game.players, parts):
        # every player tied for the best holds the card; a best of 0 (no route, no completed
        # ticket) is nobody's: the card rewards the most of something, not the most of nothing
        holds_path_card = variant.longest_path_card and part["longest_path"] == best_path > 0
        holds_globetrotter = variant.globetrotter_card and part["completed_tickets"] == most_completed > 0
        if holds_path_card:
            holders.add(p.color)
        path_bonus = settings.longest_path_points if holds_path_card else 0
        globe_bonus = settings.globetrotter_points if holds_globetrotter else 0
        total = part["route_points"] + part["ticket_points"] + path_bonus + globe_bonus
        players.append(PlayerScore(**part, longest_path_bonus=path_bonus, globetrotter_bonus=globe_bonus,
                                   total=total))
    winners, decided_by = _winners(players, holders, variant.longest_path_card)
    return ScoreSheet(game.variant, game.ticket_values, tuple(players), winners, decided_by)


def _score_player(p: PlayerClaims, game: Game, board: Board) -> dict[str, Any]:
    tracks = [board.tracks[i] for i in p.track_ids]
    routes = tuple(RouteScore(t.id, t.a, t.b, t.color, t.length, route_points(t.length)) for t in tracks)
    points = sum(r.points for r in routes)
    joined = _Joined(p.track_ids, board)
    tickets = []
    for a, b in p.tickets:
        value = ticket_value(ticket_card(game, a, b, board), game.ticket_values)
        tickets.append(TicketScore(a, b, value, joined.connected(a, b)))
    length, cities, track_ids = longest_path(p.track_ids, board)
    check = None
    if p.score_track is not None:
        check = ScoreTrackCheck(p.score_track, points,
                                p.score_track % SCORE_TRACK_LAP == points % SCORE_TRACK_LAP)
    return dict(
        color=p.color, trains=sum(t.length for t in tracks), route_points=points, routes=routes,
        tickets=tuple(tickets),
        ticket_points=sum(t.points if t.completed else -t.points for t in tickets),
        completed_tickets=sum(t.completed for t in tickets),
        longest_path=length, longest_path_cities=tuple(cities), longest_path_tracks=tuple(track_ids),
        score_track=check,
    )


def _winners(players: list[PlayerScore], path_card_holders: set[str], path_card: bool) -> tuple[tuple[str, ...], str]:
    """Highest total; then most completed tickets; then the Longest Path card; else shared."""
    top = max(p.total for p in players)
    tied = [p for p in players if p.total == top]
    if len(tied) == 1:
        return (tied[0].color,), "points"
    most = max(p.completed_tickets for p in tied)
    tied = [p for p in tied if p.completed_tickets == most]
    if len(tied) == 1:
        return (tied[0].color,), "completed tickets"
    if path_card:
        holding = [p for p in tied if p.color in path_card_holders]
        if len(holding) == 1:
            return (holding[0].color,), "longest path card"
        if holding:
            tied = holding
    return tuple(p.color for p in tied), "shared"


class _Joined:
    """Which cities a player's own tracks join (union-find over cities)."""

    def __init__(self, track_ids, board: Board) -> None:
        self.parent: dict[str, str] = {}
        for i in track_ids:
            t = board.tracks[i]
            self.parent[self.find(t.a)] = self.find(t.b)

    def find(self, city: str) -> str:
        root = city
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while city != root:  # path compression
            self.parent[city], city = root, self.parent[city]
        return root

    def connected(self, a: str, b: str) -> bool:
        return a == b or self.find(a) == self.find(b)
