"""The city dots: check an outline against the board's own print, and correct it.

In: an image (BGR uint8) and a candidate outline in it (board order TL, TR, BR, BL).
Out: `DotCheck`: how many of the 36 copper city dots sit where the printed board has them, how far
the outline would have to move for them to sit there exactly, and that corrected outline.

Why the dots: they are printed copper discs at known places on every copy of the board, inside the
map, never covered by cars, and their layout has no symmetry (a board turned half round or seen in
a mirror puts no more than a few of them on dots). So they say whether an outline is the board's,
the right way round, without looking at the table at all; and their 36 centres pin a homography to
about a millimetre wherever the outline came from. Their places are the template's city centres,
which this same detector measured on the photo of the empty board (`vision.measure.cities.dot_centres`),
so the detector's own lean (light on one side of a disc) cancels.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from calibration.template import load_template
from vision.config import BYTE_MAX, CHANNELS, CORNERS, HUE_RANGE
from vision.locate.config import HUE_SHIFT, CopperConfig, DotConfig
from vision.rectify import BOARD_MM, board_corners_mm, board_to_photo_homography


@dataclass(frozen=True)
class DotCheck:
    """What the city dots say of one outline."""

    found: int  # dots agreeing with one homography (of `total`)
    total: int
    rms_mm: float  # their residual after that homography
    correction_mm: float  # mean distance the board's corners move under it (0: the outline is exact)
    corrected_xy: np.ndarray  # (4, 2) the outline that puts the dots where they belong


@lru_cache(maxsize=1)
def city_dots_mm() -> np.ndarray:
    """(36, 2) where the print puts the city dots: the template's city centres, in its order."""
    return np.array(list(load_template().cities.values()), np.float64)


@lru_cache(maxsize=None)
def _copper_lut(c: CopperConfig) -> np.ndarray:
    """Per-channel weights (HSV, OpenCV ranges) of 'copper-ness', as lookup tables: (1, 256, 3)
    float32, one table a channel."""
    h = np.arange(BYTE_MAX + 1, dtype=np.float32)
    hue = (h + HUE_SHIFT) % HUE_RANGE
    lut_h = np.clip(1 - np.abs(hue - c.hue) / c.hue_reach, 0, 1)
    lut_s = np.clip((h / BYTE_MAX - c.sat_from) / c.sat_rise, 0, 1)
    lut_v = np.clip((h / BYTE_MAX - c.value_from) / c.value_rise, 0, 1)
    return np.stack((lut_h, lut_s, lut_v), axis=-1)[None].astype(np.float32)


def dot_map(flat_bgr: np.ndarray, px_per_mm: float, cfg: DotConfig = DotConfig()) -> np.ndarray:
    """Response to small copper discs (the city dots): copper-ness, disc minus its surround."""
    w = cv2.LUT(cv2.cvtColor(flat_bgr, cv2.COLOR_BGR2HSV), _copper_lut(cfg.copper))
    copper = w[:, :, 0] * w[:, :, 1] * w[:, :, 2]
    k1 = max(cfg.min_kernel_px, int(round(cfg.disc_mm * px_per_mm)) | 1)
    k2 = max(k1 + 2, int(round(cfg.surround_mm * px_per_mm)) | 1)
    return cv2.blur(copper, (k1, k1)) - cv2.blur(copper, (k2, k2))


def paper_gain(image_bgr: np.ndarray, board_to_image: np.ndarray, cfg: DotConfig = DotConfig()) -> np.ndarray:
    """(3,) per-channel gains that make the map's paper (the median of the map, coarsely
    flattened) a neutral light grey: a colour cast in the light shifts copper out of its hues."""
    flat, m = _coarse_map(image_bgr, board_to_image, cfg)
    paper = np.median(flat[m:-m, m:-m].reshape(-1, CHANNELS), axis=0).astype(np.float64)
    return cfg.paper_grey / np.maximum(paper, cfg.paper_floor)


