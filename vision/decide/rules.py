"""The game's rules, as the decision holds a reading to them:

- one player cannot own both tracks of a double route;
- both tracks of a double are claimed only in 4-5 player games (players = colours seen);
- a player has at most the cars in the box on the board: 45 trains by the rules, but the box holds
  48 of each colour (3 spares) and real boards show them, so the physical bound is the one a photo
  can be held to;
- the lanes of a double lie side by side, so cars laid a little off their lane show on the
  neighbour's spaces: an empty lane next to a claimed one may look like the neighbour's colour
  (its "spill", scored as such).

`settle_by_rules` changes the fewest-cost decisions until no rule is broken.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from scoring.board import Board
from scoring.rules import PLAYER_COLORS
from vision.reading import SPACE_CLASSES
from vision.settings import DecideSettings

MAX_PASSES = 5  # the players seen depend on the choices: a few passes reach a fixed point
BOTH_LANES_PLAYERS = 4  # both tracks of a double are claimed only with this many players or more


def player_index(color: str) -> int:
    """Column of a player colour in SPACE_CLASSES."""
    return 1 + PLAYER_COLORS.index(color)


def trains_used(choice: np.ndarray, board: Board) -> dict[int, int]:
    """Trains each hypothesis (player column) has on the board under `choice`."""
    lengths = np.array([t.length for t in board.tracks], float)
    n = np.bincount(np.asarray(choice, int), weights=lengths, minlength=len(SPACE_CLASSES))
    return {c: int(n[c]) for c in range(1, len(n)) if n[c]}


def players_but(choice: np.ndarray, i: int, j: int) -> frozenset[int]:
    """The players `choice` shows on the tracks other than `i` and `j`."""
    seen = np.bincount(choice, minlength=len(SPACE_CLASSES))
    seen[choice[i]] -= 1
    seen[choice[j]] -= 1
    return frozenset((np.flatnonzero(seen[1:]) + 1).tolist())


@lru_cache(maxsize=64)
def pair_allowed(rest: frozenset[int]) -> np.ndarray:
    """(6, 6) which pairs of hypotheses a double's lanes may take by the rules, the players seen on
    the other tracks being `rest`: never one player on both, and both claimed only with 4 players.
    Read-only (it is cached)."""
    k = len(SPACE_CLASSES)
    new = np.ones(k, bool)
    new[list(rest)] = False
    both = len(rest) + new[:, None] + new[None, :] >= BOTH_LANES_PLAYERS
    allowed = both & ~np.eye(k, dtype=bool)
    allowed[0, :] = allowed[:, 0] = True
    allowed.flags.writeable = False
    return allowed


def lane_score(lane_scores: np.ndarray, own: int, other: int, spill: float) -> float:
    """Score of one lane of a double taking hypothesis `own` while the other lane takes `other`:
    an empty lane beside a claimed one may show the neighbour's cars, at a cost of `spill`."""
    if own == 0 and other != 0:
        return float(np.logaddexp(lane_scores[0], lane_scores[other] - spill))
    return float(lane_scores[own])


def pair_scores(lane_i: np.ndarray, lane_j: np.ndarray, spill: float) -> np.ndarray:
    """(6, 6) the score of a double's two lanes (their (6,) scores) for every pair of hypotheses:
    [a, b] = `lane_score`(lane_i, a, b) + `lane_score`(lane_j, b, a)."""
    def lanes(s: np.ndarray) -> np.ndarray:  # [own, other] = lane_score(s, own, other)
        m = np.repeat(np.asarray(s, float)[:, None], len(s), axis=1)
        m[0, 1:] = np.logaddexp(s[0], s[1:] - spill)
        return m
    return lanes(lane_i) + lanes(lane_j).T


def reading_score(scores: np.ndarray, choice: np.ndarray, board: Board, spill: float) -> float:
    """The tempered score of a whole reading: each single track's score of its hypothesis, each
    double's two lanes scored as a pair (`pair_scores`): what `settle_by_rules` seeks to keep high."""
    total = 0.0
    for t in board.tracks:
        o = board.double_ids[t.id]
        if o < 0:
            total += float(scores[t.id, choice[t.id]])
        elif o > t.id:
            total += float(pair_scores(scores[t.id], scores[o], spill)[choice[t.id], choice[o]])
    return total


def allowed(track_id: int, h: int, choice: np.ndarray, board: Board, used: dict | None = None,
            max_trains: int = DecideSettings().max_trains) -> bool:
    """Would giving track `track_id` to hypothesis `h` (0 = nobody) keep every rule, others fixed?"""
    if h == 0:
        return True
    t = board.tracks[track_id]
    oid = board.double_ids[track_id]
    if oid >= 0 and not pair_allowed(players_but(choice, track_id, oid))[h, choice[oid]]:
        return False  # one player per double; both tracks of a double only in 4-5 player games
    used = used if used is not None else trains_used(choice, board)
    mine = t.length if choice[track_id] == h else 0
    return used.get(h, 0) - mine + t.length <= max_trains


