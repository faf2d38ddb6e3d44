"""Decide who owns each track from per-space evidence, then settle doubtful tracks by the rules.

In:  per track, a (length, 6) array of per-space log-likelihoods, one column per SPACE_CLASSES entry
     ("empty", then the five player colours).
Out: 100 `TrackReading`s (owner or None, confidence, doubtful flag and why).

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

Doubt: the rules help choose, but they make no reading surer (they hang on the other tracks'
readings). A track's confidence is the calibrated chance that its owner is right, from how far the
photo's own evidence puts it ahead of the next likeliest hypothesis, per space, and what the two
were (cars on print of their own colour, two car colours, cars or none): `doubt_chance`, fitted on
rendered photos (benchmarks/fit_doubt.py). Under `DecideConfig.doubt_below` the track is doubtful,
with a reason in a player's words (`doubt_reason`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scoring.board import Board, load_board
from scoring.rules import CARS_IN_BOX, PLAYER_COLORS
from vision.reading import SPACE_CLASSES, TrackReading

# What a track's reading was decided between (its contest): the doubt is calibrated per kind, since
# the evidence means something else in each. OWN_PRINT: nobody or cars of the track's own printed
# colour (colour cannot tell them from the print, only the net can); TWO_COLOURS: two players'
# cars (dark blue, green and black cars come close in dim light); CAR_OR_NOT: nobody or cars of a
# colour other than the print's.
OWN_PRINT, TWO_COLOURS, CAR_OR_NOT = 0, 1, 2
DOUBT_KINDS = ("own print", "two colours", "car or not")


@dataclass(frozen=True)
class DecideConfig:
    temperature: float = 2.0  # divides summed space log-likelihoods (spaces are correlated)
    empty_prior: float = 0.0  # log-prior added to the "empty" hypothesis of every track
    max_trains: int = CARS_IN_BOX  # scoring.rules.TRAINS_PER_PLAYER holds a reading to the rules
    unseen_player_prior: bool = True  # see unseen_player_penalty
    # Doubt (see `doubt_chance`). A track's confidence is the chance its reading is right:
    # P(wrong) = sigmoid(doubt_bias[kind] - doubt_slope[kind] * m), m the evidence margin per space
    # (`evidence_margins` / length, held to `margin_range`), one bias and slope per DOUBT_KINDS entry.
    # Fitted by benchmarks/fit_doubt.py on 157 rendered photos with their exact truth, 164 tracks
    # read wrong among them (`ttr render` seeds 7100 and 7150 usual, 7200 and 7250 hostile, 7400
    # five players, 7600 sloppy hands); never on the real photos, which stay the held-out check. Steeper slope: each
    # unit of margin buys more certainty (two car colours: the colour model and the net both see
    # them); own print: the net alone decides, so the same margin is worth less.
    doubt_bias: tuple[float, float, float] = (-0.26, 1.81, -1.24)
    doubt_slope: tuple[float, float, float] = (2.68, 6.3, 2.55)
    # Per-space margins past these say nothing more: below, the rules chose against the photo;
    # above, the photo is plain (and a few such tracks must not steer the fit).
    margin_range: tuple[float, float] = (-1.0, 4.0)
    # Doubtful when the confidence is below this, more than 1 chance in 20 that the reading is
    # wrong: the surest standard that marks at most 5 tracks a played photo of those renders (the
    # most a player should be asked to check; benchmarks/fit_doubt.py chooses it).
    doubt_below: float = 0.95
    # Glare the light normalisation could not even out washes cars towards white, where they look
    # like glared print (ReaderConfig.glare_paper_level says which spaces are under it). A track with
    # at least `glare_share` of its spaces under glare is right at most `glare_confidence` of the time:
    # (right + 1) / (n + 2) of such tracks on the doubt fit's renders (benchmarks/fit_doubt.py).
    glare_share: float = 0.5
    glare_confidence: float = 0.94


def track_scores(space_loglik: np.ndarray, cfg: DecideConfig) -> np.ndarray:
    """(6,) tempered log-score per hypothesis (empty, red, blue, green, yellow, black) for one track."""
    s = np.asarray(space_loglik, dtype=float).sum(axis=0) / cfg.temperature
    s[0] += cfg.empty_prior
    return s


def decide_choice(space_loglik: list[np.ndarray], board: Board,
                  cfg: DecideConfig = DecideConfig()) -> tuple[np.ndarray, np.ndarray]:
    """(scores (100, 6), choice (100,)): every track's tempered scores (with the unseen-player prior
    when on) and the hypothesis it is given, the rules kept."""
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
    return scores, choice


def decide_tracks(space_loglik: list[np.ndarray], space_probs: list[np.ndarray] | None = None,
                  board: Board | None = None, cfg: DecideConfig = DecideConfig(), *,
                  space_glare: list[np.ndarray] | None = None) -> list[TrackReading]:
    """Owner of every track (see module doc), its confidence (the calibrated chance the owner is
    right, see `doubt_chance`, held to `glare_confidence` on a track under glare), and for a
    doubtful track why (`doubt_reason`). `space_probs` (optional) is kept in the readings;
    `space_glare` (optional, per track (length,) bool) says which spaces are under glare."""
    board = board or load_board()
    scores, choice = decide_choice(space_loglik, board, cfg)
    margin, runner = evidence_margins(scores, choice, board)
    other = double_ids(board)
    out = []
    for t in board.tracks:
        c, r = int(choice[t.id]), int(runner[t.id])
        kind = contest_kind(t.color, c, r)
        glared = space_glare is not None and under_glare(space_glare[t.id], cfg)
        conf = track_confidence(margin[t.id], t.length, kind, glared, cfg)
        # Where the evidence alone says less than the glare, its reason is the one to give.
        glare_says = glared and conf == cfg.glare_confidence
        doubtful = conf < cfg.doubt_below
        reason = ""
        if doubtful and glare_says:
            reason = ("glare over this track can hide cars: check whether it holds any" if c == 0 else
                      f"glare over this track can wash cars out: check they are {SPACE_CLASSES[c]}")
        elif doubtful:
            o = other[t.id]
            beside = int(choice[o]) if o >= 0 else None
            space_best = np.asarray(space_loglik[t.id]).argmax(axis=1)
            reason = doubt_reason(t.color, c, r, kind, margin[t.id], int(np.sum(space_best == r)),
                                  len(space_best), beside)
        probs = space_probs[t.id] if space_probs is not None else np.exp(space_loglik[t.id])
        out.append(TrackReading(track_id=t.id, a=t.a, b=t.b, color=t.color, length=t.length,
                                owner=None if c == 0 else SPACE_CLASSES[c], confidence=conf,
                                space_probs=np.asarray(probs, dtype=float), doubtful=bool(doubtful),
                                reason=reason))
    return out


def track_confidence(margin: float, length: int, kind: int, glared: bool = False,
                     cfg: DecideConfig = DecideConfig()) -> float:
    """The chance a track's reading is right: 1 - `doubt_chance`, held to `cfg.glare_confidence`
    on a track under glare (`under_glare`)."""
    conf = 1.0 - doubt_chance(margin, length, kind, cfg)
    return min(conf, cfg.glare_confidence) if glared else conf


def under_glare(space_glare: np.ndarray, cfg: DecideConfig = DecideConfig()) -> bool:
    """Is a track under glare: at least `cfg.glare_share` of its spaces (`space_glare`, bool)?"""
    g = np.asarray(space_glare, bool)
    return bool(g.size) and float(g.mean()) >= cfg.glare_share


def evidence_margins(scores: np.ndarray, choice: np.ndarray, board: Board) -> tuple[np.ndarray, np.ndarray]:
    """(margin (100,), runner-up (100,)): how far, in tempered log-odds, the photo puts each track's
    decided hypothesis ahead of the likeliest other one, and that other one.

    The photo's evidence alone: the car bound hangs on other tracks' readings, which may be wrong
    themselves (a track wrongly read green fills green's 48 cars and pushes the true green track to
    black), so it makes no reading surer. A double's two lanes are weighed as a pair
    (`_lane_score`) with one player per double and both lanes claimed only with 4 players seen in
    all (who plays is seen on many tracks); the runner-up is the best pair that gives this lane
    another hypothesis and the double another claim: on a double whose lanes are printed alike, the
    same two owners swapped between the lanes are the same claim (the same points and paths, and
    the checks compare such lanes as a pair), so which lane holds the cars is no doubt about the
    reading. Negative where the rules chose against the photo."""
    choice = np.asarray(choice, int)
    other = double_ids(board)
    k = len(SPACE_CLASSES)
    margin, runner = np.zeros(len(choice)), np.zeros(len(choice), int)
    for t in board.tracks:
        i, c, o = t.id, int(choice[t.id]), other[t.id]
        if o < 0:
            alt = np.where(np.arange(k) != c, scores[i], -np.inf)
            runner[i] = int(alt.argmax())
            margin[i] = scores[i, c] - alt[runner[i]]
            continue
        pair = _pair_scores(scores[i], scores[o])
        allowed = _pair_allowed(_players_but(choice, i, o)).copy()
        allowed[c, :] = False
        if board.tracks[o].color == t.color:
            allowed[int(choice[o]), c] = False  # the same claim, swapped between the lanes
        masked = np.where(allowed, pair, -np.inf)
        best_a, best_b = np.unravel_index(int(masked.argmax()), masked.shape)  # the first best, row by row
        runner[i] = int(best_a)
        margin[i] = pair[c, int(choice[o])] - masked[best_a, best_b]
    return margin, runner


def contest_kind(printed: str, owner: int, runner_up: int) -> int:
    """OWN_PRINT, TWO_COLOURS or CAR_OR_NOT (see DOUBT_KINDS) for a track printed `printed` read
    as hypothesis `owner` against `runner_up` (SPACE_CLASSES indices)."""
    if printed in PLAYER_COLORS and {owner, runner_up} <= {0, player_index(printed)}:
        return OWN_PRINT
    if owner and runner_up:
        return TWO_COLOURS
    return CAR_OR_NOT


def doubt_chance(margin: float, length: int, kind: int, cfg: DecideConfig = DecideConfig()) -> float:
    """The chance a track's reading is wrong, from its evidence margin (`evidence_margins`) per
    space and its contest kind: sigmoid(bias - slope * m), the fitted calibration (DecideConfig).
    Per space, because a track's spaces share the light and the cars: a misread (green cars taken
    for black in dim light) runs the whole length of a track, so a long track's larger sum is no
    surer than a short one's."""
    lo, hi = cfg.margin_range
    m = float(np.clip(margin / max(length, 1), lo, hi))
    z = cfg.doubt_bias[kind] - cfg.doubt_slope[kind] * m
    return float(1.0 / (1.0 + np.exp(-z)))


