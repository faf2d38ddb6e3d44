"""A prior from how games go, on top of the photo's evidence and the rules."""
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
