"""Light the board: even out the light on its paper, put the template's spaces where they are on it,
and find the glare that evening out cannot undo.

In:  a flattened board (BGR uint8, the template frame at `px_per_mm`) and the template's spaces.
Out: `LitBoard`.

The board's own paper is the white reference: a coarse map of the paper's brightness per colour
channel (a high percentile of the paper pixels in each cell, away from the spaces) is divided out,
so the paper comes out the same grey everywhere, whatever the white balance, vignetting or shade of
the photo (and of a rendered board: the classifier sees the same kind of input). Every use of the
spaces starts here: reading, calibrating and training.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.settings import LightSettings
from vision.spaces import space_frames

PAPER_LAB = (199.0, 128.0, 128.0)  # the evened-out paper grey (190, 190, 190) BGR in OpenCV Lab
# The score track around the map (its band is 24.5 mm, and a margin): not paper, kept out of the map.
BORDER_MM = 26.0


@dataclass(frozen=True)
class LitBoard:
    """A flattened board with its light evened out, where its spaces are on it, and which of them
    lie under glare."""

    board: np.ndarray  # (H, W, 3) uint8 BGR, light-normalised
    quads_px: np.ndarray  # (N, 4, 2) every space on `board` (registered, or the template's)
    template_px: np.ndarray  # (N, 4, 2) the template's spaces in the same pixels
    px_per_mm: float
    register_score: float  # ECC score of the registration (0: not registered or it failed)
    glare: np.ndarray | None = None  # (N,) bool: the paper around the space stays too bright (None: not looked for)

    def __post_init__(self):
        if self.quads_px.shape != self.template_px.shape or self.board.ndim != 3:
            raise ValueError("LitBoard: quads and template quads must match, and the board be a colour image")
        if self.glare is not None and np.shape(self.glare) != (len(self.quads_px),):
            raise ValueError("LitBoard.glare must have one entry per space")


def light_board(flattened: np.ndarray, quads_mm: np.ndarray, px_per_mm: float,
                cfg: LightSettings = LightSettings()) -> LitBoard:
    """The template's spaces in pixels, the board's light evened out on its paper, the spaces
    registered on it (`cfg.register`), and the spaces under glare."""
    # Flattened pixel (u, v) shows the board point ((u + 0.5) / ppm, (v + 0.5) / ppm) mm.
    template_px = np.asarray(quads_mm, float) * px_per_mm - 0.5
    norm = normalise_light(flattened, template_px, px_per_mm, cfg)
    quads_px, score = register_to_template(norm, template_px, px_per_mm, cfg) if cfg.register else (template_px, 0.0)
    lit = LitBoard(norm, quads_px, template_px, px_per_mm, score)
    return replace(lit, glare=paper_left_bright(lit, cfg) > cfg.glare_paper_level)


def paper_mask(shape_hw: tuple[int, int], quads_px: np.ndarray, px_per_mm: float,
               cfg: LightSettings = LightSettings()) -> np.ndarray:
    """uint8 mask of board paper: inside the map, away from every space."""
    h, w = shape_hw
    mask = np.zeros((h, w), np.uint8)
    b = int(round(BORDER_MM * px_per_mm))
    mask[b:h - b, b:w - b] = 255
    c, axis, length, width = space_frames(quads_px)
    grow = cfg.paper_grow_mm * px_per_mm
    for ci, ai, li, wi in zip(c, axis, length, width):
        n = np.array([-ai[1], ai[0]])
        hl, hw = li / 2 + grow, wi / 2 + grow
        pts = np.array([ci - ai * hl - n * hw, ci + ai * hl - n * hw, ci + ai * hl + n * hw, ci - ai * hl + n * hw])
        cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 0)
    return mask


MIN_CELL_PIXELS = 30  # a cell with fewer paper pixels says nothing of the light (it takes the board-wide value)


def light_map(flattened: np.ndarray, mask: np.ndarray, cells: tuple[int, int], percentile: float,
              gain_range: tuple[float, float] = LightSettings().gain_range) -> np.ndarray:
    """(cells_y, cells_x, 3) float32 paper brightness per channel in each cell of the board
    (`flattened`: BGR uint8; `mask`: nonzero on paper), held within `gain_range` of the board-wide value."""
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
    valid = counts > MIN_CELL_PIXELS
    grid = np.full((ny * nx, 3), np.nan, np.float32)
    levels = np.iinfo(np.uint8).max + 1  # one key per (cell, 8-bit value)
    if valid.any():
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        n = counts[valid]
        virtual = (n - 1) * (percentile / 100.0)
        lo = np.floor(virtual).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        t = virtual - lo
        for ch in range(3):
            keys = np.sort(cell.astype(np.int64) * levels + flattened[..., ch][m])
            a = (keys[start[valid] + lo] % levels).astype(np.float64)
            b = (keys[start[valid] + hi] % levels).astype(np.float64)
            # numpy's linear interpolation, as it computes it
            grid[valid, ch] = np.where(t >= 0.5, b - (b - a) * (1 - t), a + (b - a) * t)
    grid = grid.reshape(ny, nx, 3)
    valid = valid.reshape(ny, nx)
    if not valid.any():
        return np.full((ny, nx, 3), LightSettings().paper_level, np.float32)
    overall = np.nanmedian(grid.reshape(-1, 3), axis=0)
    # Cells without paper (covered, or the border) take the board-wide value.
    grid[~valid] = overall
    # Keep the map gentle: a cell far from the board-wide value is more likely drawings than light.
    grid = np.clip(grid, overall * gain_range[0], overall * gain_range[1])
    return cv2.GaussianBlur(grid, (3, 3), 0)


MAP_SCALE = 0.25  # the light map is smooth: measured on a quarter-size copy as well as on the whole, 16x faster


def paper_light_map(board: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                    cells: tuple[int, int] = LightSettings().cells, percentile: float = LightSettings().percentile,
                    cfg: LightSettings = LightSettings()) -> np.ndarray:
    """`light_map` of a board's paper (away from the spaces at `quads_px`), on a quarter-size copy."""
    h, w = board.shape[:2]
    f = MAP_SCALE
    small = cv2.resize(board, (int(w * f), int(h * f)), interpolation=cv2.INTER_AREA)
    mask = paper_mask(small.shape[:2], np.asarray(quads_px) * f, px_per_mm * f, cfg)
    return light_map(small, mask, cells, percentile, cfg.gain_range)


