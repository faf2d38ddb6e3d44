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
# The part of a space (fraction of its length, of its width) whose colour is measured: cars sit a
# little off their space, and its printed outline is not its colour.
INNER = (0.7, 0.35)


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


def light_map(flattened: np.ndarray, mask: np.ndarray, cells: tuple[int, int] = (10, 15),
              percentile: float = 80.0) -> np.ndarray:
    """(cells_y, cells_x, 3) float32 paper brightness per channel in each cell of the board
    (`flattened`: BGR uint8; `mask`: nonzero on paper)."""
    if flattened.dtype != np.uint8:
        raise ValueError("light_map needs a uint8 image")
    h, w = mask.shape
    ny, nx = cells
    ys = np.linspace(0, h, ny + 1).astype(int)
    xs = np.linspace(0, w, nx + 1).astype(int)
    # Every paper pixel's cell, then each cell's percentile from one sort of (cell, value) keys:
    # the same numbers as np.percentile per cell (linear), without a call per cell.
    cell = ((np.searchsorted(ys, np.arange(h), side="right") - 1)[:, None] * nx
            + (np.searchsorted(xs, np.arange(w), side="right") - 1)[None, :])
    m = mask > 0
    cell = cell[m]
    counts = np.bincount(cell, minlength=ny * nx)
    valid = counts > 30
    grid = np.full((ny * nx, 3), np.nan, np.float32)
    if valid.any():
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        n = counts[valid]
        virtual = (n - 1) * (percentile / 100.0)
        lo = np.floor(virtual).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        t = virtual - lo
        for ch in range(3):
            keys = np.sort(cell.astype(np.int64) * 256 + flattened[..., ch][m])
            a = (keys[start[valid] + lo] & 255).astype(np.float64)
            b = (keys[start[valid] + hi] & 255).astype(np.float64)
            # numpy's linear interpolation, as it computes it
            grid[valid, ch] = np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)
    grid = grid.reshape(ny, nx, 3)
    valid = valid.reshape(ny, nx)
    if not valid.any():
        return np.full((ny, nx, 3), PAPER_LEVEL, np.float32)
    overall = np.nanmedian(grid.reshape(-1, 3), axis=0)
    # Cells without paper (covered, or the border) take the board-wide value.
    grid[~valid] = overall
    # Keep the map gentle: a cell far from the board-wide value is more likely drawings than light.
    grid = np.clip(grid, overall * 0.6, overall * 1.4)
    return cv2.GaussianBlur(grid, (3, 3), 0)


def paper_light_map(board: np.ndarray, quads_px: np.ndarray, px_per_mm: float, cells: tuple[int, int] = (10, 15),
                    percentile: float = 80.0) -> np.ndarray:
    """`light_map` of a board's paper (away from the spaces at `quads_px`), measured on a
    quarter-size copy: the light map is smooth, so that measures it as well, 16x faster."""
    h, w = board.shape[:2]
    f = 0.25
    small = cv2.resize(board, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA)
    mask = paper_mask(small.shape[:2], np.asarray(quads_px) * f, px_per_mm * f)
    return light_map(small, mask, cells, percentile)


def normalise_light(flattened: np.ndarray, quads_px: np.ndarray, px_per_mm: float) -> np.ndarray:
    """The flattened board with the paper brought to PAPER_LEVEL grey everywhere (uint8 BGR)."""
    h, w = flattened.shape[:2]
    grid = paper_light_map(flattened, quads_px, px_per_mm)
    gain = cv2.resize((PAPER_LEVEL / np.maximum(grid, 1.0)).astype(np.float32), (w, h),
                      interpolation=cv2.INTER_LINEAR)
    return cv2.multiply(np.ascontiguousarray(flattened), gain, dtype=cv2.CV_8U)  # saturates at 0..255


@dataclass(frozen=True)
class LitBoard:
    """A flattened board with its light evened out, and where its spaces are on it."""

    board: np.ndarray  # (H, W, 3) uint8 BGR, light-normalised
    quads_px: np.ndarray  # (N, 4, 2) every space on `board` (registered, or the template's)
    template_px: np.ndarray  # (N, 4, 2) the template's spaces in the same pixels
    px_per_mm: float
    register_score: float  # ECC score of the registration (0: not registered or it failed)

    def __post_init__(self):
        if self.quads_px.shape != self.template_px.shape or self.board.ndim != 3:
            raise ValueError("LitBoard: quads and template quads must match, and the board be a colour image")