def give_up_moves(scores: np.ndarray, choice: np.ndarray, board: Board, c: int, used: dict,
                  max_trains: int) -> list[tuple[int, int, float]]:
    """(track, hypothesis, cost) for each claim of hypothesis `c` under `choice`: the likeliest other
    hypothesis it may take by the rules, others fixed, and the score that costs."""
    moves = []
    for t in board.tracks:
        if choice[t.id] != c:
            continue
        alt = scores[t.id].copy()
        alt[c] = -np.inf
        for k in np.argsort(-alt):
            if alt[k] == -np.inf:
                break
            if allowed(t.id, int(k), choice, board, used, max_trains):
                moves.append((t.id, int(k), float(scores[t.id, c] - alt[k])))
                break
    return moves


def cheapest_give_up(scores: np.ndarray, choice: np.ndarray, board: Board, c: int, used: dict,
                     max_trains: int) -> tuple[int, int] | None:
    """One of the claims hypothesis `c` gives up to get back under the car bound at the least cost in
    all (exactly: a 0/1 knapsack over its claims, a claim freeing its track's cars), as (track, the
    hypothesis it takes instead); None if nothing can be given up. The cost is of all
    the claims given up together, not of each: a short track's few spaces sum to a small margin, so
    the cheapest claim first would give up short tracks one after another where one longer, weaker
    claim frees the cars at once."""
    moves = give_up_moves(scores, choice, board, c, used, max_trains)
    excess = used[c] - max_trains
    # least[n]: the least cost of claims freeing n cars (at least `excess`, counted as `excess`).
    # The claim whose adding last lowered least[excess] is in the cheapest set found.
    least = np.full(excess + 1, np.inf)
    least[0] = 0.0
    freed = np.arange(excess + 1)
    last = None
    for i, (tid, _, cost) in enumerate(moves):
        with_it = np.full(excess + 1, np.inf)
        np.minimum.at(with_it, np.minimum(freed + board.tracks[tid].length, excess), least + cost)
        if with_it[excess] < least[excess]:
            last = i
        least = np.minimum(least, with_it)
    if last is None:
        return None
    tid, k, _ = moves[last]
    return tid, k


def settle_by_rules(scores: np.ndarray, choice: np.ndarray, board: Board,
                    cfg: DecideSettings = DecideSettings()) -> np.ndarray:
    """Change the fewest-cost decisions until no rule is broken; returns the new choice (100,)."""
    choice = np.array(choice, dtype=int)
    doubles = [(i, j) for i, j in enumerate(board.double_ids) if j > i]
    both_scores = [pair_scores(scores[i], scores[j], cfg.spill) for i, j in doubles]

    for _ in range(MAX_PASSES):
        changed = False
        # Doubles: best joint pair that keeps one player per double and, in 2-3 player games, one
        # claimed track per double.
        for (i, j), both in zip(doubles, both_scores):
            pair = np.where(pair_allowed(players_but(choice, i, j)), both, -np.inf)
            best_pair = tuple(int(v) for v in np.unravel_index(int(pair.argmax()), pair.shape))  # first best
            if best_pair != (choice[i], choice[j]):
                choice[i], choice[j] = best_pair
                changed = True
        # Trains: a player over the bound gives up the claims that cost least together.
        while True:
            used = trains_used(choice, board)
            over = [c for c, n in used.items() if n > cfg.max_trains]
            if not over:
                break
            move = cheapest_give_up(scores, choice, board, over[0], used, cfg.max_trains)
            if move is None:
                break
            choice[move[0]] = move[1]
            changed = True
        if not changed:
            break
    return _improve(scores, choice, board, cfg)


def _improve(scores: np.ndarray, choice: np.ndarray, board: Board, cfg: DecideSettings) -> np.ndarray:
    """Give each track, one at a time, its best hypothesis that breaks no rule with the others as
    they are, until nothing changes. Dropping claims one by one to get a player under the car bound
    can drop one more than needed (a later drop frees more cars); this takes the extra one back.
    A lane of a double is scored together with its neighbour (see `lane_score`)."""
    choice = choice.copy()
    other = board.double_ids

    def score(tid: int, h: int) -> float:
        o = other[tid]
        if o < 0:
            return float(scores[tid, h])
        return lane_score(scores[tid], h, int(choice[o]), cfg.spill) + lane_score(scores[o], int(choice[o]), h, cfg.spill)

    for _ in range(MAX_PASSES):
        changed = False
        for t in board.tracks:
            used = trains_used(choice, board)
            current = int(choice[t.id])
            best, best_score = current, score(t.id, current)
            for h in range(len(SPACE_CLASSES)):
                s = score(t.id, h)
                if s > best_score and allowed(t.id, h, choice, board, used, cfg.max_trains):
                    best, best_score = h, s
            if best != current:
                choice[t.id] = best
                changed = True
        if not changed:
            break
    return choice
