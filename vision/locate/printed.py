"""Find the board by its printed look: SIFT features of the photo matched to a reference of the
empty board, and one homography fitted robustly (MAGSAC).

In: a photo (BGR uint8, reduced to `MatchConfig.work_side`), and the packaged reference
(`calibration/data/usa_printed.npz`, made by `ttr template printed` from a flattened photo of the
empty board). Out: `PrintedMatch`: the board's outer corners in the photo's pixels, board order
TL, TR, BR, BL (so the turn comes with it), and how many features agreed; or None.

Why: the board is a richly printed flat object, the same on every table. Matching its own print
does not care whether the table is red-brown wood, black-and-white checks or stone, which is what
fools an outline found by colour; 78 tracks covered by cars still leave 40-150 features of
lettering, relief and the score track agreeing (the development photos). A different print of the
board (e.g. the renderer's) matches nothing; the colour outline finds that one.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path

import cv2
import numpy as np

from vision.config import BYTE_MAX
from vision.locate.config import MatchConfig, ReferenceConfig
from vision.rectify import board_corners_mm, flatten

_SIFT_SIZE = 128  # bytes of a SIFT descriptor
# Approximate nearest neighbours: the reference's descriptors in FLANN's randomised kd-trees
# (algorithm 1), and how often a query traverses them (more: nearer neighbours found, slower).
_FLANN_INDEX = dict(algorithm=1, trees=4)
_FLANN_SEARCH = dict(checks=48)


@dataclass(frozen=True)
class PrintedReference:
    """The empty board's printed look: SIFT features, placed in board millimetres."""

    keypoints_mm: np.ndarray  # (n, 2) float32
    descriptors: np.ndarray  # (n, 128) uint8, SIFT

    def __post_init__(self):
        n = len(self.keypoints_mm)
        if self.keypoints_mm.shape != (n, 2) or self.descriptors.shape != (n, _SIFT_SIZE):
            raise ValueError("keypoints_mm must be (n, 2) and descriptors (n, 128)")

    @cached_property
    def matcher(self) -> cv2.FlannBasedMatcher:
        """A FLANN index over the descriptors, built once per reference."""
        m = cv2.FlannBasedMatcher(_FLANN_INDEX, _FLANN_SEARCH)
        m.add([self.descriptors.astype(np.float32)])
        m.train()
        return m

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, keypoints_mm=self.keypoints_mm.astype(np.float32),
                            descriptors=self.descriptors.astype(np.uint8))


@dataclass(frozen=True)
class PrintedMatch:
    corners_xy: np.ndarray  # (4, 2) photo pixels, board order
    inliers: int
    matches: int


def load_reference(path: str | Path | None = None) -> PrintedReference:
    """The packaged reference, or one written by `PrintedReference.save`."""
    if path is None:
        return _packaged()
    with np.load(path, allow_pickle=False) as z:
        return PrintedReference(z["keypoints_mm"], z["descriptors"])


@lru_cache(maxsize=1)
def _packaged() -> PrintedReference:
    with resources.as_file(resources.files("calibration").joinpath("data", "usa_printed.npz")) as p:
        return load_reference(p)


def measure_reference(flattened_bgr: np.ndarray, cfg: ReferenceConfig = ReferenceConfig()) -> PrintedReference:
    """The reference from a photo of the empty board flattened to its outer corners (any size with
    the board's proportions): its SIFT features at `cfg.px_per_mm`."""
    img = np.asarray(flattened_bgr)
    h, w = img.shape[:2]
    corners = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float64)
    grey = cv2.cvtColor(flatten(img, corners, px_per_mm=cfg.px_per_mm), cv2.COLOR_BGR2GRAY)
    kp, des = cv2.SIFT_create(nfeatures=cfg.features).detectAndCompute(grey, None)
    if des is None or len(kp) < cfg.min_features:
        raise ValueError("too few features: is this a flattened photo of the board?")
    # Flattened pixel (u, v) shows board point ((u + 0.5) / ppm, (v + 0.5) / ppm).
    pts = (np.array([k.pt for k in kp], np.float64) + 0.5) / cfg.px_per_mm
    return PrintedReference(pts.astype(np.float32), np.clip(des, 0, BYTE_MAX).astype(np.uint8))


def match_board(small_bgr: np.ndarray, ref: PrintedReference | None = None,
                cfg: MatchConfig = MatchConfig()) -> PrintedMatch | None:
    """The board's corners in `small_bgr`'s pixels by its print, or None when too few features
    agree on one homography."""
    ref = _packaged() if ref is None else ref
    img = np.asarray(small_bgr)
    f = min(1.0, cfg.work_side / max(img.shape[:2]))
    work = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) if f < 1 else img
    grey = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    kp, des = cv2.SIFT_create(nfeatures=cfg.features).detectAndCompute(grey, None)
    if des is None or len(kp) < cfg.min_inliers:
        return None
    pairs = ref.matcher.knnMatch(des.astype(np.float32), k=2)
    good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < cfg.ratio * p[1].distance]
    if len(good) < cfg.min_inliers:
        return None
    src = ref.keypoints_mm[[m.trainIdx for m in good]].astype(np.float64)
    dst = np.array([kp[m.queryIdx].pt for m in good], np.float64)
    H, inl = cv2.findHomography(src, dst, cv2.USAC_MAGSAC, cfg.ransac_px, maxIters=cfg.ransac_iters,
                                confidence=cfg.ransac_confidence)
    if H is None or inl is None or int(inl.sum()) < cfg.min_inliers:
        return None
    corners = cv2.perspectiveTransform(board_corners_mm().reshape(-1, 1, 2), H).reshape(-1, 2)
    # A board seen from the front: the outline is convex and not mirrored (clockwise on screen).
    if not _clockwise_convex(corners):
        return None
    corners = (corners + 0.5) / f - 0.5  # pixel centres of `work` -> of `small_bgr`
    return PrintedMatch(corners, int(inl.sum()), len(good))


def _clockwise_convex(q: np.ndarray) -> bool:
    a = np.roll(q, -1, axis=0) - q  # side i, from corner i to i + 1
    b = np.roll(a, -1, axis=0)
    return bool(np.all(a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0] > 0))  # every turn clockwise (y down)

