"""Second judgements of the net, where its first look may mislead the reading, in this order
(`REFINEMENTS`; each can be switched off in `RefineSettings`):

1. **second look**: the net's answer averaged with its answer on the half-turned patch, wherever the
   reading may turn on the net: where the print is a player's colour (colour cannot tell a car
   from its print) and where the colours and the net's first look disagree on whether a car is
   there. A space looks the same from either end and the net was trained towards the mean of both
   (`models/distill.py`), yet one look leans on where in the patch things stand (a car set a few
   mm off its space, its dark side in the patch's middle).
2. **lanes alone**: each lane beside a claimed lane of its double is judged again with that lane
   painted as its bare print. Its patch shows the other lane's cars too, and the net, which saw an
   empty lane beside cars seldom in training, may take them for cars of its own.

Each takes the net's answers so far ((N, 6) over SPACE_CLASSES) and returns them refined.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.evidence.net import SpaceClassifier, half_turned
from vision.light import LitBoard
from vision.settings import ColourSettings, RefineSettings
from vision.spaces import CropGeometry, SpaceSamples, crop_spaces, paint_spaces

REFINEMENTS = ("second look", "lanes alone")


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
    """Refinement 1 (see module doc): `colour_ll`, the evidence but the net's, says where a car is."""
    again = np.array(spaces.player_printed, bool)
    again |= (probs[:, 0] < 0.5) != (colour_ll[:, 1:].max(axis=1) > colour_ll[:, 0])
    return looks(net, samples.net_patches, again, probs)


def lanes_alone(net: SpaceClassifier, lit: LitBoard, samples: SpaceSamples, probs: np.ndarray, spaces: BoardSpaces,
                reading_ll: np.ndarray, geometry: CropGeometry, colour: ColourSettings = ColourSettings(),
                cfg: RefineSettings = RefineSettings()) -> np.ndarray:
    """Refinement 2 (see module doc): `reading_ll`, the fused evidence so far, says which lanes are
    claimed. The lower track ids of such doubles are judged on one painted copy of the board and
    the others on another, so that a lane is never painted over while it is the one judged."""
    p_empty = np.exp(reading_ll[:, 0] - np.logaddexp.reduce(reading_ll, axis=1))
    track_empty = {t: float(p_empty[spaces.track_ids == t].mean()) for t in np.unique(spaces.track_ids)}
    beside = np.array([o >= 0 and track_empty[o] < 0.5 for o in spaces.other_lane])
    if not beside.any():
        return probs
    print_bgr = _print_bgr(samples.printed.lab, p_empty > 0.5, spaces.printed, colour, cfg.min_print_samples)
    quads = lit.quads_px + samples.net_offsets_px
    judged, patches = [], []
    for lower in (True, False):
        k = np.flatnonzero(beside & ((spaces.track_ids < spaces.other_lane) == lower))
        if len(k):
            painted = np.isin(spaces.track_ids, spaces.other_lane[k])
            board = paint_spaces(lit.board, quads[painted], print_bgr[painted])
            judged.append(k)
            patches.append(crop_spaces(board, quads[k], lit.px_per_mm, geometry, spaces.track_ids[k],
                                       spaces.index[k]).patches)
    k = np.concatenate(judged)
    out = probs.copy()
    out[k] = looks(net, np.concatenate(patches), spaces.player_printed[k])
    return out


def _print_bgr(lab: np.ndarray, empty: np.ndarray, printed: np.ndarray, colour: ColourSettings,
               min_samples: int) -> np.ndarray:
    """(N, 3) each space's print colour on this board: the median of the measured colours `lab`
    of the spaces printed in its colour and read `empty`, or the printed colour's generic value
    where fewer than `min_samples` of them are (at the end of a game most grey spaces hold cars)."""
    generic = dict(colour.printed_lab)
    out = np.empty((len(lab), 3))
    for name in np.unique(printed):
        m = printed == name
        out[m] = np.median(lab[m & empty], axis=0) if np.count_nonzero(m & empty) >= min_samples else generic[name]
    levels = np.iinfo(np.uint8).max
    return cv2.cvtColor(np.clip(out, 0, levels).astype(np.uint8)[None], cv2.COLOR_LAB2BGR)[0].astype(float)