def normalise_light(flattened: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                    cfg: LightSettings = LightSettings()) -> np.ndarray:
    """The flattened board with the paper brought to `cfg.paper_level` grey everywhere (uint8 BGR)."""
    h, w = flattened.shape[:2]
    grid = paper_light_map(flattened, quads_px, px_per_mm, cfg.cells, cfg.percentile, cfg)
    gain = cv2.resize((cfg.paper_level / np.maximum(grid, 1.0)).astype(np.float32), (w, h),
                      interpolation=cv2.INTER_LINEAR)
    return cv2.multiply(np.ascontiguousarray(flattened), gain, dtype=cv2.CV_8U)  # saturates at 0..255


def paper_left_bright(lit: LitBoard, cfg: LightSettings = LightSettings()) -> np.ndarray:
    """(N,) how bright the paper around each space still is once the light was evened out: the
    median paper value (mean of the channels) in the cell of a `cfg.glare_cells` grid over the
    board that holds the space's middle.

    `normalise_light` evens the light out over coarse cells, smoothed and held within
    `gain_range` of the board-wide value, so it follows a lamp's slope and a shadow but not glare
    off the glossy board far brighter than the rest (the phone exposing for it): there the paper
    stays far above `paper_level`, where evened-out paper's median lies a little below it (its
    `percentile` is brought to `paper_level`)."""
    h, w = lit.board.shape[:2]
    median = 50.0
    grid = paper_light_map(lit.board, lit.quads_px, lit.px_per_mm, cfg.glare_cells, median, cfg).mean(axis=2)
    c = space_frames(lit.quads_px)[0]
    ny, nx = cfg.glare_cells
    iy = np.clip((c[:, 1] * ny / h).astype(int), 0, ny - 1)
    ix = np.clip((c[:, 0] * nx / w).astype(int), 0, nx - 1)
    return grid[iy, ix].astype(np.float32)


