"""The tracks' layout: check an outline where the board is too small in the photo for its city dots.

In: an image (BGR uint8) and a candidate outline in it (board order TL, TR, BR, BL).
Out: `LayoutCheck`: how well the photo, flattened by that outline, puts ink (print or cars: anything
not the paper around it) where the template has its 309 spaces, and how well the same outline does
turned half round or mirrored.

Why: a city dot is 10 mm across, so on a board under ~640 pixels across (0.8 px/mm: a messaging
app's thumbnail, a photo from across the room) it is a few pixels of blurred copper, and red cars
beside it answer as well; the dots then neither confirm an outline nor put it right. The spaces are
25 x 8 mm and there are 309 of them, in a layout with no symmetry: flattened coarsely (4 mm a
pixel) the photo's ink still follows them, on the right outline only (the same outline turned half
round or mirrored puts the spaces on paper). Print or car does not matter here, nor the colours'
cast: only "not paper".
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from calibration.template import load_template
from vision.config import CHANNELS, CORNERS, EPS
from vision.light import BORDER_MM
from vision.locate.config import LayoutConfig
from vision.rectify import flatten, flattened_size

_SHIFT = 4  # fractional bits of the spaces' corners as drawn (cv2.fillConvexPoly's `shift`)


@dataclass(frozen=True)
class LayoutCheck:
    """What the tracks' layout says of one outline."""

    score: float  # correlation (-1..1) of the flattened photo's ink with the template's spaces
    rival: float  # the best score of the same outline turned half round or mirrored


@lru_cache(maxsize=4)
def spaces_image(px_per_mm: float) -> np.ndarray:
    """The template's spaces filled (1) on an empty board (0), flattened at `px_per_mm`."""
    w, h = flattened_size(px_per_mm)
    img = np.zeros((h, w), np.float32)
    for q in load_template().all_spaces().quads:
        pts = np.round((q * px_per_mm - 0.5) * (1 << _SHIFT)).astype(np.int32)
        cv2.fillConvexPoly(img, pts, 1.0, lineType=cv2.LINE_AA, shift=_SHIFT)
    return img


def ink(flat_bgr: np.ndarray, map_inset: int, paper_px: int) -> np.ndarray:
    """How far each pixel is from the map's paper around it: the Lab distance to the median colour
    of a `paper_px` window (odd), the score track outside the map counted as the map's median
    paper. The paper's own neighbourhood is its white, as in `vision.light`: a flash's hot spot,
    a shadow or a lamp's fall-off moves paper and ink alike."""
    lab = cv2.cvtColor(flat_bgr, cv2.COLOR_BGR2LAB)
    inner = lab[map_inset:-map_inset, map_inset:-map_inset]
    filled = np.empty_like(lab)
    filled[:] = np.median(inner.reshape(-1, CHANNELS), axis=0).astype(np.uint8)
    filled[map_inset:-map_inset, map_inset:-map_inset] = inner
    paper = cv2.medianBlur(filled, paper_px)
    return np.linalg.norm(lab.astype(np.float32) - paper.astype(np.float32), axis=2)


def _correlation(ink_map: np.ndarray, spaces: np.ndarray, inset: int) -> float:
    a = ink_map[inset:-inset, inset:-inset].ravel()
    if a.std() < EPS:  # a flat image: no correlation to speak of
        return 0.0
    return float(np.corrcoef(a, spaces[inset:-inset, inset:-inset].ravel())[0, 1])


def check_layout(image_bgr: np.ndarray, corners_xy, cfg: LayoutConfig = LayoutConfig()) -> LayoutCheck:
    """The tracks' layout's verdict on an outline (photo pixels of `image_bgr`, board order)."""
    c = np.asarray(corners_xy, dtype=np.float64).reshape(CORNERS, 2)
    inset = max(1, int(round(BORDER_MM * cfg.px_per_mm)))  # the map only: the score track is all ink
    paper_px = int(cfg.paper_mm * cfg.px_per_mm) | 1  # odd, as a median window must be
    try:
        seen = ink(flatten(image_bgr, c, px_per_mm=cfg.px_per_mm), inset, paper_px)
    except (ValueError, cv2.error):
        return LayoutCheck(0.0, 0.0)
    spaces = spaces_image(cfg.px_per_mm)
    # The outline with its corners taken half round, mirrored left-right or top-bottom flattens the
    # photo to this same image turned or flipped (to within a pixel's rounding): no new warp needed.
    rival = max(_correlation(turned, spaces, inset)
                for turned in (seen[::-1, ::-1], seen[:, ::-1], seen[::-1, :]))
    return LayoutCheck(_correlation(seen, spaces, inset), rival)


def confirmed(check: LayoutCheck, cfg: LayoutConfig = LayoutConfig()) -> bool:
    """The layout confirms the board is there, the right way round."""
    return check.score >= cfg.min_score and check.score - check.rival >= cfg.min_margin


def polish(image_bgr: np.ndarray, corners_xy, cfg: LayoutConfig = LayoutConfig()) -> tuple[np.ndarray, LayoutCheck]:
    """`corners_xy` (board order) moved, one corner one way at a time, while the tracks' layout
    fits better, in steps of `cfg.polish_steps` of the board's diagonal; and the layout's verdict on
    the result. Where the dots cannot put an outline right, the layout can: off by a side's slip,
    the spaces fall between the photo's tracks (a few millimetres is all 4 mm pixels can tell)."""
    c = np.asarray(corners_xy, dtype=np.float64).reshape(CORNERS, 2)
    best = check_layout(image_bgr, c, cfg)
    diag = float(np.linalg.norm(c[2] - c[0]))
    moves = np.array([(1, 0), (-1, 0), (0, 1), (0, -1)], np.float64)
    for share in cfg.polish_steps:
        moved = True
        while moved:
            moved = False
            for k in range(CORNERS):
                for d in moves * share * diag:
                    tried = c.copy()
                    tried[k] += d
                    chk = check_layout(image_bgr, tried, cfg)
                    if chk.score > best.score:
                        c, best, moved = tried, chk, True
    return c, best
