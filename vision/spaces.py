"""Cut every train space out of a lit board, once: what the net looks at and what the colours measure.

In:  a `vision.light.LitBoard` (the board flattened, its light evened out, its spaces registered)
     and where the camera stood.
Out: `SpaceSamples` (`sample_spaces`): per space, its square patch for the net (the space's long
     axis horizontal, its centre in the patch centre, a fixed number of millimetres across so cars
     keep one size, cut where a car on it is seen as the net was trained), its colour where it is
     printed, and the colour at places across it (a car lies anywhere across its space).

`cut_spaces` and `crop_spaces` are the one way patches are cut: the reader, the calibration fit
(`vision/calibrate.py`) and training (`models/train.py`) all use them, so a patch the net learnt
from is cut exactly as the one it is asked about.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.rectify import parallax_mm
from vision.settings import SampleSettings

QUAD_SHIFT = 4  # fractional bits of the quads drawn by paint_spaces (1/16 px)


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
    lab_mean: np.ndarray | None = None  # (N, 3) float, mean Lab of the same pixels (mixes linearly)

    def __post_init__(self):
        n = len(self.track_ids)
        if self.patches.shape[0] != n or self.lab.shape != (n, 3) or self.index.shape != (n,):
            raise ValueError("SpacePatches fields must have one row per space")


@dataclass(frozen=True)
class SpaceSamples:
    """What `sample_spaces` measured on every space of one lit board."""

    printed: SpacePatches  # cut where each space is printed: its colour (median, spread, mean) and patch
    net_patches: np.ndarray  # (N, S, S, 3) the net's patches, where a car of its training height is seen
    net_offsets_px: np.ndarray  # (N, 1, 2) where those are, from the spaces
    car_lab: np.ndarray  # (N, K, 3) mean Lab at K places across each space

    @property
    def track_ids(self) -> np.ndarray:
        return self.printed.track_ids


def sample_spaces(lit, geometry: CropGeometry, track_ids: np.ndarray, index: np.ndarray, quads_mm: np.ndarray,
                  camera_mm=None, seen_px_per_mm: float | None = None, net_seen_height_mm: float = 0.0,
                  cfg: SampleSettings = SampleSettings()) -> SpaceSamples:
    """Every space of `lit` (a LitBoard) measured once (see module doc). `camera_mm`: where the
    camera stood (None: straight above); `seen_px_per_mm`: the photo's own scale over the board
    (None: sharp enough for every place across)."""
    printed = cut_spaces(lit, geometry, track_ids, index, inner=cfg.inner)
    offsets = car_offsets_px(quads_mm, camera_mm, net_seen_height_mm, lit.px_per_mm)
    net_patches = printed.patches if not np.any(offsets) else cut_patches(
        lit.board, lit.quads_px + offsets, lit.px_per_mm, geometry)
    # A car lies anywhere across its space: its colour is measured at places across the space,
    # from its middle to where the measured strip meets the space's edge.
    across = space_normals_px(lit.quads_px)
    reach = 0.5 - cfg.inner[1] / 2
    space_width_mm = float(np.median(space_frames(quads_mm)[3]))
    steps = across_steps(reach * space_width_mm, seen_px_per_mm, cfg.car_across_steps)
    car_lab = np.stack([inner_mean_lab(lit.board, lit.quads_px + across * (reach * k / max(steps, 1)),
                                       cfg.inner, cfg.inner_grid)
                        for k in range(-steps, steps + 1)], axis=1)  # (N, 2 steps + 1, 3)
    return SpaceSamples(printed, net_patches, offsets, car_lab)


def across_steps(reach_mm: float, seen_px_per_mm: float | None, steps: int) -> int:
    """How many places each side of a space's middle a car's colour is looked for (`reach_mm`
    out): at most `steps`, and no closer together than a pixel of the photo (on a small board,
    places closer than that see the same pixels, and the best of them is only noise)."""
    if seen_px_per_mm is None:
        return steps
    return int(np.clip(np.floor(reach_mm * float(seen_px_per_mm)), 0, steps))


def car_offsets_px(quads_mm: np.ndarray, camera_mm, height_mm: float, px_per_mm: float) -> np.ndarray:
    """(N, 1, 2) offsets, in flattened-board pixels, from each space to where a car standing on it
    is seen from `camera_mm` (None or a height of 0: no offset). Add to the spaces' quads."""
    quads_mm = np.asarray(quads_mm, dtype=float)
    if camera_mm is None or height_mm <= 0:
        return np.zeros((len(quads_mm), 1, 2))
    return (parallax_mm(quads_mm.mean(axis=1), camera_mm, height_mm) * px_per_mm)[:, None, :]


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