def print_glare(lab: np.ndarray, printed_lab: np.ndarray, printed: np.ndarray, empty: np.ndarray,
                centres_mm: np.ndarray, cfg: LightSettings = LightSettings()) -> np.ndarray:
    """(N,) bool: the spaces under glare as the print around them shows it (`cfg.print_glare_loss`).

    `lab` (N, 3): each space's colour where it is printed, on the evened-out board; `printed_lab`
    (N, 3): its print colour as the reader starts from; `printed` (N,): its print colour's name;
    `empty` (N,): the spaces read empty; `centres_mm` (N, 2).

    Glare adds light, and the evening-out divides the paper back to its grey, so under glare G on
    paper P the print keeps P / (P + G) of its contrast with the paper, where a lamp's slope or a
    shadow (a gain) keeps all of it (`print_contrast_loss`); a space is under glare where the
    median loss of the empty spaces around it passes the setting."""
    out = np.zeros(len(lab), bool)
    if cfg.print_glare_loss <= 0:
        return out
    loss, telling = print_contrast_loss(lab, printed_lab, printed, empty, cfg)
    around = loss_around(loss, telling, centres_mm, centres_mm, cfg)
    counted = ~np.isnan(around)
    out[counted] = around[counted] >= cfg.print_glare_loss
    return out


def print_contrast_loss(lab: np.ndarray, printed_lab: np.ndarray, printed: np.ndarray, empty: np.ndarray,
                        cfg: LightSettings = LightSettings()) -> tuple[np.ndarray, np.ndarray]:
    """(N,) the share of its print's contrast with the paper each space has lost, and (N,) bool
    where that says something: the empty spaces printed at least `cfg.print_glare_contrast` from the
    paper (arguments as `print_glare`'s).

    Each print colour is first moved to this photo's (the median over its empty spaces: another
    print run, the light's cast); each space's loss is then measured along its print's way to the
    paper (0: all its contrast, 1: paper grey)."""
    lab, start, empty = np.asarray(lab, float), np.asarray(printed_lab, float), np.asarray(empty, bool)
    printed = np.asarray(printed)
    own = start.copy()
    for colour in np.unique(printed):
        m = (printed == colour) & empty
        if m.sum() >= cfg.print_glare_spaces:
            own[printed == colour] += np.median(lab[m] - start[m], axis=0)
    to_paper = np.array(PAPER_LAB) - own
    reach2 = np.sum(to_paper ** 2, axis=1)
    loss = np.sum((lab - own) * to_paper, axis=1) / np.maximum(reach2, 1e-6)
    return loss, empty & (reach2 >= cfg.print_glare_contrast ** 2)


def loss_around(loss: np.ndarray, telling: np.ndarray, centres_mm: np.ndarray, points_mm: np.ndarray,
                cfg: LightSettings = LightSettings()) -> np.ndarray:
    """(M,) the median `loss` of the `telling` spaces (centres `centres_mm`) within
    `cfg.print_glare_reach_mm` of each point of `points_mm` (M, 2); NaN where fewer than
    `cfg.print_glare_spaces` of them are."""
    out = np.full(len(points_mm), np.nan)
    telling = np.asarray(telling, bool)
    if telling.sum() < cfg.print_glare_spaces:
        return out
    c = np.asarray(centres_mm, float)[telling]
    p = np.asarray(points_mm, float)
    near = np.sum((p[:, None, :] - c[None, :, :]) ** 2, axis=-1) <= cfg.print_glare_reach_mm ** 2
    counted = near.sum(axis=1) >= cfg.print_glare_spaces
    if counted.any():
        out[counted] = np.nanmedian(np.where(near[counted], np.asarray(loss)[telling][None, :], np.nan), axis=1)
    return out


def veil_map(loss: np.ndarray, telling: np.ndarray, centres_mm: np.ndarray, shape_hw: tuple[int, int],
             px_per_mm: float, cfg: LightSettings = LightSettings()) -> np.ndarray:
    """(H, W) float32, the share of the light at each pixel of a lit board (`shape_hw`) that is a
    veil added over it: the print's lost contrast (`print_contrast_loss`) around points
    `cfg.veil_step_mm` apart, at most `cfg.veil_max`, 0 under `cfg.veil_floor` or where too few
    spaces tell, smoothed."""
    h, w = shape_hw
    nx = max(1, int(round(w / px_per_mm / cfg.veil_step_mm)))
    ny = max(1, int(round(h / px_per_mm / cfg.veil_step_mm)))
    gx = (np.arange(nx) + 0.5) * (w / px_per_mm) / nx  # the cells' middles, as resize maps them
    gy = (np.arange(ny) + 0.5) * (h / px_per_mm) / ny
    points = np.stack(np.meshgrid(gx, gy), axis=-1).reshape(-1, 2)
    around = loss_around(loss, telling, centres_mm, points, cfg)
    around = np.nan_to_num(around, nan=0.0)
    veil = np.where(around >= cfg.veil_floor, np.minimum(around, cfg.veil_max), 0.0).reshape(ny, nx).astype(np.float32)
    veil = cv2.GaussianBlur(veil, (3, 3), 0)
    return cv2.resize(veil, (w, h), interpolation=cv2.INTER_LINEAR)


