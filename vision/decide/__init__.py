"""Decide who owns each track from per-space evidence, under the game's rules, and how sure it is.

In:  per track, a (length, 6) array of per-space log-likelihoods, one column per SPACE_CLASSES entry
     ("empty", then the five player colours).
Out: `decide`: every track's tempered scores and the hypothesis it is given (`rules`, `priors`);
     `vision.decide.doubt.doubt_tracks`: 100 `TrackReading`s (owner or None, confidence, doubtful
     flag and why); `decide_tracks`: both.

Why per track: a claimed track is covered end to end by ONE player's cars, so the evidence of its
spaces adds up (sum of log-likelihoods per hypothesis), and one bad space cannot make a track
half-claimed. Spaces are not independent (same light, same crop errors), so the sums are tempered
before they become probabilities.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from scoring.board import Board
from vision.decide.doubt import doubt_tracks
from vision.decide.priors import unlikely_players, unseen_player_penalty
from vision.decide.rules import settle_by_rules
from vision.reading import TrackReading
from vision.settings import DecideSettings, DoubtSettings

PRIOR_PASSES = 2  # who is seen depends on the choice; a second pass is almost never needed


@dataclass(frozen=True)
class Decision:
    """Every track's tempered scores (with the prior applied) and the hypothesis it is given."""

    scores: np.ndarray  # (100, 6)
    choice: np.ndarray  # (100,) SPACE_CLASSES index per track
    not_playing: dict[int, int] = field(default_factory=dict)  # player column: cars read, judged not in the game


def track_scores(space_loglik: np.ndarray, cfg: DecideSettings = DecideSettings()) -> np.ndarray:
    """(6,) tempered log-score per hypothesis (empty, red, blue, green, yellow, black) for one track."""
    return np.asarray(space_loglik, dtype=float).sum(axis=0) / cfg.temperature


def decide(space_loglik: list[np.ndarray], board: Board, cfg: DecideSettings = DecideSettings()) -> Decision:
    """Every track's tempered scores (with the unseen-player prior when on) and the hypothesis it
    is given, the rules kept, and a player with too few cars for a finished game taken out
    (`priors.unlikely_players`)."""
    if len(space_loglik) != len(board.tracks):
        raise ValueError(f"{len(space_loglik)} tracks of evidence, the board has {len(board.tracks)}")
    scores = np.stack([track_scores(ll, cfg) for ll in space_loglik])  # (100, 6)
    choice = settle_by_rules(scores, scores.argmax(axis=1), board, cfg)
    if cfg.unseen_player_prior:
        for _ in range(PRIOR_PASSES):
            adjusted = scores - unseen_player_penalty(choice, board)
            new = settle_by_rules(adjusted, adjusted.argmax(axis=1), board, cfg)
            done = np.array_equal(new, choice)
            choice = new
            if done:
                break
        scores = adjusted
    choice, not_playing = unlikely_players(scores, choice, board, cfg)
    return Decision(scores, choice, not_playing)


def decide_tracks(space_loglik: list[np.ndarray], board: Board, space_probs: list[np.ndarray] | None = None,
                  space_glare: list[np.ndarray] | None = None, cfg: DecideSettings = DecideSettings(),
                  doubt: DoubtSettings = DoubtSettings()) -> tuple[Decision, list[TrackReading]]:
    """decide, then doubt (`vision.decide.doubt.doubt_tracks`): the decision and every track's reading."""
    decision = decide(space_loglik, board, cfg)
    tracks = doubt_tracks(space_loglik, decision.scores, decision.choice, board, space_probs, space_glare, cfg, doubt,
                          decision.not_playing)
    return decision, tracks