def local_paper_gains(image_bgr: np.ndarray, board_to_image: np.ndarray, at_mm: np.ndarray,
                      cfg: DotConfig = DotConfig()) -> np.ndarray:
    """(n, 3) gains as `paper_gain`'s, each from the paper within `cfg.local_paper_mm` of a point of
    `at_mm` (board mm): where two lights of different colours share the board (a lamp on one side,
    a window on the other) the cast differs from place to place, and one gain for the whole map
    leaves the dots of one side out of copper's hues."""
    flat, m = _coarse_map(image_bgr, board_to_image, cfg)
    h, w = flat.shape[:2]
    r = max(1, int(round(0.5 * cfg.local_paper_mm * cfg.paper_px_per_mm)))
    out = np.empty((len(at_mm), CHANNELS))
    for i, (x, y) in enumerate(np.asarray(at_mm, np.float64)):
        # The square round the point, slid inside the map (never onto the score track).
        cx = int(np.clip(round(x * cfg.paper_px_per_mm), m + r, w - m - r))
        cy = int(np.clip(round(y * cfg.paper_px_per_mm), m + r, h - m - r))
        paper = np.median(flat[cy - r:cy + r + 1, cx - r:cx + r + 1].reshape(-1, CHANNELS), axis=0)
        out[i] = cfg.paper_grey / np.maximum(paper.astype(np.float64), cfg.paper_floor)
    return out


