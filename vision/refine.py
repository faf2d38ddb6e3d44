"""A second judgement of the net, where its first look may mislead the reading (`REFINEMENTS`;
it can be switched off in `RefineSettings`):

**second look**: the net's answer averaged with its answer on the half-turned patch, wherever the
reading may turn on the net: where the print is a player's colour (colour cannot tell a car from
its print) and where the colours and the net's first look disagree on whether a car is there. A
space looks the same from either end and the net was trained towards the mean of both
(`models/distill.py`), yet one look leans on where in the patch things stand (a car set a few mm
off its space, its dark side in the patch's middle).

It takes the net's answers so far ((N, 6) over SPACE_CLASSES) and returns them refined.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.evidence.net import SpaceClassifier, half_turned
from vision.spaces import SpaceSamples

REFINEMENTS = ("second look",)


@dataclass(frozen=True)
class BoardSpaces:
    """What the refinements know of the board's spaces (fixed for a board, from the template)."""

    track_ids: np.ndarray  # (N,)
    index: np.ndarray  # (N,) space number along its track
    printed: np.ndarray  # (N,) each space's printed colour name
    player_printed: np.ndarray  # (N,) bool: printed in a player's colour
    other_lane: np.ndarray  # (N,) the other lane of the space's double, as a track id (-1 on single routes)


def looks(net: SpaceClassifier, patches: np.ndarray, again: np.ndarray, probs: np.ndarray | None = None) -> np.ndarray:
    """The net's answer on `patches` (its first look `probs` where already known), averaged with its
    answer on the half-turned patch where `again` ((N,) bool)."""
    probs = net.predict(patches) if probs is None else probs.copy()
    if again.any():
        probs[again] = (probs[again] + net.predict(half_turned(patches[again]))) / 2
    return probs


def second_look(net: SpaceClassifier, samples: SpaceSamples, probs: np.ndarray, spaces: BoardSpaces,
                colour_ll: np.ndarray) -> np.ndarray:
    """The second look (see module doc): `colour_ll`, the evidence but the net's, says where a car is."""
    again = np.array(spaces.player_printed, bool)
    again |= (probs[:, 0] < 0.5) != (colour_ll[:, 1:].max(axis=1) > colour_ll[:, 0])
    return looks(net, samples.net_patches, again, probs)

