"""Legal end-of-game positions, grown the way players grow their networks.

`random_position(rng, board)` plays a quick game: each player holds destination tickets and
claims, turn by turn, the tracks of a cheap path between its ticket cities (growing outward from
what it already owns), until one player is down to two trains or fewer and everyone has had a
last turn. Out: `{player colour: [track id, ...]}`.

Rules kept: at most 45 trains per player; a player never takes both tracks of a double; with
2 or 3 players only one track of each double may be used at all (`scoring.game.check_game` on
the game file agrees: the tests check it).
"""
from __future__ import annotations

import heapq

import numpy as np

from scoring.board import Board, Track
from scoring.rules import DOUBLES_CLOSED_UP_TO, LAST_ROUND_TRAINS, PLAYER_COLORS, TRAINS_PER_PLAYER

_DOUBLES: dict[int, tuple[Board, dict[int, int]]] = {}


def _doubles(board: Board) -> dict[int, int]:
    """Track id -> id of the other track of its double (cached per board object)."""
    cached = _DOUBLES.get(id(board))
    if cached is None or cached[0] is not board:
        cached = _DOUBLES[id(board)] = (board, {t.id: o.id for t in board.tracks
                                                if (o := board.double_of(t)) is not None})
    return cached[1]


def track_available(board: Board, track: Track, player: str, owner: dict[int, str], n_players: int) -> bool:
    """May `player` claim `track` now, given the owners so far?"""
    if track.id in owner:
        return False
    other = _doubles(board).get(track.id)
    if other is not None and other in owner:
        if n_players <= DOUBLES_CLOSED_UP_TO or owner[other] == player:
            return False
    return True


class _Player:
    def __init__(self, color: str, pace: float):
        self.color = color
        self.pace = pace  # chance of claiming on a turn (else it draws cards)
        self.trains = TRAINS_PER_PLAYER
        self.tracks: list[int] = []
        self.cities: set[str] = set()
        self.goals: list[tuple[str, str]] = []
        self.plan: list[int] = []


def _cheapest_path(board, rng, player, owner, n_players, a, b) -> list[int] | None:
    """Track ids of a cheap path a->b over tracks the player owns or may claim (noisy costs,
    so players do not all take the same path); None when cut off."""
    adj: dict[str, list[tuple[Track, float]]] = {}
    for t in board.tracks:
        if owner.get(t.id) == player.color:
            cost = 0.0
        elif track_available(board, t, player.color, owner, n_players):
            cost = t.length * rng.uniform(0.7, 1.5) + 0.5
        else:
            continue
        adj.setdefault(t.a, []).append((t, cost))
        adj.setdefault(t.b, []).append((t, cost))
    # Start from every city of the player's network that is as good as a, so paths grow from it.
    starts = {a} | (player.cities if player.cities else set())
    dist = {c: 0.0 for c in starts}
    prev: dict[str, tuple[str, int]] = {}
    heap = [(0.0, c) for c in starts]
    while heap:
        d, c = heapq.heappop(heap)
        if c == b:
            break
        if d > dist.get(c, np.inf):
            continue
        for t, cost in adj.get(c, ()):
            n = t.b if t.a == c else t.a
            nd = d + cost
            if nd < dist.get(n, np.inf):
                dist[n] = nd
                prev[n] = (c, t.id)
                heapq.heappush(heap, (nd, n))
    if b not in dist:
        return None
    path, c = [], b
    while c in prev:
        c, tid = prev[c]
        path.append(tid)
    path.reverse()
    return [t for t in path if owner.get(t) != player.color]


def random_position(rng: np.random.Generator, board: Board, n_players: int | None = None) -> dict[str, list[int]]:
    """A legal end-of-game position: `{player colour: [track id, ...]}` for 2-5 players."""
    if n_players is None:
        n_players = int(rng.choice([2, 3, 4, 5], p=[0.15, 0.25, 0.35, 0.25]))
    if not 2 <= n_players <= len(PLAYER_COLORS):
        raise ValueError("n_players must be 2..5")
    colors = list(rng.permutation(PLAYER_COLORS)[:n_players])
    players = [_Player(str(c), float(rng.uniform(0.55, 1.0))) for c in colors]
    tickets = list(board.tickets)
    order = rng.permutation(len(tickets))
    deal = iter(int(i) for i in order)
    for p in players:
        p.goals = [(tickets[i].a, tickets[i].b) for i in (next(deal), next(deal), next(deal))]
    owner: dict[int, str] = {}

    def claim(p: _Player, tid: int):
        t = board.tracks[tid]
        owner[tid] = p.color
        p.tracks.append(tid)
        p.trains -= t.length
        p.cities |= {t.a, t.b}

    def take_turn(p: _Player):
        if rng.random() > p.pace:
            return
        for _ in range(4):
            # Drop planned tracks that are gone or too long; replan when the plan is empty.
            p.plan = [t for t in p.plan if track_available(board, board.tracks[t], p.color, owner, n_players)]
            if not p.plan and p.goals:
                a, b = p.goals.pop(0)
                if a in p.cities and b in p.cities and rng.random() < 0.5:
                    continue
                p.plan = _cheapest_path(board, rng, p, owner, n_players, a, b) or []
                # Build from the end nearest the network first, as players do.
                p.plan.sort(key=lambda t: 0 if board.tracks[t].cities & p.cities else 1)
            if not p.plan and not p.goals:
                try:
                    t = tickets[next(deal)]
                    p.goals.append((t.a, t.b))
                except StopIteration:
                    pass
            affordable = [t for t in p.plan if board.tracks[t].length <= p.trains]
            if affordable:
                touching = [t for t in affordable if board.tracks[t].cities & p.cities] or affordable
                claim(p, touching[0])
                p.plan.remove(touching[0])
                return
            if not p.goals:
                break
        # No useful plan: spend trains on the longest affordable track next to the network.
        free = [t for t in board.tracks if t.length <= p.trains
                and track_available(board, t, p.color, owner, n_players)]
        near = [t for t in free if t.cities & p.cities] or free
        if near:
            lengths = np.array([t.length for t in near], float)
            w = lengths ** 1.5 / (lengths ** 1.5).sum()
            claim(p, near[int(rng.choice(len(near), p=w))].id)

    last_round = None
    turn = 0
    while turn < 400:
        p = players[turn % n_players]
        if last_round is not None and turn >= last_round:
            break
        take_turn(p)
        if last_round is None and p.trains <= LAST_ROUND_TRAINS:
            last_round = turn + n_players + 1  # everyone, the trigger included, plays once more
        turn += 1
    return {p.color: sorted(p.tracks) for p in players}
