"""Decide who owns each track from per-space evidence, then settle doubtful tracks by the rules.

In:  per track, a (length, 6) array of per-space log-likelihoods, one column per SPACE_CLASSES entry
     ("empty", then the five player colours).
Out: 100 `TrackReading`s (owner or None, confidence, doubtful flag).

Why per track: a claimed track is covered end to end by ONE player's cars, so the evidence of its
spaces adds up (sum of log-likelihoods per hypothesis), and one bad space cannot make a track
half-claimed. Spaces are not independent (same light, same crop errors), so the sums are tempered
before they become probabilities.

Rules used to settle doubtful tracks (the best joint assignment that breaks none of them wins):
- one player cannot own both tracks of a double route;
- both tracks of a double are claimed only in 4-5 player games (players = colours seen);
- a player has at most 48 cars on the board: 45 trains by the rules, but the box holds 48 of each
  colour (3 spares) and real boards show them (the development photos have players at 46-48), so
  the physical bound is the one a photo can be held to.
And one prior from how games go: a player seen only on tracks printed in the player's own colour is
unlikely (see `unseen_player_penalty`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.board import Board, load_board
from scoring.rules import CARS_IN_BOX, PLAYER_COLORS
from vision.reading import SPACE_CLASSES, TrackReading

# A track whose decided owner has a posterior below this is reported as doubtful.
DOUBT_BELOW = 0.9


@dataclass(frozen=True)
class DecideConfig:
    temperature: float = 2.0  # divides summed space log-likelihoods (spaces are correlated)
    empty_prior: float = 0.0  # log-prior added to the "empty" hypothesis of every track
    doubt_below: float = DOUBT_BELOW
    same_colour_doubt_below: float = 0.999  # the same, between empty and cars of the printed colour
    max_trains: int = CARS_IN_BOX  # scoring.rules.TRAINS_PER_PLAYER holds a reading to the rules
    unseen_player_prior: bool = True  # see unseen_player_penalty


def track_scores(space_loglik: np.ndarray, cfg: DecideConfig) -> np.ndarray:
    """(6,) tempered log-score per hypothesis (empty, red, blue, green, yellow, black) for one track."""
    s = np.asarray(space_loglik, dtype=float).sum(axis=0) / cfg.temperature
    s[0] += cfg.empty_prior
    return s


def _posterior(scores: np.ndarray, allowed: np.ndarray | None = None) -> np.ndarray:
    s = np.where(allowed, scores, -np.inf) if allowed is not None else scores
    m = s.max()
    p = np.exp(s - m)
    return p / p.sum()


def decide_tracks(space_loglik: list[np.ndarray], space_probs: list[np.ndarray] | None = None,
                  board: Board | None = None, cfg: DecideConfig = DecideConfig()) -> list[TrackReading]:
    """Owner of every track (see module doc). `space_probs` (optional) is kept in the readings."""
    board = board or load_board()
    if len(space_loglik) != len(board.tracks):
        raise ValueError(f"{len(space_loglik)} tracks of evidence, the board has {len(board.tracks)}")
    scores = np.stack([track_scores(ll, cfg) for ll in space_loglik])  # (100, 6)
    choice = settle_by_rules(scores, scores.argmax(axis=1), board, cfg.max_trains)
    if cfg.unseen_player_prior:
        for _ in range(2):  # who is seen depends on the choice; the second pass is almost never needed
            adjusted = scores - unseen_player_penalty(choice, board)
            new = settle_by_rules(adjusted, adjusted.argmax(axis=1), board, cfg.max_trains)
            done = np.array_equal(new, choice)
            choice = new
            if done:
                break
        scores = adjusted

    out = []
    for t in board.tracks:
        allowed = _allowed_hypotheses(t.id, choice, board, cfg.max_trains)
        post = _posterior(scores[t.id], allowed)
        c = int(choice[t.id])
        conf = float(post[c])
        probs = space_probs[t.id] if space_probs is not None else np.exp(space_loglik[t.id])
        doubtful = conf < cfg.doubt_below
        if t.color in PLAYER_COLORS and c in (0, player_index(t.color)):
            # Cars of a track's own printed colour are the hardest to see (same colour as the
            # print): hold "empty or not" there to a stricter standard before calling it sure.
            pc = player_index(t.color)
            doubtful |= post[c] / max(post[0] + post[pc], 1e-12) < cfg.same_colour_doubt_below
        out.append(TrackReading(track_id=t.id, a=t.a, b=t.b, color=t.color, length=t.length,
                                owner=None if c == 0 else SPACE_CLASSES[c], confidence=conf,
                                space_probs=np.asarray(probs, dtype=float), doubtful=bool(doubtful)))
    return out


def _players(choice: np.ndarray) -> set[int]:
    return set(np.unique(choice).tolist()) - {0}


def _allowed_hypotheses(track_id: int, choice: np.ndarray, board: Board,
                        max_trains: int = CARS_IN_BOX) -> np.ndarray:
    """Which hypotheses track `track_id` may take given every other track's decision."""
    used = trains_used(choice, board)
    return np.array([_ok(track_id, h, choice, board, used, max_trains) for h in range(len(SPACE_CLASSES))])