def cut_spaces(lit, geometry: CropGeometry, track_ids: np.ndarray, index: np.ndarray,
               offsets_px: np.ndarray | None = None, inner: tuple[float, float] = SampleSettings().inner) -> SpacePatches:
    """Every space of `lit` (a LitBoard) cut out (`offsets_px`, (N, 1, 2): moved by that)."""
    quads = lit.quads_px if offsets_px is None else lit.quads_px + offsets_px
    return crop_spaces(lit.board, quads, lit.px_per_mm, geometry, track_ids, index, inner)


def patch_points(quads: np.ndarray, scale: float, imgsz: int, dtype=np.float64) -> np.ndarray:
    """(N, S, S, 2) the point (in the quads' units) each pixel of each space's patch shows: pixel
    (x, y) of space k shows centre_k + (x - half) * u_k + (y - half) * v_k, u along the space and v
    across it, each `scale` long (the quads' units per patch pixel), half = (S - 1) / 2."""
    c, axis, _, _ = space_frames(quads)
    g = (np.arange(imgsz) - (imgsz - 1) / 2.0).astype(dtype)
    u = (axis * scale).astype(dtype)
    v = (np.stack([-axis[:, 1], axis[:, 0]], axis=1) * scale).astype(dtype)
    cc = c.astype(dtype)
    return cc[:, None, None, :] + g[None, None, :, None] * u[:, None, None, :] + g[None, :, None, None] * v[:, None, None, :]


def cut_patches(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                geometry: CropGeometry = CropGeometry()) -> np.ndarray:
    """(N, S, S, 3) every space's patch (see module doc), in one remap."""
    quads_px = np.asarray(quads_px, dtype=float)
    n, s = len(quads_px), geometry.imgsz
    scale = geometry.side_mm * px_per_mm / s  # board pixels per patch pixel
    pts = patch_points(quads_px, scale, s, np.float32)
    return cv2.remap(board_norm, pts[..., 0].reshape(n * s, s), pts[..., 1].reshape(n * s, s), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE).reshape(n, s, s, 3)


def crop_spaces(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                geometry: CropGeometry = CropGeometry(), track_ids: np.ndarray | None = None,
                index: np.ndarray | None = None, inner: tuple[float, float] = SampleSettings().inner) -> SpacePatches:
    """Patches and inner-colour statistics (of the `inner` part) of every space (see module doc)."""
    quads_px = np.asarray(quads_px, dtype=float)
    n = len(quads_px)
    _, _, length, width = space_frames(quads_px)
    patches = cut_patches(board_norm, quads_px, px_per_mm, geometry)
    scale = geometry.side_mm * px_per_mm / geometry.imgsz
    lab, spread, mean = inner_lab(patches, length / scale, width / scale, inner)
    if track_ids is None:
        track_ids = np.zeros(n, int)
    if index is None:
        index = np.arange(n)
    return SpacePatches(patches, np.asarray(track_ids), np.asarray(index), lab, spread, mean)