def doubt_reason(printed: str, owner: int, runner_up: int, kind: int, margin: float, n_runner: int,
                 n_spaces: int, beside: int | None = None) -> str:
    """Why a track is doubtful, one short line in a player's words. `owner`, `runner_up`: the
    hypotheses read and next likeliest (SPACE_CLASSES indices); `n_runner` of its `n_spaces` spaces
    look most like the runner-up by themselves; `beside`: the owner read on the other lane of its
    double (0: nobody; None: a single route)."""
    read, alt = _said(owner), _said(runner_up)
    if margin < 0:
        return f"the photo looks more like {alt}; the rules (48 cars a colour, doubles) gave it {read}"
    if kind == OWN_PRINT:
        return f"{printed} cars on a {printed} track look like the print: is it {read} or {alt}?"
    if kind == TWO_COLOURS:
        return f"two colours close: {read} and {alt} look alike in this photo"
    if owner == 0 and beside and runner_up == beside:
        return f"the {alt} of the next lane may sit on this one"
    if beside is not None:
        return f"two lanes side by side: {read} or {alt} on this one?"
    if owner == 0:
        if n_runner:
            return f"{n_runner} of {n_spaces} spaces look like {alt}: a car off its space?"
        return f"it may hold {alt} the photo shows faintly (dim light or glare?)"
    if n_runner:
        return f"{n_runner} of {n_spaces} spaces look empty: a car off its space?"
    return f"the {read} show faintly (dim light or glare?)"