def double_ids(board: Board) -> tuple[int, ...]:
    """The other track of each track's double route, or -1 (`Board.double_ids`, kept on the board)."""
    return board.double_ids


def _ok(track_id: int, h: int, choice: np.ndarray, board: Board, used: dict | None = None,
        max_trains: int = CARS_IN_BOX) -> bool:
    """Would giving track `track_id` to hypothesis `h` (0 = nobody) break a rule, others fixed?"""
    if h == 0:
        return True
    t = board.tracks[track_id]
    oid = double_ids(board)[track_id]
    if oid >= 0 and choice[oid] != 0:
        if choice[oid] == h:
            return False  # one player per double
        trial = choice.copy()
        trial[track_id] = h
        if len(_players(trial)) < 4:
            return False  # both tracks of a double only in 4-5 player games
    used = used if used is not None else trains_used(choice, board)
    mine = t.length if choice[track_id] == h else 0
    return used.get(h, 0) - mine + t.length <= max_trains


def trains_used(choice: np.ndarray, board: Board) -> dict[int, int]:
    """Trains each hypothesis (player column) has on the board under `choice`."""
    lengths = _lengths(board)
    n = np.bincount(np.asarray(choice, int), weights=lengths, minlength=len(SPACE_CLASSES))
    return {c: int(n[c]) for c in range(1, len(n)) if n[c]}


def _lengths(board: Board) -> np.ndarray:
    return np.array([t.length for t in board.tracks], float)


def settle_by_rules(scores: np.ndarray, choice: np.ndarray, board: Board,
                    max_trains: int = CARS_IN_BOX) -> np.ndarray:
    """Change the fewest-cost decisions until no rule is broken; returns the new choice (100,)."""
    choice = np.array(choice, dtype=int)
    doubles = [(i, j) for i, j in enumerate(double_ids(board)) if j > i]

    for _ in range(5):  # player count depends on the choices; a few passes reach a fixed point
        changed = False
        # Doubles: best joint pair that keeps one player per double and, in 2-3 player games, one
        # claimed track per double.
        for i, j in doubles:
            rest_players = _players(np.delete(choice, [i, j]))
            best, best_pair = -np.inf, (choice[i], choice[j])
            for ci in range(len(SPACE_CLASSES)):
                for cj in range(len(SPACE_CLASSES)):
                    if ci and cj:
                        if ci == cj or len(rest_players | {ci, cj}) < 4:
                            continue
                    s = _lane_score(scores[i], ci, cj) + _lane_score(scores[j], cj, ci)
                    if s > best:
                        best, best_pair = s, (ci, cj)
            if tuple(best_pair) != (choice[i], choice[j]):
                choice[i], choice[j] = best_pair
                changed = True
        # Trains: a player over the bound loses the claim that costs least to give up.
        while True:
            used = trains_used(choice, board)
            over = [c for c, n in used.items() if n > max_trains]
            if not over:
                break
            c = over[0]
            best_cost, best_move = np.inf, None
            for t in board.tracks:
                if choice[t.id] != c:
                    continue
                alt = scores[t.id].copy()
                alt[c] = -np.inf
                for k in np.argsort(-alt):
                    if alt[k] == -np.inf:
                        break
                    if not _ok(t.id, int(k), choice, board, used, max_trains):
                        continue
                    cost = scores[t.id, c] - alt[k]
                    if cost < best_cost:
                        best_cost, best_move = cost, (t.id, int(k))
                    break
            if best_move is None:
                break
            choice[best_move[0]] = best_move[1]
            changed = True
        if not changed:
            break
    return _improve(scores, choice, board, max_trains)