def inner_lab(patches: np.ndarray, length_px: np.ndarray, width_px: np.ndarray,
              inner: tuple[float, float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median Lab (N, 3), its inter-quartile range (N, 3) and the mean (N, 3) of each patch's central space part
    (one rectangle for all spaces, from their median size: printed spaces are all alike)."""
    n, s = patches.shape[:2]
    if n == 0:
        return np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32), np.zeros((0, 3), np.float32)
    hl = max(2, int(round(float(np.median(length_px)) * inner[0] / 2)))
    hw = max(1, int(round(float(np.median(width_px)) * inner[1] / 2)))
    mid = s // 2
    x0, x1 = max(0, mid - hl), min(s, mid + hl)
    y0, y1 = max(0, mid - hw), min(s, mid + hw)
    part = np.ascontiguousarray(patches[:, y0:y1, x0:x1])
    h, w = part.shape[1:3]
    lab = cv2.cvtColor(part.reshape(n * h, w, 3), cv2.COLOR_BGR2LAB).reshape(n, h * w, 3)
    quartiles = (25, 50, 75)
    q25, q50, q75 = np.percentile(lab, quartiles, axis=1)
    return q50.astype(np.float32), (q75 - q25).astype(np.float32), lab.mean(axis=1).astype(np.float32)


def space_normals_px(quads_px: np.ndarray) -> np.ndarray:
    """(N, 1, 2) each quad's width vector: across the space, as long as the space is wide (add a
    fraction of it to the quads to move them across their spaces)."""
    _, axis, _, width = space_frames(quads_px)
    return (np.stack([-axis[:, 1], axis[:, 0]], axis=1) * width[:, None])[:, None, :]


def space_grid(quads_px: np.ndarray, part: tuple[float, float], grid: tuple[int, int]) -> np.ndarray:
    """(N, grid[0], grid[1], 2) points evenly over each quad's central part (`part`: fractions of
    its length and width), along the space first, then across it."""
    c, axis, length, width = space_frames(quads_px)
    gl = np.linspace(-0.5, 0.5, grid[0])[None, :, None, None] * (length * part[0])[:, None, None, None]
    gw = np.linspace(-0.5, 0.5, grid[1])[None, None, :, None] * (width * part[1])[:, None, None, None]
    nrm = np.stack([-axis[:, 1], axis[:, 0]], axis=1)
    return c[:, None, None, :] + gl * axis[:, None, None, :] + gw * nrm[:, None, None, :]


def inner_mean_lab(board_norm: np.ndarray, quads_px: np.ndarray, inner: tuple[float, float] = SampleSettings().inner,
                   grid: tuple[int, int] = SampleSettings().inner_grid) -> np.ndarray:
    """(N, 3) mean Lab over a grid of points on each quad's central part (`inner`: fractions of its
    length and width), the same part `crop_spaces` measures, without cutting whole patches."""
    n = len(quads_px)
    if n == 0:
        return np.zeros((0, 3), np.float32)
    pts = space_grid(quads_px, inner, grid).astype(np.float32)
    px = cv2.remap(board_norm, pts[..., 0].reshape(n * grid[0], grid[1]), pts[..., 1].reshape(n * grid[0], grid[1]),
                   cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(px, cv2.COLOR_BGR2LAB).reshape(n, grid[0] * grid[1], 3).astype(np.float32)
    return lab.mean(axis=1)


def soften_patches(patches: np.ndarray, seen_px_per_mm: float | None, to_px_per_mm: float | None,
                   board_px_per_mm: float) -> np.ndarray:
    """(N, S, S, 3) patches as a photo showing the board at `to_px_per_mm` would show them: those
    of a photo seen finer (`seen_px_per_mm`, capped by the flattened board's own scale) are
    shrunk to that scale and enlarged back. None for either: the patches as they are."""
    if to_px_per_mm is None or seen_px_per_mm is None or len(patches) == 0:
        return patches
    factor = min(float(seen_px_per_mm), board_px_per_mm) / float(to_px_per_mm)
    s = patches.shape[1]
    small = int(round(s / factor))
    if small >= s:  # the photo is no finer than that
        return patches
    return np.stack([cv2.resize(cv2.resize(p, (small, small), interpolation=cv2.INTER_AREA), (s, s),
                                interpolation=cv2.INTER_LINEAR) for p in patches])


def paint_spaces(board_norm: np.ndarray, quads_px: np.ndarray, bgr: np.ndarray) -> np.ndarray:
    """A copy of the board with each quad (N, 4, 2) filled flat in its colour (N, 3) BGR: spaces
    shown as their bare print, whatever stands on them."""
    out = board_norm.copy()
    for quad, colour in zip(np.asarray(quads_px, float), np.asarray(bgr, float)):
        cv2.fillConvexPoly(out, np.round(quad * (1 << QUAD_SHIFT)).astype(np.int32), tuple(float(c) for c in colour),
                           cv2.LINE_AA, QUAD_SHIFT)
    return out
