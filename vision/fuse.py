"""Fuse the evidence sources into one per-space answer.

In:  each source's (N, 6) log-likelihoods over SPACE_CLASSES, with its weight (`FuseSettings`).
Out: `SpaceEvidence`: the weighted sum and its per-space probabilities, with what the sources were.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SpaceEvidence:
    """Everything the photo says about each space of one flattened board (for deciding, drawing
    and calibrating)."""

    quads_px: np.ndarray  # (N, 4, 2) where each space was read on the flattened board
    track_ids: np.ndarray  # (N,)
    lab: np.ndarray  # (N, 3) each space's colour where it is printed (median Lab)
    loglik: np.ndarray  # (N, 6) fused
    probs: np.ndarray  # (N, 6) per-space probabilities (the normalised fused likelihood)
    net_probs: np.ndarray | None = None  # (N, 6) the net's answer, after its second judgements
    glare: np.ndarray | None = None  # (N,) bool: the space is under glare
    sources: dict = field(default_factory=dict)  # {name: (N, 6) log-likelihood} as fused, weights applied

    def __post_init__(self):
        n = len(self.track_ids)
        if self.quads_px.shape != (n, 4, 2) or self.loglik.shape != (n, 6) or self.probs.shape != (n, 6):
            raise ValueError("SpaceEvidence fields must have one row per space")
        if self.glare is not None and np.shape(self.glare) != (n,):
            raise ValueError("SpaceEvidence.glare must have one entry per space")


def fuse(loglik_parts: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Weighted sum of (N, 6) log-likelihood arrays."""
    total = None
    for ll, w in loglik_parts:
        total = ll * w if total is None else total + ll * w
    return total


def space_probs(loglik: np.ndarray) -> np.ndarray:
    """(N, 6) each space's probabilities from its log-likelihoods (a flat prior)."""
    p = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)