def light_board(flattened: np.ndarray, quads_mm: np.ndarray, px_per_mm: float, register: bool = True) -> LitBoard:
    """The first step of every use of the spaces (reading, calibrating, training): the template's
    spaces in pixels, the board's light evened out on its paper, and the spaces registered on it."""
    # Flattened pixel (u, v) shows the board point ((u + 0.5) / ppm, (v + 0.5) / ppm) mm.
    template_px = np.asarray(quads_mm, float) * px_per_mm - 0.5
    norm = normalise_light(flattened, template_px, px_per_mm)
    quads_px, score = register_to_template(norm, template_px, px_per_mm) if register else (template_px, 0.0)
    return LitBoard(norm, quads_px, template_px, px_per_mm, score)


def paper_left_bright(lit: LitBoard, cells: tuple[int, int] = (20, 30)) -> np.ndarray:
    """(N,) how bright the paper around each space still is once the light was evened out: the
    median paper value (mean of the channels) in the cell of a `cells` grid over the board that
    holds the space's middle.

    `normalise_light` evens the light out over cells of ~55 mm, smoothed and held within 0.6-1.4x
    of the board-wide value, so it follows a lamp's slope and a shadow but not glare off the glossy
    board far brighter than the rest (the phone exposing for it): there the paper stays far above
    PAPER_LEVEL, where evened-out paper's median lies a little below it (its 80th percentile is
    brought to PAPER_LEVEL)."""
    h, w = lit.board.shape[:2]
    grid = paper_light_map(lit.board, lit.quads_px, lit.px_per_mm, cells, percentile=50.0).mean(axis=2)
    c = space_frames(lit.quads_px)[0]
    ny, nx = cells
    iy = np.clip((c[:, 1] * ny / h).astype(int), 0, ny - 1)
    ix = np.clip((c[:, 0] * nx / w).astype(int), 0, nx - 1)
    return grid[iy, ix].astype(np.float32)


def cut_spaces(lit: LitBoard, geometry: CropGeometry, track_ids: np.ndarray, index: np.ndarray,
               offsets_px: np.ndarray | None = None) -> SpacePatches:
    """Every space of `lit` cut out (`offsets_px`, (N, 1, 2): moved to where a car on it is seen)."""
    quads = lit.quads_px if offsets_px is None else lit.quads_px + offsets_px
    return crop_spaces(lit.board, quads, lit.px_per_mm, geometry, track_ids, index)


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


def crop_spaces(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                geometry: CropGeometry = CropGeometry(), track_ids: np.ndarray | None = None,
                index: np.ndarray | None = None, inner: tuple[float, float] = INNER) -> SpacePatches:
    """Patches and inner-colour statistics (of the `inner` part) of every space (see module doc)."""
    quads_px = np.asarray(quads_px, dtype=float)
    n = len(quads_px)
    _, _, length, width = space_frames(quads_px)
    s = geometry.imgsz
    scale = geometry.side_mm * px_per_mm / s  # board pixels per patch pixel
    # One remap for all patches.
    pts = patch_points(quads_px, scale, s, np.float32)
    patches = cv2.remap(board_norm, pts[..., 0].reshape(n * s, s), pts[..., 1].reshape(n * s, s), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE).reshape(n, s, s, 3)
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
    q25, q50, q75 = np.percentile(lab, [25, 50, 75], axis=1)
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


def inner_mean_lab(board_norm: np.ndarray, quads_px: np.ndarray, inner: tuple[float, float] = INNER,
                   grid: tuple[int, int] = (17, 7)) -> np.ndarray:
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


def paint_spaces(board_norm: np.ndarray, quads_px: np.ndarray, bgr: np.ndarray) -> np.ndarray:
    """A copy of the board with each quad (N, 4, 2) filled flat in its colour (N, 3) BGR: spaces
    shown as their bare print, whatever stands on them."""
    out = board_norm.copy()
    for quad, colour in zip(np.asarray(quads_px, float), np.asarray(bgr, float)):
        cv2.fillConvexPoly(out, np.round(quad * 16).astype(np.int32), tuple(float(c) for c in colour), cv2.LINE_AA, 4)
    return out