def take_off_veil(lit: LitBoard, veil: np.ndarray, cfg: LightSettings = LightSettings()) -> LitBoard:
    """`lit` with a veil (`veil_map`: each pixel's share of added light) taken off: an added light
    moved every colour that share of the way to the paper's grey once evened out, so each is moved
    back, its contrast with the paper stretched by 1 / (1 - share)."""
    paper = np.float32(cfg.paper_level)
    board = paper + (lit.board.astype(np.float32) - paper) / (1.0 - veil[..., None])
    return replace(lit, board=np.clip(np.round(board), 0, 255).astype(np.uint8))


def register_to_template(board_norm: np.ndarray, quads_px: np.ndarray, px_per_mm: float,
                         cfg: LightSettings = LightSettings()) -> tuple[np.ndarray, float]:
    """Where the template's spaces really are on a light-normalised flattened board.

    Corners found a few millimetres off (a rounded or worn board corner, a hand-clicked one) move
    every space a little, by a homography (a wrong corner flattens the board through a slightly wrong
    one). The spaces, and the cars on them, stand out from the paper, so the image
    of "how far from paper grey" is matched (ECC, homography) to an image of the template's filled
    quads over the map area. Returns (the quads moved onto the board, ECC score); the quads
    unchanged and 0.0 when the match fails or would move anything more than `register_max_shift_mm`.
    """
    quads_px = np.asarray(quads_px, dtype=float)
    h, w = board_norm.shape[:2]
    f = cfg.register_px_per_mm / px_per_mm
    sw, sh = int(round(w * f)), int(round(h * f))
    small = cv2.resize(board_norm, (sw, sh), interpolation=cv2.INTER_AREA)
    # Board pixel -> working pixel, pixel centres kept (as resize maps them): x' = (x + 0.5) f - 0.5.
    # Scaling by f alone put the template half a board pixel off the board it is matched to, which
    # the match then took for a true shift.
    to_work = np.array([[sw / w, 0.0, 0.5 * sw / w - 0.5], [0.0, sh / h, 0.5 * sh / h - 0.5], [0.0, 0.0, 1.0]])
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    paper = np.array(PAPER_LAB, np.float32)
    ink = 60.0  # "how far from paper" saturates here: the spaces' outlines count, not how dark a car is
    feat = np.minimum(np.linalg.norm(lab - paper, axis=-1), ink)
    tmpl = np.zeros((sh, sw), np.float32)
    for q in quads_px * to_work[[0, 1], [0, 1]] + to_work[:2, 2]:
        cv2.fillConvexPoly(tmpl, np.round(q * 4).astype(np.int32), ink, cv2.LINE_AA, 2)  # quarter-pixel corners
    blur = 1.5  # working pixels: both images equally soft, so the match is smooth
    feat = cv2.GaussianBlur(feat, (0, 0), blur)
    tmpl = cv2.GaussianBlur(tmpl, (0, 0), blur)
    mask = np.zeros((sh, sw), np.uint8)
    b = int(round(BORDER_MM * cfg.register_px_per_mm))
    mask[b:sh - b, b:sw - b] = 255
    warp = np.eye(3, 3, dtype=np.float32)
    try:
        score, warp = cv2.findTransformECC(tmpl, feat, warp, cv2.MOTION_HOMOGRAPHY,
                                           (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, cfg.register_iterations,
                                            cfg.register_eps), mask, 5)
    except cv2.error:
        return quads_px, 0.0
    full = np.linalg.inv(to_work) @ warp.astype(np.float64) @ to_work  # the match, in board pixels
    moved = cv2.perspectiveTransform(quads_px.reshape(-1, 1, 2), full).reshape(quads_px.shape)
    if np.abs(moved - quads_px).max() > cfg.register_max_shift_mm * px_per_mm:
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
