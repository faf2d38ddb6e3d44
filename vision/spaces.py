"""Cut every train space out of a flattened board, and even out the light first.

In:  a flattened board (BGR uint8, the template frame at `px_per_mm`) and the template.
Out: `SpacePatches`: one square patch per space (the space's long axis horizontal, its centre in the
     patch centre, a fixed number of millimetres across so cars keep one size), and per-space colour
     statistics of the space's inner part, both taken from the light-normalised board.

Light normalisation: the board's own paper is the white reference. A coarse map of the paper's
brightness per colour channel (a high percentile of the paper pixels in each cell, away from the
spaces) is divided out, so the paper comes out the same grey everywhere, whatever the white balance,
vignetting or shade of the photo (and of a rendered board: the classifier sees the same kind of input).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

PAPER_LEVEL = 190.0  # the paper's value in every channel after normalisation
BORDER_MM = 26.0  # the score track around the map: not paper, kept out of the light map


@dataclass(frozen=True)
class CropGeometry:
    """How a space patch is cut; saved with the model so training and reading cannot drift."""

    imgsz: int = 64  # patch side in pixels
    side_mm: float = 30.0  # patch side on the board, millimetres (a space is ~23.5 x 7.5 mm)

    def to_dict(self) -> dict:
        return {"imgsz": self.imgsz, "side_mm": self.side_mm}

    @staticmethod
    def from_dict(d: dict) -> "CropGeometry":
        return CropGeometry(imgsz=int(d["imgsz"]), side_mm=float(d["side_mm"]))


@dataclass(frozen=True)
class SpacePatches:
    """Every space of the board, in template order (track by track, city a to b)."""

    patches: np.ndarray  # (N, S, S, 3) uint8 BGR, light-normalised
    track_ids: np.ndarray  # (N,) int
    index: np.ndarray  # (N,) int, space number along its track
    lab: np.ndarray  # (N, 3) float, median OpenCV Lab (0..255) of each space's inner part
    lab_spread: np.ndarray  # (N, 3) float, inter-quartile range of the same pixels

    def __post_init__(self):
        n = len(self.track_ids)
        if self.patches.shape[0] != n or self.lab.shape != (n, 3) or self.index.shape != (n,):
            raise ValueError("SpacePatches fields must have one row per space")


def space_frames(quads_px: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre (N,2), unit long axis (N,2), length (N,) and width (N,) of each space quad."""
    q = np.asarray(quads_px, dtype=float)
    c = q.mean(axis=1)
    e01 = (q[:, 1] - q[:, 0] + q[:, 2] - q[:, 3]) / 2
    e12 = (q[:, 2] - q[:, 1] + q[:, 3] - q[:, 0]) / 2
    l01, l12 = np.linalg.norm(e01, axis=1), np.linalg.norm(e12, axis=1)
    long01 = l01 >= l12
    axis = np.where(long01[:, None], e01, e12)
    axis = axis / np.maximum(np.linalg.norm(axis, axis=1, keepdims=True), 1e-9)
    # One sense per axis (pointing right, or down when vertical) so patches are comparable.
    flip = (axis[:, 0] < -1e-6) | ((np.abs(axis[:, 0]) <= 1e-6) & (axis[:, 1] < 0))
    axis[flip] *= -1
    length = np.where(long01, l01, l12)
    width = np.where(long01, l12, l01)
    return c, axis, length, width


def paper_mask(shape_hw: tuple[int, int], quads_px: np.ndarray, px_per_mm: float) -> np.ndarray:
    """uint8 mask of board paper: inside the map, away from every space."""
    h, w = shape_hw
    mask = np.zeros((h, w), np.uint8)
    b = int(round(BORDER_MM * px_per_mm))
    mask[b:h - b, b:w - b] = 255
    c, axis, length, width = space_frames(quads_px)
    grow = 4.0 * px_per_mm  # cars overhang their space and cast shadows
    for ci, ai, li, wi in zip(c, axis, length, width):
        n = np.array([-ai[1], ai[0]])
        hl, hw = li / 2 + grow, wi / 2 + grow
        pts = np.array([ci - ai * hl - n * hw, ci + ai * hl - n * hw, ci + ai * hl + n * hw, ci - ai * hl + n * hw])
        cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 0)
    return mask


