"""One rule for claims that break the game's rules: score what the rules allow, set the rest aside.

A photo can show what the rules forbid (a player's spare cars on the board: 48 where 45 are
allowed; one colour read on both tracks of a double), and a person correcting tracks can make
such a claim too. Scoring refuses an illegal game, so both the app and `ttr score` hold the claims
to the rules here first: the fewest, least sure claims that make the game legal are set aside,
each with its reason in words, and everything else is scored. The set-aside tracks are the ones to
check first; nothing is hidden, and the game that is scored (and saved) is one `ttr tally` accepts.

Pure: track ids, colours and numbers in, a `Review` out. No image code (scoring never imports
vision or app).

What is set aside, in this order:
1. one player on both tracks of a double: the less sure track;
2. both tracks of a double claimed in a 2–3 player game: the less sure track;
3. a player over the 45 trains: the set of that player's tracks with the smallest total sureness
   whose trains bring the player back to 45 (among equals, the fewest trains).
A ticket held by two players stays with the first and is set aside for the second.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scoring.board import Board, load_board
from scoring.rules import DOUBLES_CLOSED_UP_TO, TRAINS_PER_PLAYER

DASH = "–"


@dataclass(frozen=True)
class SetAside:
    """A claim not scored until someone checks it."""

    track_id: int
    owner: str  # the player colour the claim was for
    reason: str  # one short line a player understands (which claims were chosen is the module's rule)


@dataclass(frozen=True)
class SetAsideTicket:
    owner: str
    ticket: tuple[str, str]
    reason: str


@dataclass(frozen=True)
class Review:
    claims: dict[str, list[int]]  # what is scored: track ids per player, every player present
    set_aside: tuple[SetAside, ...] = ()
    tickets: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # tickets scored
    set_aside_tickets: tuple[SetAsideTicket, ...] = ()

    @property
    def ok(self) -> bool:
        """True when nothing had to be set aside."""
        return not self.set_aside and not self.set_aside_tickets

    def set_aside_ids(self) -> set[int]:
        return {s.track_id for s in self.set_aside}


def hold_to_rules(claims: Mapping[str, Sequence[int]], sureness: Mapping[int, float] | None = None,
                  tickets: Mapping[str, Sequence[tuple[str, str]]] | None = None,
                  n_players: int | None = None, board: Board | None = None,
                  max_trains: int = TRAINS_PER_PLAYER) -> Review:
    """Hold `claims` (track ids per player colour) to the rules; see the module doc.

    `sureness`: track id -> how sure the claim is (0..1; a photo reading's confidence), 1.0 for
    tracks not given (a track entered by hand is as sure as any other). `n_players`: players in
    the game (default: the colours in `claims` and `tickets`)."""
    board = board or load_board()
    sure = dict(sureness or {})
    tickets = tickets or {}
    kept: dict[str, list[int]] = {c: [int(i) for i in ids] for c, ids in claims.items()}
    for c in tickets:
        kept.setdefault(c, [])
    n = n_players if n_players is not None else sum(1 for ids in kept.values()) or 0
    out: list[SetAside] = []

    def how_sure(i: int) -> float:
        return float(sure.get(i, 1.0))

    def drop(color: str, i: int, reason: str) -> None:
        kept[color].remove(i)
        out.append(SetAside(i, color, reason))

    owner = {i: c for c, ids in kept.items() for i in ids}
    # 1 and 2: doubles
    for t in board.tracks:
        other = board.double_of(t)
        if other is None or other.id < t.id or t.id not in owner or other.id not in owner:
            continue
        a, b = owner[t.id], owner[other.id]
        weaker = t.id if how_sure(t.id) < how_sure(other.id) else other.id
        if a == b:
            drop(a, weaker, f"{a} on both tracks of {t.a}{DASH}{t.b}, where a player may claim one: "
                            "not counted until checked.")
        elif n <= DOUBLES_CLOSED_UP_TO:
            drop(owner[weaker], weaker,
                 f"both tracks of {t.a}{DASH}{t.b} claimed ({a}, {b}), where 2–3 players may use one: "
                 "not counted until checked.")
        owner = {i: c for c, ids in kept.items() for i in ids}
    # 3: trains
    for color, ids in kept.items():
        trains = sum(board.tracks[i].length for i in ids)
        if trains <= max_trains:
            continue
        excess = trains - max_trains
        for i in _cheapest_cover(ids, excess, board, how_sure):
            drop(color, i, f"{color} has {trains} trains on the board, {max_trains} at most: "
                           "not counted until checked.")
    # tickets held twice
    held: dict[frozenset, str] = {}
    kept_tickets: dict[str, list[tuple[str, str]]] = {}
    out_tickets: list[SetAsideTicket] = []
    for color, pairs in tickets.items():
        mine = kept_tickets.setdefault(color, [])
        for pair in pairs:
            key = frozenset(pair)
            if key in held:
                out_tickets.append(SetAsideTicket(color, tuple(pair), (
                    f"ticket {pair[0]}{DASH}{pair[1]} is already held by {held[key]} (each card exists once): "
                    f"not counted for {color} until checked.")))
            else:
                held[key] = color
                mine.append(tuple(pair))
    return Review(kept, tuple(out), kept_tickets, tuple(out_tickets))


def _cheapest_cover(ids: Sequence[int], excess: int, board: Board, how_sure) -> list[int]:
    """The tracks of `ids` with at least `excess` trains between them and the smallest total
    sureness (a small cost per train breaks ties toward taking out fewer trains)."""
    items = [(i, board.tracks[i].length, how_sure(i) + 1e-3 * board.tracks[i].length)
             for i in sorted(ids)]
    # best[l]: (cost, chosen) to take out at least l trains, l capped at `excess`
    inf = float("inf")
    best: list[tuple[float, tuple[int, ...]]] = [(0.0, ())] + [(inf, ())] * excess
    for i, length, cost in items:
        for reach in range(excess, -1, -1):
            c0, chosen = best[reach]
            if c0 == inf:
                continue
            to = min(excess, reach + length)
            if c0 + cost < best[to][0]:
                best[to] = (c0 + cost, chosen + (i,))
    return list(best[excess][1])