def _said(h: int) -> str:
    return "nobody" if h == 0 else f"{SPACE_CLASSES[h]} cars"


def _players_but(choice: np.ndarray, i: int, j: int) -> frozenset[int]:
    """The players `choice` shows on the tracks other than `i` and `j`."""
    seen = np.bincount(choice, minlength=len(SPACE_CLASSES))
    seen[choice[i]] -= 1
    seen[choice[j]] -= 1
    return frozenset((np.flatnonzero(seen[1:]) + 1).tolist())


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
    if oid >= 0 and not _pair_allowed(_players_but(choice, track_id, oid))[h, choice[oid]]:
        return False  # one player per double; both tracks of a double only in 4-5 player games
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
    pair_scores = [_pair_scores(scores[i], scores[j]) for i, j in doubles]

    for _ in range(5):  # player count depends on the choices; a few passes reach a fixed point
        changed = False
        # Doubles: best joint pair that keeps one player per double and, in 2-3 player games, one
        # claimed track per double.
        for (i, j), both in zip(doubles, pair_scores):
            pair = np.where(_pair_allowed(_players_but(choice, i, j)), both, -np.inf)
            best_pair = tuple(int(v) for v in np.unravel_index(int(pair.argmax()), pair.shape))  # first best
            if best_pair != (choice[i], choice[j]):
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


def _pair_scores(lane_i: np.ndarray, lane_j: np.ndarray) -> np.ndarray:
    """(6, 6) the score of a double's two lanes (their (6,) scores) for every pair of hypotheses:
    [a, b] = `_lane_score`(lane_i, a, b) + `_lane_score`(lane_j, b, a)."""
    def lanes(s: np.ndarray) -> np.ndarray:  # [own, other] = _lane_score(s, own, other)
        m = np.repeat(np.asarray(s, float)[:, None], len(s), axis=1)
        m[0, 1:] = np.logaddexp(s[0], s[1:] - SPILL)
        return m
    return lanes(lane_i) + lanes(lane_j).T


@lru_cache(maxsize=64)
def _pair_allowed(rest: frozenset[int]) -> np.ndarray:
    """(6, 6) which pairs of hypotheses a double's lanes may take by the rules, the players seen on
    the other tracks being `rest`: never one player on both, and both claimed only with 4 players.
    Read-only (it is cached)."""
    k = len(SPACE_CLASSES)
    new = np.ones(k, bool)
    new[list(rest)] = False
    both = len(rest) + new[:, None] + new[None, :] >= 4
    allowed = both & ~np.eye(k, dtype=bool)
    allowed[0, :] = allowed[:, 0] = True
    allowed.flags.writeable = False
    return allowed


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
