"""How sure each track is, and why a doubtful one is doubtful, in a player's words.

The rules help choose, but they make no reading surer (they hang on the other tracks' readings). A
track's confidence is the calibrated chance that its owner is right, from how far the photo's own
evidence puts it ahead of the next likeliest hypothesis, per space, and what the two were (its
contest: cars on print of their own colour, two car colours, cars or none, which lane): `doubt_chance`,
fitted on rendered photos (benchmarks/fit_doubt.py); under glare, by the glare's own calibration
where it says less (`glare_chance`). Under `DoubtSettings.below` the track is doubtful,
with a reason (`doubt_reason`); so is each claim of a player read on most of the tracks printed in
their own colour (`most_of_own_print`), and on a photo hard to read as a whole each track under a
surer standard (`hard_photo`).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from scoring.board import Board
from scoring.rules import CARS_IN_BOX, PLAYER_COLORS
from vision.decide.rules import pair_allowed, pair_scores, player_index, players_but
from vision.reading import DOUBTFUL_TRACKS, SPACE_CLASSES, Notice, TrackReading
from vision.settings import DecideSettings, DoubtSettings

# What a track's reading was decided between (its contest): the doubt is calibrated per kind, since
# the evidence means something else in each. OWN_PRINT: nobody or cars of the track's own printed
# colour (colour cannot tell them from the print, only the net can); TWO_COLOURS: two players'
# cars (dark blue, green and black cars come close in dim light); CAR_OR_NOT: nobody or cars of a
# colour other than the print's; WHICH_LANE: the same cars on this lane of a double or on the other
# (lanes printed in different colours): the neighbour's cars show on an empty lane, so the two
# readings stay close even where the photo is plain (`rules.lane_score`'s spill).
OWN_PRINT, TWO_COLOURS, CAR_OR_NOT, WHICH_LANE = 0, 1, 2, 3
DOUBT_KINDS = ("own print", "two colours", "car or not", "which lane")


def doubt_tracks(space_loglik: list[np.ndarray], scores: np.ndarray, choice: np.ndarray, board: Board,
                 space_probs: list[np.ndarray] | None = None, space_glare: list[np.ndarray] | None = None,
                 decide: DecideSettings = DecideSettings(), cfg: DoubtSettings = DoubtSettings(),
                 not_playing: dict[int, int] | None = None) -> list[TrackReading]:
    """Every track's reading: the owner `choice` gives it, its confidence (the calibrated chance the
    owner is right, less where the track is under glare: `track_confidence`), and for a doubtful
    track why. `scores`: the decision's tempered track scores; `space_probs` (optional) are kept in
    the readings; `space_glare` (optional, per track (length,) bool) says which spaces are under glare;
    `not_playing` (optional): the players the decision judged not in the game, with the cars read."""
    margin, runner, kinds = track_contests(scores, choice, board, decide.spill, cfg)
    other = board.double_ids
    out = []
    for t in board.tracks:
        c, r, kind = int(choice[t.id]), int(runner[t.id]), int(kinds[t.id])
        glared = space_glare is not None and under_glare(space_glare[t.id], cfg)
        conf = track_confidence(margin[t.id], t.length, kind, glared, cfg)
        # Where the evidence alone would be sure, the glare is what makes the track doubtful: its
        # reason is the one to give.
        doubtful = conf < cfg.below
        glare_says = glared and track_confidence(margin[t.id], t.length, kind, False, cfg) >= cfg.below
        reason = ""
        if doubtful and glare_says:
            reason = ("glare over this track can hide cars: check whether it holds any" if c == 0 else
                      f"glare over this track can wash cars out: check they are {SPACE_CLASSES[c]}")
        elif doubtful:
            o = other[t.id]
            beside = int(choice[o]) if o >= 0 else None
            space_best = np.asarray(space_loglik[t.id]).argmax(axis=1)
            reason = doubt_reason(t.color, c, r, kind, margin[t.id], int(np.sum(space_best == r)),
                                  len(space_best), beside, (not_playing or {}).get(r))
        probs = space_probs[t.id] if space_probs is not None else np.exp(space_loglik[t.id])
        out.append(TrackReading(track_id=t.id, a=t.a, b=t.b, color=t.color, length=t.length,
                                owner=None if c == 0 else SPACE_CLASSES[c], confidence=conf,
                                space_probs=np.asarray(probs, dtype=float), doubtful=bool(doubtful),
                                reason=reason))
    return hard_photo(most_of_own_print(out, board, cfg), cfg)


def most_of_own_print(tracks: list[TrackReading], board: Board,
                      cfg: DoubtSettings = DoubtSettings()) -> list[TrackReading]:
    """`tracks` with every claim of a player read on more than `cfg.own_print_most` of the tracks
    printed in their own colour marked doubtful: players seldom hold so many, and another copy's
    print of that colour, read as cars, makes just this reading. Confidences are left as the
    evidence gives them."""
    out = list(tracks)
    for colour in PLAYER_COLORS:
        printed = [t.id for t in board.tracks if t.color == colour]
        claimed = [i for i in printed if out[i].owner == colour]
        if len(claimed) <= cfg.own_print_most * len(printed):
            continue
        reason = (f"{colour} cars on {len(claimed)} of the {len(printed)} {colour} tracks, more than players hold: "
                  f"{colour} print read as cars?")
        for i in claimed:
            if not out[i].doubtful:
                out[i] = replace(out[i], doubtful=True, reason=reason)
    return out


def hard_photo_marks(confidence: np.ndarray, doubtful: np.ndarray,
                     cfg: DoubtSettings = DoubtSettings()) -> np.ndarray:
    """(100,) bool: the tracks a photo's doubt adds as hard to read as a whole: where at least
    `cfg.hard_photo` tracks are `doubtful`, those not yet doubtful and under `cfg.hard_below` sure.

    Why: a track's confidence is calibrated over all photos, but misreads come in groups (the light
    or camera that fools one track fools others), so on a photo with many doubtful tracks even the
    surer ones are less sure than the calibration says: of the flash renders the doubt is fitted
    on, 10 of 68 played photos hold 6 of the 16 wrong tracks left unmarked (of the usual renders, 6
    of 177 hold 7 of 10; a phone's HDR makes more such photos: docs/ablation.md)."""
    confidence, doubtful = np.asarray(confidence, float), np.asarray(doubtful, bool)
    if int(doubtful.sum()) < cfg.hard_photo:
        return np.zeros(len(doubtful), bool)
    return ~doubtful & (confidence < cfg.hard_below)


def hard_photo(tracks: list[TrackReading], cfg: DoubtSettings = DoubtSettings()) -> list[TrackReading]:
    """`tracks` with, on a photo hard to read as a whole, the surer tracks marked too
    (`hard_photo_marks`); confidences are left as the evidence gives them."""
    doubtful = np.array([t.doubtful for t in tracks])
    add = hard_photo_marks(np.array([t.confidence for t in tracks]), doubtful, cfg)
    # The count the warning gives too: every doubtful track, these included.
    reason = f"the photo is hard to read ({int((doubtful | add).sum())} tracks doubtful): check this one too"
    return [replace(t, doubtful=True, reason=reason) if a else t for t, a in zip(tracks, add)]


def doubt_warnings(tracks: list[TrackReading], cfg: DoubtSettings = DoubtSettings()) -> list[Notice]:
    """The warning that names the doubtful tracks, least sure first, each with why (none when no
    track is doubtful); on a photo hard to read as a whole it says how to take a better one."""
    doubtful = sorted((t for t in tracks if t.doubtful), key=lambda t: t.confidence)
    if not doubtful:
        return []
    names = "; ".join(f"{t.a}-{t.b} ({t.color}): {t.reason}" if t.reason else f"{t.a}-{t.b} ({t.color})"
                      for t in doubtful[:cfg.named])
    more = f"; and {len(doubtful) - cfg.named} more" if len(doubtful) > cfg.named else ""
    hard = (". The photo is hard to read as a whole: one from straight above, in even light and without "
            "flash, reads better" if len(doubtful) >= cfg.hard_photo else "")
    return [Notice(DOUBTFUL_TRACKS, f"{len(doubtful)} doubtful track(s), please check: {names}{more}{hard}")]


def track_confidence(margin: float, length: int, kind: int, glared: bool = False,
                     cfg: DoubtSettings = DoubtSettings()) -> float:
    """The chance a track's reading is right: 1 - `doubt_chance`, and on a track under glare
    (`under_glare`) at most 1 - `glare_chance`."""
    wrong = doubt_chance(margin, length, kind, cfg)
    return 1.0 - (max(wrong, glare_chance(margin, length, cfg)) if glared else wrong)


def glare_chance(margin: float, length: int, cfg: DoubtSettings = DoubtSettings()) -> float:
    """The chance a track under glare is read wrong, from its evidence margin per space, whatever
    its contest: sigmoid(glare_bias - glare_slope * m), fitted on the tracks under glare of the
    rendered photos (benchmarks/fit_doubt.py). Glare hides cars and washes them out, so a margin
    says less there; but where it is wide, the cars (or the bare print) showed through."""
    return calibrated_chance(margin_per_space(margin, length, cfg), cfg.glare_bias, cfg.glare_slope)


def under_glare(space_glare: np.ndarray, cfg: DoubtSettings = DoubtSettings()) -> bool:
    """Is a track under glare: at least `cfg.glare_share` of its spaces (`space_glare`, bool)?"""
    g = np.asarray(space_glare, bool)
    return bool(g.size) and float(g.mean()) >= cfg.glare_share


def track_contests(scores: np.ndarray, choice: np.ndarray, board: Board, spill: float = DecideSettings().spill,
                   cfg: DoubtSettings = DoubtSettings()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(margin (100,), runner-up (100,), contest kind (100,)) of each track: its `evidence_margins`
    and what its reading was decided between (`contest_kind`; a double's lanes swapped is
    WHICH_LANE where `cfg.which_lane`)."""
    margin, runner, swapped = evidence_margins(scores, choice, board, spill)
    kinds = np.array([contest_kind(t.color, int(choice[t.id]), int(runner[t.id]),
                                   bool(swapped[t.id]) and cfg.which_lane) for t in board.tracks])
    return margin, runner, kinds


def evidence_margins(scores: np.ndarray, choice: np.ndarray, board: Board,
                     spill: float = DecideSettings().spill) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(margin (100,), runner-up (100,), swapped (100,) bool): how far, in tempered log-odds, the
    photo puts each track's decided hypothesis ahead of the likeliest other one, that other one, and
    whether that other one is the same claims with the lanes of its double swapped.

    The photo's evidence alone: the car bound hangs on other tracks' readings, which may be wrong
    themselves (a track wrongly read green fills green's 48 cars and pushes the true green track to
    black), so it makes no reading surer. A double's two lanes are weighed as a pair
    (`rules.lane_score`) with one player per double and both lanes claimed only with 4 players seen in
    all (who plays is seen on many tracks); the runner-up is the best pair that gives this lane
    another hypothesis and the double another claim: on a double whose lanes are printed alike, the
    same two owners swapped between the lanes are the same claim (the same points and paths, and
    the checks compare such lanes as a pair), so which lane holds the cars is no doubt about the
    reading. Negative where the rules chose against the photo."""
    choice = np.asarray(choice, int)
    other = board.double_ids
    k = len(SPACE_CLASSES)
    margin, runner, swapped = np.zeros(len(choice)), np.zeros(len(choice), int), np.zeros(len(choice), bool)
    for t in board.tracks:
        i, c, o = t.id, int(choice[t.id]), other[t.id]
        if o < 0:
            alt = np.where(np.arange(k) != c, scores[i], -np.inf)
            runner[i] = int(alt.argmax())
            margin[i] = scores[i, c] - alt[runner[i]]
            continue
        pair = pair_scores(scores[i], scores[o], spill)
        allowed = pair_allowed(players_but(choice, i, o)).copy()
        allowed[c, :] = False
        if board.tracks[o].color == t.color:
            allowed[int(choice[o]), c] = False  # the same claim, swapped between the lanes
        masked = np.where(allowed, pair, -np.inf)
        best_a, best_b = np.unravel_index(int(masked.argmax()), masked.shape)  # the first best, row by row
        runner[i] = int(best_a)
        margin[i] = pair[c, int(choice[o])] - masked[best_a, best_b]
        swapped[i] = (int(best_a), int(best_b)) == (int(choice[o]), c)
    return margin, runner, swapped


def contest_kind(printed: str, owner: int, runner_up: int, swapped: bool = False) -> int:
    """OWN_PRINT, TWO_COLOURS, CAR_OR_NOT or WHICH_LANE (see DOUBT_KINDS) for a track printed
    `printed` read as hypothesis `owner` against `runner_up` (SPACE_CLASSES indices), that being the
    reading of its double with the lanes swapped or not (`swapped`, `evidence_margins`)."""
    if swapped:
        return WHICH_LANE
    if printed in PLAYER_COLORS and {owner, runner_up} <= {0, player_index(printed)}:
        return OWN_PRINT
    if owner and runner_up:
        return TWO_COLOURS
    return CAR_OR_NOT


def doubt_chance(margin: float, length: int, kind: int, cfg: DoubtSettings = DoubtSettings()) -> float:
    """The chance a track's reading is wrong, from its evidence margin (`evidence_margins`) per
    space and its contest kind: sigmoid(bias - slope * m), the fitted calibration (DoubtSettings).
    Per space, because a track's spaces share the light and the cars: a misread (green cars taken
    for black in dim light) runs the whole length of a track, so a long track's larger sum is no
    surer than a short one's."""
    return calibrated_chance(margin_per_space(margin, length, cfg), cfg.bias[kind], cfg.slope[kind])


def margin_per_space(margin, length, cfg: DoubtSettings = DoubtSettings()):
    """A track's evidence margin per space, held to `cfg.margin_range` (what the calibration reads;
    arrays of margins and lengths alike)."""
    lo, hi = cfg.margin_range
    return np.clip(np.asarray(margin, float) / np.maximum(length, 1), lo, hi)


def calibrated_chance(m: float, bias: float, slope: float) -> float:
    """sigmoid(bias - slope * m): a fitted calibration's chance of a misread at margin `m` a space."""
    return float(1.0 / (1.0 + np.exp(-(bias - slope * float(m)))))


def doubt_reason(printed: str, owner: int, runner_up: int, kind: int, margin: float, n_runner: int,
                 n_spaces: int, beside: int | None = None, runner_cars: int | None = None) -> str:
    """Why a track is doubtful, one short line in a player's words. `owner`, `runner_up`: the
    hypotheses read and next likeliest (SPACE_CLASSES indices); `n_runner` of its `n_spaces` spaces
    look most like the runner-up by themselves; `beside`: the owner read on the other lane of its
    double (0: nobody; None: a single route); `runner_cars`: where the runner-up is a player judged
    not in the game (`priors.unlikely_players`), the cars the photo showed them."""
    read, alt = _said(owner), _said(runner_up)
    if margin < 0 and runner_cars is not None:
        name = SPACE_CLASSES[runner_up]
        return (f"the photo looks more like {alt}, but only {runner_cars} {name} cars show, too few for a "
                f"finished game: is {name} playing?")
    if margin < 0:
        return f"the photo looks more like {alt}; the rules ({CARS_IN_BOX} cars a colour, doubles) gave it {read}"
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