def align_to_reference(board_norm: np.ndarray, reference_norm: np.ndarray, px_per_mm: float,
                       work_px_per_mm: float = 0.5) -> tuple[np.ndarray, float]:
    """Warp `board_norm` onto `reference_norm` (same frame, both light-normalised) by the homography
    that best matches their map drawings (ECC on a small grey copy). Returns (warped board, ECC score);
    the board unchanged and score 0 when no match is found.

    Why: corners found a few millimetres off move every space a little; the empty reference of the
    same board is the best ruler to put each space back exactly where it was measured.
    """
    h, w = reference_norm.shape[:2]
    f = work_px_per_mm / px_per_mm
    small = lambda im: cv2.GaussianBlur(  # noqa: E731
        cv2.cvtColor(cv2.resize(im, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA),
                     cv2.COLOR_BGR2GRAY).astype(np.float32), (3, 3), 0)
    a, b = small(reference_norm), small(board_norm)
    warp = np.eye(3, dtype=np.float32)
    try:
        score, warp = cv2.findTransformECC(a, b, warp, cv2.MOTION_HOMOGRAPHY,
                                           (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5), None, 5)
    except cv2.error:
        return board_norm, 0.0
    s = np.diag([f, f, 1.0])
    full = np.linalg.inv(s) @ warp.astype(np.float64) @ s  # reference px -> board px
    # A sane correction moves nothing by more than ~8 mm.
    pts = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], float).T
    moved = full @ pts
    moved = moved[:2] / moved[2]
    if np.abs(moved - pts[:2]).max() > 8 * px_per_mm:
        return board_norm, 0.0
    out = cv2.warpPerspective(board_norm, full, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
    return out, float(score)


@dataclass(frozen=True)
class SpaceChange:
    """How each space differs from its own empty look (see `change_features`)."""

    d50: np.ndarray  # (N,) median per-pixel Lab distance (glare taken out)
    d75: np.ndarray  # (N,) its 75th percentile
    changed_share: np.ndarray  # (N,) share of the pixels that changed (distance > CHANGED)
    changed_lab: np.ndarray  # (N, 3) median Lab of the changed pixels (of all pixels if none changed)


CHANGED = 20.0  # Lab distance from the empty reference above which a pixel has changed


def change_features(board_norm: np.ndarray, reference_norm: np.ndarray, quads_px: np.ndarray,
                    inner: tuple[float, float] = (0.85, 0.7), shift_px: int = 2) -> SpaceChange:
    """How much each space differs from its empty reference, pixel by pixel over its inner part, at
    the shift (up to `shift_px`, what alignment leaves) that makes it differ least; and the colour of
    what changed: a car that covers half its space shows as half the pixels changed, in its colour."""
    pts = space_grid(quads_px, inner, (15, 7))
    n = len(pts)
    xs = np.clip(np.round(pts[..., 0]).astype(int), shift_px, board_norm.shape[1] - 1 - shift_px).reshape(n, -1)
    ys = np.clip(np.round(pts[..., 1]).astype(int), shift_px, board_norm.shape[0] - 1 - shift_px).reshape(n, -1)

    def lab_at(img, yy, xx):
        px = img[yy, xx].reshape(-1, 1, 3)
        return cv2.cvtColor(px, cv2.COLOR_BGR2LAB).reshape(yy.shape + (3,)).astype(np.float32)

    ref = lab_at(reference_norm, ys, xs)
    toward_white = np.array([255.0, 128.0, 128.0], np.float32) - ref
    white_norm2 = np.maximum((toward_white ** 2).sum(-1), 1.0)
    m = ys.shape[1]
    best = np.full(n, np.inf, np.float32)
    d75 = np.zeros(n, np.float32)
    best_obs = np.zeros((n, m, 3), np.float32)
    best_dist = np.zeros((n, m), np.float32)
    for dy in range(-shift_px, shift_px + 1):
        for dx in range(-shift_px, shift_px + 1):
            obs = lab_at(board_norm, ys + dy, xs + dx)
            diff = obs - ref
            # Glare mixes the printed colour with the light's white: take that part out (only
            # towards white, never darker), since a glossy print catches it and stays a print.
            alpha = np.clip((diff * toward_white).sum(-1) / white_norm2, 0.0, 1.0)
            dist = np.linalg.norm(diff - alpha[..., None] * toward_white, axis=-1)
            d = np.sort(dist, axis=1)
            better = d[:, m // 2] < best
            best[better] = d[better, m // 2]
            d75[better] = d[better, (3 * m) // 4]
            best_obs[better] = obs[better]
            best_dist[better] = dist[better]
    changed = best_dist > CHANGED
    share = changed.mean(axis=1)
    changed_lab = np.median(best_obs, axis=1)
    for k in np.flatnonzero(changed.any(axis=1)):
        changed_lab[k] = np.median(best_obs[k][changed[k]], axis=0)
    return SpaceChange(best, d75, share.astype(np.float32), changed_lab)


def register_to_template(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                         work_px_per_mm: float = 1.0, max_shift_mm: float = 8.0) -> tuple[np.ndarray, float]:
    """Where the template's spaces really are on a light-normalised flattened board.

    Corners found a few millimetres off (a rounded or worn board corner, a hand-clicked one) move
    every space a little, by a homography (a wrong corner flattens the board through a slightly wrong
    one). The spaces, and the cars on them, stand out from the paper, so the image
    of "how far from paper grey" is matched (ECC, homography) to an image of the template's filled
    quads over the map area. Returns (the quads moved onto the board, ECC score); the quads
    unchanged and 0.0 when the match fails or would move anything more than `max_shift_mm`.
    """
    quads_px = np.asarray(quads_px, dtype=float)
    h, w = board_norm.shape[:2]
    f = work_px_per_mm / px_per_mm
    sw, sh = int(round(w * f)), int(round(h * f))
    small = cv2.resize(board_norm, (sw, sh), interpolation=cv2.INTER_AREA)
    # Board pixel -> working pixel, pixel centres kept (as resize maps them): x' = (x + 0.5) f - 0.5.
    # Scaling by f alone put the template half a board pixel off the board it is matched to, which
    # the match then took for a true shift (0.35 mm off at 1 px/mm, 1 mm at 0.5).
    to_work = np.array([[sw / w, 0.0, 0.5 * sw / w - 0.5], [0.0, sh / h, 0.5 * sh / h - 0.5], [0.0, 0.0, 1.0]])
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    paper = np.array([199.0, 128.0, 128.0], np.float32)
    feat = np.minimum(np.linalg.norm(lab - paper, axis=-1), 60.0)
    tmpl = np.zeros((sh, sw), np.float32)
    for q in quads_px * to_work[[0, 1], [0, 1]] + to_work[:2, 2]:
        cv2.fillConvexPoly(tmpl, np.round(q * 4).astype(np.int32), 60.0, cv2.LINE_AA, 2)
    feat = cv2.GaussianBlur(feat, (0, 0), 1.5)
    tmpl = cv2.GaussianBlur(tmpl, (0, 0), 1.5)
    mask = np.zeros((sh, sw), np.uint8)
    b = int(round(BORDER_MM * work_px_per_mm))
    mask[b:sh - b, b:sw - b] = 255
    warp = np.eye(3, 3, dtype=np.float32)
    try:
        score, warp = cv2.findTransformECC(tmpl, feat, warp, cv2.MOTION_HOMOGRAPHY,
                                           (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 40, 1e-4), mask, 5)
    except cv2.error:
        return quads_px, 0.0
    full = np.linalg.inv(to_work) @ warp.astype(np.float64) @ to_work  # the match, in board pixels
    moved = cv2.perspectiveTransform(quads_px.reshape(-1, 1, 2), full).reshape(quads_px.shape)
    if np.abs(moved - quads_px).max() > max_shift_mm * px_per_mm:
        return quads_px, 0.0
    return moved, float(score)


def warp_quads_frame(board: np.ndarray, quads_from: np.ndarray, quads_to: np.ndarray) -> np.ndarray:
    """The board warped (affine, least squares over all quad corners) so points at `quads_from`
    land on `quads_to`: puts an image into the template's frame once its spaces were found."""
    src = np.asarray(quads_from, float).reshape(-1, 2)
    dst = np.asarray(quads_to, float).reshape(-1, 2)
    a = np.hstack([dst, np.ones((len(dst), 1))])
    m, *_ = np.linalg.lstsq(a, src, rcond=None)  # dst -> src (inverse map for warpAffine)
    h, w = board.shape[:2]
    return cv2.warpAffine(board, m.T, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)