def _improve(scores: np.ndarray, choice: np.ndarray, board: Board, max_trains: int) -> np.ndarray:
    """Give each track, one at a time, its best hypothesis that breaks no rule with the others as
    they are, until nothing changes. Dropping claims one by one to get a player under the car bound
    can drop one more than needed (a later drop frees more cars); this takes the extra one back.
    A lane of a double is scored together with its neighbour (see `_lane_score`)."""
    choice = choice.copy()
    other = double_ids(board)

    def score(tid: int, h: int) -> float:
        o = other[tid]
        if o < 0:
            return float(scores[tid, h])
        return _lane_score(scores[tid], h, int(choice[o])) + _lane_score(scores[o], int(choice[o]), h)

    for _ in range(5):
        changed = False
        for t in board.tracks:
            used = trains_used(choice, board)
            current = int(choice[t.id])
            best, best_score = current, score(t.id, current)
            for h in range(len(SPACE_CLASSES)):
                s = score(t.id, h)
                if s > best_score and _ok(t.id, h, choice, board, used, max_trains):
                    best, best_score = h, s
            if best != current:
                choice[t.id] = best
                changed = True
        if not changed:
            break
    return choice


SPILL = 2.0  # tempered log-likelihood cost of a lane showing its neighbour's cars instead of print


def _lane_score(lane_scores: np.ndarray, own: int, other: int) -> float:
    """Score of one lane of a double taking hypothesis `own` while the other lane takes `other`.

    The lanes lie side by side, so cars laid a little off their lane show on the neighbour's
    spaces: an empty lane next to a claimed one may look like the neighbour's colour."""
    if own == 0 and other != 0:
        return float(np.logaddexp(lane_scores[0], lane_scores[other] - SPILL))
    return float(lane_scores[own])


def unseen_player_penalty(choice: np.ndarray, board: Board) -> np.ndarray:
    """(100, 6) log-prior to subtract from the track scores: cars of a player whom no other track
    shows, on the tracks printed in that player's own colour.

    Cars on a track printed in their own colour are the one thing colour cannot confirm (the net
    alone tells them from the print), and they are where the reader errs: a black print read as
    black cars. A player who is in the game has claimed tracks of many printed colours; that all
    of a player's k claims are printed in the player's own colour has prior probability about q^k,
    q the share of tracks printed in that colour (7 of 100). So unless a player is seen on some
    track printed in another colour (gray included), each claim of theirs on a track of their own
    colour costs log(1/q), about 2.7, more than a coin-flip reading. The reading keeps such a claim
    when the evidence is clearly stronger; it is then reported as doubtful, like every claim on a
    track of its own colour that is not near certain."""
    colours = np.array([t.color for t in board.tracks])
    total = len(board.tracks)
    penalty = np.zeros((total, len(SPACE_CLASSES)))
    for c, name in enumerate(PLAYER_COLORS, start=1):
        own = colours == name
        if not own.any() or np.any((choice == c) & ~own):
            continue  # no track of that colour, or the player is seen elsewhere
        penalty[own, c] = np.log(total / own.sum())
    return penalty


def player_index(color: str) -> int:
    """Column of a player colour in SPACE_CLASSES."""
    return 1 + PLAYER_COLORS.index(color)