def _coarse_map(image_bgr: np.ndarray, board_to_image: np.ndarray, cfg: DotConfig) -> tuple[np.ndarray, int]:
    """The board flattened at `cfg.paper_px_per_mm`, and the map's inset from its edge in pixels."""
    s = 1.0 / cfg.paper_px_per_mm
    w, h = int(BOARD_MM[0] / s), int(BOARD_MM[1] / s)
    to_mm = np.array([[s, 0, 0.5 * s], [0, s, 0.5 * s], [0, 0, 1.0]])
    flat = cv2.warpPerspective(image_bgr, board_to_image @ to_mm, (w, h),
                               flags=cv2.INTER_AREA | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return flat, int(round(cfg.map_inset_mm / s))


def dot_windows(image_bgr: np.ndarray, board_to_image: np.ndarray, px_per_mm: float, expected_mm: np.ndarray,
                reach_mm: float, gain: np.ndarray | None = None, cfg: DotConfig = DotConfig()
                ) -> list[tuple[np.ndarray, float, float]]:
    """Each expected dot's copper response (`dot_map`) over a window within `reach_mm` of where it
    should be, with the board mm of the window's top left: the costly part of finding the dots,
    done once however the peaks are then taken (`dot_peaks`). `board_to_image` maps board mm to
    `image_bgr`'s pixels; only a window round each dot is flattened (at `px_per_mm`), not the
    whole board; `gain` (see `paper_gain`; or (n, 3), one a dot, see `local_paper_gains`) scales
    its colours first."""
    r = max(1, int(round(reach_mm * px_per_mm)))
    pad = int(round(cfg.surround_mm * px_per_mm / 2)) + 1  # the surround the response subtracts
    side = 2 * (r + pad) + 1
    s = 1.0 / px_per_mm
    out = []
    gains = None if gain is None else np.broadcast_to(np.asarray(gain, np.float64), (len(expected_mm), CHANNELS))
    for i, (x, y) in enumerate(expected_mm):
        # Window pixel (j, i) shows board point (x0 + (j + 0.5) s, y0 + (i + 0.5) s).
        x0 = (round(x * px_per_mm - 0.5) - r - pad) * s
        y0 = (round(y * px_per_mm - 0.5) - r - pad) * s
        win_to_mm = np.array([[s, 0, x0 + 0.5 * s], [0, s, y0 + 0.5 * s], [0, 0, 1.0]])
        patch = cv2.warpPerspective(image_bgr, board_to_image @ win_to_mm, (side, side),
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
        if gains is not None:
            patch = np.clip(patch * gains[i], 0, BYTE_MAX).astype(np.uint8)
        # The response without its padding; its pixel (j, i) shows board point x0 + (j + pad + 0.5) s.
        out.append((dot_map(patch, px_per_mm, cfg)[pad:-pad, pad:-pad], x0 + pad * s, y0 + pad * s))
    return out


def dot_peaks(windows: list[tuple[np.ndarray, float, float]], px_per_mm: float, share: float,
              cfg: DotConfig = DotConfig()) -> tuple[np.ndarray, np.ndarray]:
    """Each window's dot (`dot_windows`): the response peak nearest its middle of those at least
    `share` of the strongest (`_nearest_strong_peak`): (n, 2) centres in board mm (weighted
    centroid of the peak's top half, to a fraction of a pixel) and (n,) peak responses."""
    k = max(1, int(round(cfg.peak_mm * px_per_mm)))
    s = 1.0 / px_per_mm
    found = np.full((len(windows), 2), np.nan)
    peak = np.zeros(len(windows))
    for i, (resp, x0, y0) in enumerate(windows):
        yy, xx = _nearest_strong_peak(resp, k, share)
        ya, xa = max(yy - k, 0), max(xx - k, 0)
        wt = np.clip(resp[ya:yy + k + 1, xa:xx + k + 1] - 0.5 * resp[yy, xx], 0, None)
        if resp[yy, xx] <= 0 or wt.sum() <= 0:
            continue
        gy, gx = np.mgrid[ya:ya + wt.shape[0], xa:xa + wt.shape[1]]
        cy, cx = (wt * gy).sum() / wt.sum(), (wt * gx).sum() / wt.sum()
        found[i] = (x0 + (cx + 0.5) * s, y0 + (cy + 0.5) * s)
        peak[i] = resp[yy, xx]
    return found, peak


def find_dots(image_bgr: np.ndarray, board_to_image: np.ndarray, px_per_mm: float, expected_mm: np.ndarray,
              reach_mm: float, gain: np.ndarray | None = None, cfg: DotConfig = DotConfig()
              ) -> tuple[np.ndarray, np.ndarray]:
    """Each expected dot's strongest response (`cfg.strong_share`) within `reach_mm` of where it
    should be: (n, 2) centres in board mm and (n,) peak responses (`dot_windows`, `dot_peaks`)."""
    windows = dot_windows(image_bgr, board_to_image, px_per_mm, expected_mm, reach_mm, gain, cfg)
    return dot_peaks(windows, px_per_mm, cfg.strong_share, cfg)


def _nearest_strong_peak(resp: np.ndarray, k: int, share: float) -> tuple[int, int]:
    """(row, col) of the response peak (a maximum within `k` pixels) nearest the window's middle,
    of those at least `share` of the strongest: a red car or orange print lit warm may outshine a
    dot nearby, but seldom sits nearer to where the dot should be. (0: the strongest.)"""
    top = np.unravel_index(int(np.argmax(resp)), resp.shape)
    if share <= 0 or resp[top] <= 0:
        return int(top[0]), int(top[1])
    peaks = np.argwhere((resp >= cv2.dilate(resp, np.ones((2 * k + 1, 2 * k + 1), np.uint8)))
                        & (resp >= share * resp[top]))
    mid = (np.array(resp.shape) - 1) / 2
    y, x = peaks[int(np.argmin(((peaks - mid) ** 2).sum(axis=1)))]
    return int(y), int(x)


def check_outline(image_bgr: np.ndarray, corners_xy, dots_mm: np.ndarray, cfg: DotConfig = DotConfig(),
                  fallback_share: float | None = None) -> DotCheck:
    """The city dots' verdict on an outline (photo pixels of `image_bgr`, board order): each dot
    looked for within `cfg.reach_mm` of its place (a coarse outline may be a centimetre off), one
    homography fitted robustly to those found, and the outline that homography puts right. (To put
    right an outline further off, check the corrected one again: `vision.locate` does.) Where the
    strongest peaks (`cfg.strong_share`) do not confirm it, a `fallback_share` takes each dot's
    nearest peak of at least that share instead, from the same responses, and the verdict more
    dots agree with is kept. Where neither confirms it, each dot is looked for again with its own
    neighbourhood's white balance (`local_paper_gains`: light of two colours), the same way."""
    corners = np.asarray(corners_xy, dtype=np.float64).reshape(CORNERS, 2)
    failed = DotCheck(0, len(dots_mm), float("inf"), float("inf"), corners)
    try:
        H_photo = board_to_photo_homography(corners)
        check = _check_balanced(image_bgr, H_photo, paper_gain(image_bgr, H_photo, cfg), dots_mm, failed, cfg,
                                fallback_share)
        if not verified(check, cfg) and cfg.local_paper_mm > 0:
            local = _check_balanced(image_bgr, H_photo, local_paper_gains(image_bgr, H_photo, dots_mm, cfg),
                                    dots_mm, failed, cfg, fallback_share)
            if local.found > check.found:
                check = local
    except (ValueError, cv2.error):
        return failed
    return check


def _check_balanced(image_bgr: np.ndarray, H_photo: np.ndarray, gain: np.ndarray, dots_mm: np.ndarray,
                    failed: DotCheck, cfg: DotConfig, fallback_share: float | None) -> DotCheck:
    """The dots' verdict with colours scaled by `gain`: each dot its strongest peak, or (where those
    do not confirm the outline) its nearest of at least `fallback_share`, whichever more dots agree."""
    windows = dot_windows(image_bgr, H_photo, cfg.px_per_mm, dots_mm, cfg.reach_mm, gain=gain, cfg=cfg)
    check = _fit_dots(*dot_peaks(windows, cfg.px_per_mm, cfg.strong_share, cfg), dots_mm, H_photo, failed, cfg)
    if fallback_share is not None and not verified(check, cfg):
        near = _fit_dots(*dot_peaks(windows, cfg.px_per_mm, fallback_share, cfg), dots_mm, H_photo, failed, cfg)
        if near.found > check.found:
            check = near
    return check


def _fit_dots(seen: np.ndarray, peak: np.ndarray, dots_mm: np.ndarray, H_photo: np.ndarray, failed: DotCheck,
              cfg: DotConfig) -> DotCheck:
    """The verdict of the dots `seen` (board mm of the outline's frame, `peak` their responses):
    one homography fitted robustly to those strong enough, and the outline it puts right."""
    ok = peak > cfg.min_response
    if ok.sum() < cfg.min_fit:
        return failed
    H, inl = cv2.findHomography(dots_mm[ok], seen[ok], cv2.RANSAC, cfg.inlier_mm)
    if H is None or inl is None or inl.sum() < cfg.min_fit:
        return failed
    inl = inl.ravel().astype(bool)
    H, _ = cv2.findHomography(dots_mm[ok][inl], seen[ok][inl], 0)  # least squares on the inliers
    res = np.linalg.norm(cv2.perspectiveTransform(dots_mm[ok][inl].reshape(-1, 1, 2), H).reshape(-1, 2)
                         - seen[ok][inl], axis=1)
    moved = cv2.perspectiveTransform(board_corners_mm().reshape(-1, 1, 2), H).reshape(-1, 2)
    # The dots seen at board-frame point H(d) of this outline belong at d: compose.
    corrected = cv2.perspectiveTransform(board_corners_mm().reshape(-1, 1, 2), H_photo @ H).reshape(-1, 2)
    return DotCheck(int(inl.sum()), len(dots_mm), float(np.sqrt(np.mean(res ** 2))),
                    float(np.mean(np.linalg.norm(moved - board_corners_mm(), axis=1))), corrected)


def verified(check: DotCheck, cfg: DotConfig = DotConfig()) -> bool:
    """The dots confirm the board is there, the right way round: most of them on one homography."""
    return check.found >= cfg.min_verified and check.rms_mm <= cfg.max_rms_mm
