"""Find the printed spaces on a flattened empty board: rectangles of one colour in a dark outline.

In:  a flattened board photo (BGR; `board_image` resamples it to PX_PER_MM).
Out: `SpaceCandidates`, every rectangle of a space's size, in millimetres, with its colour.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from scoring.board import PRINTED_COLORS
from scoring.errors import TtrError

PX_PER_MM = 3.0  # working resolution: the photo is resampled to the board at this scale


# Typical printed colours (OpenCV Lab, 0..255) of the centre of a space, measured on the real board
# (IMG_4048). They only seed the colour classes: each run re-estimates them from its own photo.
DEFAULT_SPACE_LAB = {
    "red": (100, 167, 169), "orange": (141, 151, 178), "yellow": (203, 126, 197),
    "green": (148, 114, 179), "blue": (95, 130, 92), "pink": (131, 159, 134),
    "black": (40, 136, 136), "white": (222, 128, 137), "gray": (135, 129, 137),
}
# Colours that are not spaces: map background shades, dark ink, the red-brown border.
OTHER_LAB = [(151, 129, 138), (169, 129, 138), (185, 129, 138), (199, 128, 137), (210, 128, 137),
             (106, 134, 144), (60, 147, 149), (81, 140, 146)]

# Printed space size window for detections (mm); the template's quads use the measured median.
SPACE_LONG_MM = (16.0, 28.0)
SPACE_SHORT_MM = (4.0, 11.0)
SPACE_MM = (25.0, 8.0)  # typical printed space, long x short, to split bars of spaces run together
_GAP_MM = 2.0  # typical gap between two spaces of a track


@dataclass(frozen=True)
class SpaceCandidates:
    """Rectangles that look like printed spaces, in millimetres. Parallel arrays of length m."""

    centers: np.ndarray  # (m, 2)
    axes: np.ndarray  # (m, 2) unit vector along the long side
    sizes: np.ndarray  # (m, 2) long, short side
    lab: np.ndarray  # (m, 3) median colour of the space's middle
    colors: np.ndarray  # (m,) index into PRINTED_COLORS, nearest printed colour
    by_colour: np.ndarray  # (m,) bool: found by colour segmentation (its size is the printed size)

    def __len__(self):
        return len(self.centers)


# ----------------------------------------------------------------------------------------------
def _board_image(image: np.ndarray) -> np.ndarray:
    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise TtrError("the flattened photo must be a colour image")
    h, w = image.shape[:2]
    if abs((w / h) / (795 / 525) - 1) > 0.06:
        raise TtrError(f"the photo is {w}x{h}: not a board flattened to its outer corners (795:525)")
    if w < 700:
        raise TtrError(f"the photo is {w}x{h}: too small to measure (flatten it to at least 1000 px wide)")
    size = (int(round(795 * PX_PER_MM)), int(round(525 * PX_PER_MM)))
    return cv2.resize(image, size, interpolation=cv2.INTER_CUBIC)


def _classify_pixels(lab: np.ndarray, prototypes: dict[str, tuple]) -> np.ndarray:
    """Index into PRINTED_COLORS of the nearest printed colour, or -1 where a non-space colour is nearer."""
    protos = np.array([prototypes[c] for c in PRINTED_COLORS] + OTHER_LAB, dtype=np.float32)
    flat = lab.reshape(-1, 3).astype(np.float32)
    best = np.zeros(len(flat), np.int32)
    best_d = np.full(len(flat), np.inf, np.float32)
    for i, p in enumerate(protos):
        d = ((flat - p) ** 2).sum(1)
        better = d < best_d
        best[better], best_d[better] = i, d[better]
    best[best >= len(PRINTED_COLORS)] = -1
    return best.reshape(lab.shape[:2])


def _rect_of(points_xy: np.ndarray):
    (cx, cy), (w, h), ang = cv2.minAreaRect(points_xy.astype(np.float32))
    t = np.deg2rad(ang)
    u = np.array([np.cos(t), np.sin(t)])
    if h > w:
        u = np.array([-u[1], u[0]])
        w, h = h, w
    return np.array([cx, cy]), u, w, h


def _filled_and_opened(mask: np.ndarray, max_hole_px: float, open_px: int) -> np.ndarray:
    """A 0/1 mask with its holes under `max_hole_px` pixels filled, then lines thinner than
    `open_px` opened away: an outline or frame becomes the solid shape it encloses."""
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(1 - mask, connectivity=4)
    small = np.zeros(n, bool)
    small[1:] = stats[1:, 4] < max_hole_px
    solid = (mask.astype(bool) | small[lbl]).astype(np.uint8)
    return cv2.morphologyEx(solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (open_px,) * 2))


def _components_to_rects(mask: np.ndarray, min_fill: float):
    """Space-sized rectangles among the components of `mask`, as (centre, axis, long, short) in mm.

    A straight bar of k spaces run together (their gaps too faint to cut) is split into k equal
    spaces; a block of two lanes side by side into two bars first."""
    s = PX_PER_MM
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
    out = []
    lo_area = SPACE_LONG_MM[0] * SPACE_SHORT_MM[0] * s * s * 0.8
    hi_area = 6 * SPACE_LONG_MM[1] * 2 * SPACE_SHORT_MM[1] * s * s
    for i in range(1, n):
        x, y, w, h, area = stats[i]
        if not lo_area <= area <= hi_area:
            continue
        comp = (lbl[y:y + h, x:x + w] == i).astype(np.uint8)
        contours, _ = cv2.findContours(comp, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        outer = max(contours, key=cv2.contourArea)
        c, u, long_, short = _rect_of(outer.reshape(-1, 2) + [x, y])
        # Fill: the area of the convex hull (markings and bevel lines inside a space do not count).
        if cv2.contourArea(cv2.convexHull(outer)) / max(long_ * short, 1) < min_fill:
            continue
        c, long_mm, short_mm = c / s, long_ / s, short / s
        lanes = 1
        if SPACE_SHORT_MM[1] + 2.5 <= short_mm <= 19.0:  # two lanes side by side (about 17 mm)
            lanes = 2
        elif not SPACE_SHORT_MM[0] <= short_mm <= SPACE_SHORT_MM[1]:
            continue
        k = int(round((long_mm + _GAP_MM) / (SPACE_MM[0] + _GAP_MM)))
        if k < 1 or k > 6:
            continue
        each = (long_mm - (k - 1) * _GAP_MM) / k
        if not SPACE_LONG_MM[0] <= each <= SPACE_LONG_MM[1]:
            continue
        nrm = np.array([-u[1], u[0]])
        lane_w = short_mm / lanes
        for li in range(lanes):
            lc = c + nrm * (li - (lanes - 1) / 2) * lane_w
            for j in range(k):
                cj = lc + u * (j - (k - 1) / 2) * (each + _GAP_MM)
                out.append((cj, u, each, lane_w, k == 1 and lanes == 1))
    return out


def _thin_panels(mask: np.ndarray):
    """Thin straight light strips (the inside of a gray space's frame), as (centre, axis, long, short)."""
    s = PX_PER_MM
    n, lbl, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
    out = []
    for i in range(1, n):
        x, y, w, h, area = stats[i]
        if not 12 * 1.5 * s * s <= area <= 24 * 5.5 * s * s:
            continue
        ys, xs = np.nonzero(lbl[y:y + h, x:x + w] == i)
        c, u, long_, short = _rect_of(np.c_[xs + x, ys + y])
        long_mm, short_mm = long_ / s, short / s
        if 13 <= long_mm <= 24 and 2.0 <= short_mm <= 5.5 and area / max(long_ * short, 1) > 0.75:
            out.append((c / s, u, long_mm, short_mm))
    return out


def _sample_lab(lab: np.ndarray, center_mm, axis, long_mm: float, short_mm: float) -> np.ndarray:
    """Median Lab over the middle of a space (60 % of its length, 50 % of its width)."""
    s = PX_PER_MM
    t = np.linspace(-0.3, 0.3, 9)[:, None, None] * long_mm * axis
    n = np.array([-axis[1], axis[0]])
    v = np.linspace(-0.25, 0.25, 5)[None, :, None] * short_mm * n
    pts = (center_mm + t + v).reshape(-1, 2) * s
    xi = np.clip(np.round(pts[:, 0]).astype(int), 0, lab.shape[1] - 1)
    yi = np.clip(np.round(pts[:, 1]).astype(int), 0, lab.shape[0] - 1)
    return np.median(lab[yi, xi].astype(np.float32), axis=0)


def find_space_candidates(board_bgr: np.ndarray, prototypes: dict[str, tuple] | None = None) -> SpaceCandidates:
    """Rectangles of a printed space's size in a board image at PX_PER_MM (see module doc)."""
    prototypes = prototypes or DEFAULT_SPACE_LAB
    s = PX_PER_MM
    smooth = cv2.medianBlur(board_bgr, 3)
    lab = cv2.cvtColor(smooth, cv2.COLOR_BGR2LAB)
    L = lab[..., 0]
    # (a) colour segmentation, outlines (thin dark lines) removed so touching spaces come apart.
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(2.5 * s) | 1,) * 2)
    outline = cv2.morphologyEx(L, cv2.MORPH_BLACKHAT, k) > 14
    cls = _classify_pixels(lab, prototypes)
    found = []  # (centre, axis, long, short, exact size?, rank)
    open_k = np.ones((3, 3), np.uint8)
    for ci, colour in enumerate(PRINTED_COLORS):
        if colour == "gray":  # gray's inside is map-coloured: found by (b) and (c)
            continue
        m = ((cls == ci) & ~outline).astype(np.uint8)
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, open_k)
        found += [r + (0,) for r in _components_to_rects(m, 0.6)]
    # (b) light insides of outlined rectangles.
    Lf = cv2.GaussianBlur(L.astype(np.float32), (3, 3), 0)
    dark = (Lf < cv2.blur(Lf, (int(10 * s) | 1,) * 2) - 6).astype(np.uint8)
    found += [(c, u, lo, sh, False, 1) for c, u, lo, sh, _ in _components_to_rects(1 - dark, 0.8)]
    # (b') the narrow light panel inside a gray space's bevelled frame: a thin rectangle.
    panels = cv2.morphologyEx(1 - dark, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))
    found += [(c, u, lo, sh, False, 3) for c, u, lo, sh in _thin_panels(panels)]
    # (c) outlined rectangles filled in: dark mask with its small holes filled, thin lines opened away.
    solid = _filled_and_opened(dark, 300 * s * s, int(4 * s) | 1)
    found += [(c, u, lo, sh, False, 2) for c, u, lo, sh, _ in _components_to_rects(solid, 0.75)]
    # (d) gray frames: neutral pixels clearly darker than their surroundings form a ring around
    # each gray space; its hole filled and thin lines opened away leaves the space.
    labf = cv2.cvtColor(cv2.medianBlur(board_bgr, 5), cv2.COLOR_BGR2LAB).astype(np.float32)
    Lm = cv2.GaussianBlur(labf[..., 0], (3, 3), 0)
    rel = Lm - cv2.blur(Lm, (int(20 * s) | 1,) * 2)
    a_, b_ = labf[..., 1] - 128, labf[..., 2] - 128
    frame = ((rel < -12) & (np.abs(a_) < 8) & (b_ > -4) & (b_ < 16)).astype(np.uint8)
    solid = _filled_and_opened(frame, 230 * s * s, int(3.6 * s) | 1)
    found += [(c, u, lo, sh, False, 2) for c, u, lo, sh, _ in _components_to_rects(solid, 0.75)]
    # Merge detections of the same space (centres closer than 4 mm, same angle): prefer single
    # colour components (their size is the printed size), then the other detectors in order.
    # A detection that contradicts a kept one (another angle) stays: the chains choose between them.
    found.sort(key=lambda f: (not f[4], f[5]))
    kept = []
    for c, u, lo, sh, exact, rank in found:
        if any(np.hypot(*(c - k_[0])) < 4.0 and abs(u @ k_[1]) > 0.97 for k_ in kept):
            continue
        kept.append((c, u, lo, sh, exact, rank))
    if not kept:
        raise TtrError("no printed spaces found: is this a flattened photo of the board?")
    centers = np.array([k_[0] for k_ in kept])
    axes = np.array([k_[1] for k_ in kept])
    sizes = np.array([[k_[2], k_[3]] for k_ in kept])
    by_colour = np.array([k_[4] for k_ in kept])
    labs = np.array([_sample_lab(lab, c, u, 22.0, 7.0) for c, u in zip(centers, axes)])
    protos = np.array([prototypes[c] for c in PRINTED_COLORS], dtype=np.float32)
    colors = ((labs[:, None, :] - protos[None]) ** 2).sum(-1).argmin(1)
    return SpaceCandidates(centers, axes, sizes, labs, colors, by_colour)