def light_map(flattened: np.ndarray, mask: np.ndarray, cells: tuple[int, int] = (6, 9),
              percentile: float = 80.0) -> np.ndarray:
    """(H, W, 3) float32 paper brightness per channel, smooth over the board."""
    h, w = mask.shape
    ny, nx = cells
    grid = np.full((ny, nx, 3), np.nan, np.float32)
    ys = np.linspace(0, h, ny + 1).astype(int)
    xs = np.linspace(0, w, nx + 1).astype(int)
    for i in range(ny):
        for j in range(nx):
            m = mask[ys[i]:ys[i + 1], xs[j]:xs[j + 1]] > 0
            if m.sum() > 200:
                px = flattened[ys[i]:ys[i + 1], xs[j]:xs[j + 1]][m]
                grid[i, j] = np.percentile(px, percentile, axis=0)
    valid = ~np.isnan(grid[..., 0])
    if not valid.any():
        return np.full((h, w, 3), 200.0, np.float32)
    overall = np.nanmedian(grid.reshape(-1, 3), axis=0)
    # Cells without paper (covered, or the border) take the board-wide value.
    grid[~valid] = overall
    # Keep the map gentle: a cell far from the board-wide value is more likely drawings than light.
    grid = np.clip(grid, overall * 0.6, overall * 1.4)
    grid = cv2.GaussianBlur(grid, (3, 3), 0)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def normalise_light(flattened: np.ndarray, quads_px: np.ndarray, px_per_mm: float) -> np.ndarray:
    """The flattened board with the paper brought to PAPER_LEVEL grey everywhere (uint8 BGR)."""
    mask = paper_mask(flattened.shape[:2], quads_px, px_per_mm)
    lm = light_map(flattened, mask)
    out = flattened.astype(np.float32) * (PAPER_LEVEL / np.maximum(lm, 1.0))
    return np.clip(out, 0, 255).astype(np.uint8)


def crop_spaces(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                geometry: CropGeometry = CropGeometry(), track_ids: np.ndarray | None = None,
                index: np.ndarray | None = None, inner: tuple[float, float] = (0.7, 0.5)) -> SpacePatches:
    """Patches and inner-colour statistics of every space (see module doc).

    `inner` is the part of the space (fraction of length, of width) whose colour is measured: cars
    sit a little off their space, and its printed outline is not its colour.
    """
    quads_px = np.asarray(quads_px, dtype=float)
    n = len(quads_px)
    c, axis, length, width = space_frames(quads_px)
    s = geometry.imgsz
    scale = geometry.side_mm * px_per_mm / s  # board pixels per patch pixel
    patches = np.empty((n, s, s, 3), np.uint8)
    half = (s - 1) / 2.0
    for k in range(n):
        u = axis[k] * scale
        v = np.array([-axis[k][1], axis[k][0]]) * scale
        # patch (x, y) -> board: centre + (x - half) * u + (y - half) * v
        m = np.array([[u[0], v[0], c[k][0] - half * (u[0] + v[0])],
                      [u[1], v[1], c[k][1] - half * (u[1] + v[1])]])
        patches[k] = cv2.warpAffine(board_norm, m, (s, s), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_REPLICATE)
    lab, spread = inner_lab(patches, length / scale, width / scale, inner)
    if track_ids is None:
        track_ids = np.zeros(n, int)
    if index is None:
        index = np.arange(n)
    return SpacePatches(patches, np.asarray(track_ids), np.asarray(index), lab, spread)


def inner_lab(patches: np.ndarray, length_px: np.ndarray, width_px: np.ndarray,
              inner: tuple[float, float] = (0.7, 0.5)) -> tuple[np.ndarray, np.ndarray]:
    """Median Lab (N, 3) and its inter-quartile range (N, 3) of each patch's central space part."""
    n, s = patches.shape[:2]
    lab_all = cv2.cvtColor(patches.reshape(n * s, s, 3), cv2.COLOR_BGR2LAB).reshape(n, s, s, 3)
    lab = np.empty((n, 3), np.float32)
    spread = np.empty((n, 3), np.float32)
    mid = s / 2.0
    for k in range(n):
        hl = max(2, int(round(length_px[k] * inner[0] / 2)))
        hw = max(1, int(round(width_px[k] * inner[1] / 2)))
        x0, x1 = max(0, int(mid - hl)), min(s, int(mid + hl))
        y0, y1 = max(0, int(mid - hw)), min(s, int(mid + hw))
        vals = lab_all[k, y0:y1, x0:x1].reshape(-1, 3).astype(np.float32)
        q25, q50, q75 = np.percentile(vals, [25, 50, 75], axis=0)
        lab[k], spread[k] = q50, q75 - q25
    return lab, spread
