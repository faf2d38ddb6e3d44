"""Priors from how games go, on top of the photo's evidence and the rules."""
from __future__ import annotations

import numpy as np

from scoring.board import Board
from scoring.rules import PLAYER_COLORS
from vision.reading import SPACE_CLASSES


def unseen_player_penalty(choice: np.ndarray, board: Board) -> np.ndarray:
    """(100, 6) log-prior to subtract from the track scores: cars of a player whom no other track
    shows, on the tracks printed in that player's own colour.

    Cars on a track printed in their own colour are the one thing colour cannot confirm (the net
    alone tells them from the print), and they are where a reader errs: a black print read as black
    cars. A player who is in the game has claimed tracks of many printed colours; that all of a
    player's k claims are printed in the player's own colour has prior probability about q^k, q the
    share of tracks printed in that colour (7 of 100). So unless a player is seen on some track
    printed in another colour (gray included), each claim of theirs on a track of their own colour
    costs log(1/q), about 2.7, more than a coin-flip reading. The reading keeps such a claim when
    the evidence is clearly stronger; it is then reported as doubtful, like every claim on a track
    of its own colour that is not near certain."""
    colours = np.array([t.color for t in board.tracks])
    total = len(board.tracks)
    penalty = np.zeros((total, len(SPACE_CLASSES)))
    for c, name in enumerate(PLAYER_COLORS, start=1):
        own = colours == name
        if not own.any() or np.any((choice == c) & ~own):
            continue  # no track of that colour, or the player is seen elsewhere
        penalty[own, c] = np.log(total / own.sum())
    return penalty


_TOUCHING: dict[int, tuple[Board, np.ndarray]] = {}


def touching(board: Board) -> np.ndarray:
    """(100, 100) float: 1 where two tracks share a city (a track does not touch itself). Read-only
    (cached per board object)."""
    cached = _TOUCHING.get(id(board))
    if cached is None or cached[0] is not board:
        t = board.tracks
        m = np.array([[float(u.id != v.id and bool({u.a, u.b} & {v.a, v.b})) for v in t] for u in t])
        m.flags.writeable = False
        cached = _TOUCHING[id(board)] = (board, m)
    return cached[1]


def lone_claim_penalty(choice: np.ndarray, board: Board, cost: float) -> np.ndarray:
    """(100, 6) log-prior to subtract from the track scores: `cost` for a player's cars on a track
    that touches none of that player's other claims under `choice`.

    Players claim tracks to join the cities of their tickets, so a player's claims touch one
    another: in the games of the fit sets, a track none of whose neighbours a player owns is the
    player's at odds about e^`cost` lower than a track beside one of their claims
    (`benchmarks/fit_lone_claim.py`). A misread stands alone far more often (a print read as cars,
    a colour read as another player's): so a lone claim must be clearly surer than a coin flip."""
    choice = np.asarray(choice)
    penalty = np.zeros((len(board.tracks), len(SPACE_CLASSES)))
    if not cost:
        return penalty
    near = touching(board)
    for c in range(1, len(SPACE_CLASSES)):
        penalty[near @ (choice == c) == 0, c] = cost  # a player with no claims yet: every track
    return penalty
