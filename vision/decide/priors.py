"""Priors from how games go, on top of the photo's evidence and the rules."""
from __future__ import annotations

import numpy as np

from scoring.board import Board
from scoring.rules import LAST_ROUND_TRAINS, PLAYER_COLORS, TRAINS_PER_PLAYER
from vision.decide.rules import reading_score, settle_by_rules, trains_used
from vision.reading import SPACE_CLASSES
from vision.settings import DecideSettings


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


def few_cars_cost(cars: int, prior: tuple[float, ...]) -> float:
    """The log prior odds against a player of a finished game having only `cars` cars on the board
    (`DecideSettings.few_cars_prior`, per count; 0 past its end)."""
    return float(prior[cars]) if 0 <= cars < len(prior) else 0.0


def game_is_over(cars: dict[int, int]) -> bool:
    """Do the cars each player has on the board (`rules.trains_used`) show a finished game: a player
    with the cars that began the last round?"""
    return max(cars.values(), default=0) >= TRAINS_PER_PLAYER - LAST_ROUND_TRAINS


def unlikely_players(scores: np.ndarray, choice: np.ndarray, board: Board,
                     cfg: DecideSettings = DecideSettings()) -> tuple[np.ndarray, dict[int, int]]:
    """(the choice, {player column: cars read}) with each player judged not in the game taken out.

    Why: a finished game leaves every player many cars on the board (of the game model's players,
    1 in 1,000 has 11 or fewer: `few_cars_cost`), but a light that turns black cars blue on a few
    tracks invents a player with a handful, who then also lets both lanes of a double be claimed in
    a game of 2 or 3. On a board that shows a finished game (`game_is_over`, read with the player
    or without: their cars may be the trigger's), a player seen with few cars is weighed as a whole
    against the game's odds: their claims all go to their next likeliest owners among the other
    players (or nobody) under the rules, and if that costs the reading less than the prior against
    so few cars, the player is not in the game. One at a time, the cheapest first; the rules hold
    throughout (`settle_by_rules`)."""
    choice = np.array(choice, dtype=int)
    dropped: dict[int, int] = {}
    if not cfg.few_cars_prior:
        return choice, dropped
    while True:
        playing = trains_used(choice, board)
        few = [(c, cars, few_cars_cost(cars, cfg.few_cars_prior)) for c, cars in playing.items()]
        few = [f for f in few if f[2] > 0]
        if not few:
            return choice, dropped  # every player has many cars: most photos stop here
        over = game_is_over(playing)
        here = reading_score(scores, choice, board, cfg.spill)
        best = None
        for c, cars, odds in few:
            # Their claims go to the other players or to nobody: the light made them, not a player.
            without = np.full_like(scores, -np.inf)
            keep = [0] + [p for p in playing if p != c]
            without[:, keep] = scores[:, keep]
            alt = settle_by_rules(without, without.argmax(axis=1), board, cfg)
            if not (over or game_is_over(trains_used(alt, board))):
                continue  # the odds are those of a finished game
            loss = here - reading_score(scores, alt, board, cfg.spill)
            if loss < odds and (best is None or loss - odds < best[0]):
                best = (loss - odds, c, cars, alt)
        if best is None:
            return choice, dropped
        _, c, cars, choice = best
        dropped[c] = cars
