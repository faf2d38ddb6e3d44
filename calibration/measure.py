"""Measure the board template from a flattened photo of an empty board.

In:  a BGR image of the whole board warped to its outer corners (any size in the board's 795:525
     proportions; 1500 x 990 or more works well), and the board facts from `scoring.board`.
Out: a `MeasuredTemplate`: the `Template` in millimetres plus what was found and what was guessed.

How (each step a function below):
1. `find_space_candidates`: printed spaces are rectangles of one colour inside a dark outline.
   Four detectors, merged: (a) colour segmentation (nearest printed colour in Lab, outlines cut
   away with a black-hat filter); (b) the light inside of an outlined rectangle (adaptive
   threshold); (b') the thin light panel inside a gray space's bevelled frame; (c) outlined
   rectangles with their insides filled; (d) gray frames (neutral pixels darker than their
   surroundings) with their holes filled. Each gives connected
   components -> `minAreaRect`; those of a space's size are kept, and straight bars of k spaces
   run together are cut into k.
2. `find_cities`: the city dot near each city's approximate place (board facts), by circle fit
   (which the tracks are found from); the template keeps `dot_centres`, the copper's centre.
3. `assign_tracks`: for every track, the chain of candidates that runs from its city a to its
   city b with the right number of spaces, of the right colour, each the next one along (about a
   space length further, in line with both spaces' long axes): a beam search per track, then the
   most confident tracks take their spaces first. One-colour doubles take two disjoint lanes.
4. `_refine_chain`: every space is moved onto its printed outline (`outline_map`, a black-hat
   map of dark lines) by a small search; a space no detector found is tracked on from its
   settled neighbour (bends up to 80 degrees), or, for a track with nothing found, from a city.
5. `find_score_cells`: the red score band along each edge; corners where bands cross; along each
   band the comb of 19 or 29 equally spaced cells that best fits the red cells and dark gaps.
Fixes the tool cannot make itself live in `OVERRIDES` below, each with its reason.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from calibration.template import Template, TrackTemplate, check_template
from scoring.board import PRINTED_COLORS, Board, load_board
from scoring.errors import TtrError
from vision.locate.config import DotConfig
from vision.locate.dots import find_dots, paper_gain

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

# Hand fixes the tool cannot make itself: (track id, space index) -> (centre mm, long-axis unit
# vector pointing from city a to city b, why). Empty: on the board measured for the packaged
# template (IMG_4048) every space was either detected or tracked onto its print (all 30 tracked
# ones were checked by eye on zoomed overlays). A fix goes here, with the photo that needed it.
OVERRIDES: dict[tuple[int, int], tuple[tuple[float, float], tuple[float, float], str]] = {}

TRACK_BGR = {"red": (40, 40, 220), "blue": (220, 90, 20), "green": (40, 190, 80), "yellow": (0, 220, 240),
             "black": (40, 40, 40), "white": (250, 250, 250), "orange": (0, 140, 255),
             "pink": (200, 120, 240), "gray": (150, 150, 150)}


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


@dataclass(frozen=True)
class MeasuredTemplate:
    template: Template
    candidates: SpaceCandidates
    guessed: tuple[tuple[int, int], ...]  # (track id, space index) placed by the chain, not detected
    space_mm: tuple[float, float]  # measured printed space size, long x short
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        n = sum(t.length for t in self.template.tracks)
        lines = [f"measured {n} spaces on {len(self.template.tracks)} tracks from {len(self.candidates)} "
                 f"candidate rectangles; space {self.space_mm[0]:.1f} x {self.space_mm[1]:.1f} mm; "
                 f"{len(self.guessed)} spaces placed by their neighbours"]
        lines += list(self.notes)
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
def _board_image(image: np.ndarray) -> np.ndarray:
    import cv2

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
    import cv2

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
    import cv2

    n, lbl, stats, _ = cv2.connectedComponentsWithStats(1 - mask, connectivity=4)
    small = np.zeros(n, bool)
    small[1:] = stats[1:, 4] < max_hole_px
    solid = (mask.astype(bool) | small[lbl]).astype(np.uint8)
    return cv2.morphologyEx(solid, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (open_px,) * 2))


def _components_to_rects(mask: np.ndarray, min_fill: float):
    """Space-sized rectangles among the components of `mask`, as (centre, axis, long, short) in mm.

    A straight bar of k spaces run together (their gaps too faint to cut) is split into k equal
    spaces; a block of two lanes side by side into two bars first."""
    import cv2

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
    import cv2

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
    import cv2

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


# ----------------------------------------------------------------------------------------------
def find_cities(board_bgr: np.ndarray, board: Board) -> dict[str, np.ndarray]:
    """Centre (mm) of each city dot, found near the city's place in the board facts."""
    import cv2

    s = PX_PER_MM
    W, H = board.board_mm
    gray = cv2.cvtColor(board_bgr, cv2.COLOR_BGR2GRAY)
    gray = cv2.GaussianBlur(gray, (5, 5), 1.5)
    out = {}
    win = int(14 * s)
    for name, c in board.cities.items():
        guess = np.array([c.x * W, c.y * H])
        cx, cy = (guess * s).astype(int)
        x0, y0 = max(cx - win, 0), max(cy - win, 0)
        roi = gray[y0:cy + win, x0:cx + win]
        circles = cv2.HoughCircles(roi, cv2.HOUGH_GRADIENT, dp=1, minDist=int(3 * s), param1=80, param2=12,
                                   minRadius=int(3.2 * s), maxRadius=int(6.0 * s))
        if circles is None:
            out[name] = guess
            continue
        cand = circles[0, :, :2] + [x0, y0]
        d = np.hypot(*(cand / s - guess).T)
        best = int(d.argmin())
        out[name] = cand[best] / s if d[best] < 9.0 else guess
    return out


def dot_centres(board_bgr: np.ndarray, cities: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each city's dot centre (mm) as the board locator's own dot detector (`vision.locate.dots`)
    sees it, within 5 mm of `cities`: the template's city centres, so that the outline check, the
    renderer's dots and the template agree on where a dot is. (The circle fit above, which the
    tracks are found from, sits ~1.3 mm off the copper's centre.)"""
    s = PX_PER_MM
    names = list(cities)
    near = np.array([cities[n] for n in names], np.float64)
    to_img = np.array([[s, 0, -0.5], [0, s, -0.5], [0, 0, 1.0]])  # board mm -> pixels (centres at +0.5)
    found, peak = find_dots(board_bgr, to_img, DotConfig().px_per_mm, near, 5.0, gain=paper_gain(board_bgr, to_img))
    ok = peak > DotConfig().min_response
    return {n: (found[i] if ok[i] else near[i]) for i, n in enumerate(names)}


# ----------------------------------------------------------------------------------------------
@dataclass
class _Chain:
    cost: float
    picks: list  # candidate index, or -1 for a space placed between found ones
    centers: list
    axes: list  # unit vectors pointing from city a towards city b
    steps: list = field(default_factory=list)  # centre-to-centre distances between found spaces


def _hermite(p0, t0, p1, t1, f: float) -> tuple[np.ndarray, np.ndarray]:
    """Point and unit tangent at fraction f of the smooth curve from p0 (tangent t0) to p1 (t1)."""
    d = float(np.hypot(*(p1 - p0)))
    h00, h10, h01, h11 = 2 * f ** 3 - 3 * f ** 2 + 1, f ** 3 - 2 * f ** 2 + f, -2 * f ** 3 + 3 * f ** 2, f ** 3 - f ** 2
    p = h00 * p0 + h10 * d * t0 + h01 * p1 + h11 * d * t1
    g00, g10, g01, g11 = 6 * f ** 2 - 6 * f, 3 * f ** 2 - 4 * f + 1, -6 * f ** 2 + 6 * f, 3 * f ** 2 - 2 * f
    tan = g00 * p0 + g10 * d * t0 + g01 * p1 + g11 * d * t1
    return p, tan / max(float(np.hypot(*tan)), 1e-9)


def _off_axis(c, u, city) -> float:
    """How far a city lies to the side of the line through a space's long axis (mm)."""
    d = city - c
    return abs(d[0] * u[1] - d[1] * u[0])


def _track_chains(t, A, B, cand: SpaceCandidates, space_long: float, beam: int = 40) -> list[_Chain]:
    """Chains of `t.length` spaces from city A to city B, cheapest first (a beam search).

    A chain steps from space to space: the next one lies about one space length (plus the track's
    own gap) further along, in line with both spaces' long axes. Spaces no detector found are
    placed on the smooth curve between found ones (a step over up to two) or beyond the last
    found one; each placed space costs more than a found one, so found spaces win."""
    n = t.length
    AB = B - A
    dist_ab = float(np.hypot(*AB))
    rel = cand.centers - A
    along = rel @ AB / dist_ab ** 2
    closest = A + np.clip(along, 0, 1)[:, None] * AB
    near = np.hypot(*(cand.centers - closest).T) <= 0.22 * dist_ab + 8
    idx = [int(i) for i in np.nonzero(near)[0]]
    step_lo, step_hi, step_guess = 0.92 * space_long, 1.45 * space_long, 1.1 * space_long
    end_lo, end_hi, end_best = 0.5 * space_long + 1.0, 0.5 * space_long + 34.0, 0.5 * space_long + 8.0
    PLACED = 2.0

    def colour_cost(i):
        got = PRINTED_COLORS[cand.colors[i]]
        if got == t.color:
            return 0.0
        if {got, t.color} <= {"gray", "white"}:
            return 0.8
        return 3.0

    def oriented(u, d):
        return u if u @ d >= 0 else -u

    def step_of(ch):
        return float(np.mean(ch.steps)) if ch.steps else step_guess

    levels: list[list[_Chain]] = [[] for _ in range(n + 1)]
    # First found space j after r placed ones, seen from city A.
    for j in idx:
        cj = cand.centers[j]
        D = float(np.hypot(*(cj - A)))
        dirA = (cj - A) / max(D, 1e-9)
        uj = oriented(cand.axes[j], B - A if D < 1e-9 else dirA)
        if uj @ (B - cj) < -0.3 * float(np.hypot(*(B - cj))):
            continue
        aim = abs(uj @ dirA)
        for r in range(0, min(3, n)):
            e = D - r * step_guess
            if not end_lo <= e <= end_hi or aim < (0.6 if r == 0 else 0.85) or _off_axis(cj, uj, A) > 8 + 0.3 * D:
                continue
            cs = [cj - uj * step_guess * (r - m) for m in range(r)] + [cj]
            cost = abs(e - end_best) / 10.0 + colour_cost(j) + (1 - aim) * 4 + PLACED * r
            levels[r + 1].append(_Chain(cost, [-1] * r + [j], cs, [uj] * (r + 1)))
    done: list[_Chain] = []
    for k in range(1, n + 1):
        levels[k].sort(key=lambda ch: ch.cost)
        for ch in levels[k][:beam]:
            c, u = ch.centers[-1], ch.axes[-1]
            st = step_of(ch)
            # Finish: the rest placed straight on, then city B.
            r = n - k
            if r <= 2:
                DB = float(np.hypot(*(B - c)))
                e = DB - r * st
                if end_lo <= e <= end_hi and _off_axis(c, u, B) <= 8 + 0.3 * DB:
                    cs = [c + u * st * (m + 1) for m in range(r)]
                    done.append(_Chain(ch.cost + abs(e - end_best) / 10.0 + PLACED * r, ch.picks + [-1] * r,
                                       ch.centers + cs, ch.axes + [u] * r, ch.steps))
            if k == n:
                continue
            options = []
            for j in idx:
                if j in ch.picks:
                    continue
                d = cand.centers[j] - c
                D = float(np.hypot(*d))
                if D < 1e-6 or d @ u <= 0:
                    continue
                uj = oriented(cand.axes[j], u)
                turn = float(u @ uj)
                if turn < 0.7:  # bends of up to about 45 degrees (Omaha-Chicago, Seattle-Calgary)
                    continue
                mid = (u + uj) / np.hypot(*(u + uj))
                lateral = abs(d[0] * mid[1] - d[1] * mid[0])
                for m in range(1, min(3, n - k) + 1):
                    sm = D / m
                    if not step_lo <= sm <= step_hi or lateral > 3.0 + 1.5 * (m - 1):
                        continue
                    var = abs(sm - st) / 2.0 if ch.steps else 0.0
                    if ch.steps and abs(sm - st) > 0.12 * space_long:
                        continue
                    cost = colour_cost(j) + lateral / 1.5 + (1 - turn) * 5 + var + PLACED * (m - 1)
                    options.append((cost, j, m, uj, D))
            options.sort(key=lambda o: o[0])
            for cost, j, m, uj, D in options[:4]:
                cj = cand.centers[j]
                placed = [_hermite(c, u, cj, uj, f / m) for f in range(1, m)]
                levels[k + m].append(_Chain(
                    ch.cost + cost, ch.picks + [-1] * (m - 1) + [j],
                    ch.centers + [p for p, _ in placed] + [cj], ch.axes + [tn for _, tn in placed] + [uj],
                    ch.steps + [D / m]))
    if not done:  # nothing fits: a straight chain, all placed, as a last resort
        u = AB / dist_ab
        span = dist_ab - 2 * end_best
        st = span / max(n - 1, 1)
        cs = [A + u * (end_best + st * k) for k in range(n)] if n > 1 else [A + AB / 2]
        done.append(_Chain(100.0 + PLACED * n, [-1] * n, cs, [u] * n))
    done.sort(key=lambda ch: ch.cost)
    return done[:beam]


def assign_tracks(cand: SpaceCandidates, cities: dict[str, np.ndarray], board: Board, space_long: float):
    """The chain of spaces for every track; returns {track id: _Chain}."""
    options = {t.id: _track_chains(t, cities[t.a], cities[t.b], cand, space_long) for t in board.tracks}
    chosen: dict[int, _Chain] = {}
    used: set[int] = set()

    def free(ch):
        return not any(p in used for p in ch.picks if p >= 0)

    def disjoint(c1, c2):
        return not (set(p for p in c1.picks if p >= 0) & set(p for p in c2.picks if p >= 0))

    # Most confident tracks first: the cheapest best chain, and the clearest over its runner-up.
    groups = []
    seen = set()
    for t in board.tracks:
        if t.id in seen:
            continue
        other = board.double_of(t)
        if other is not None and other.color == t.color:
            groups.append((t.id, other.id))
            seen |= {t.id, other.id}
        else:
            groups.append((t.id,))
            seen.add(t.id)

    def group_cost(g):
        return sum(options[i][0].cost for i in g) / len(g)

    for g in sorted(groups, key=group_cost):
        if len(g) == 1:
            pick = next((ch for ch in options[g[0]] if free(ch)), options[g[0]][-1])
            chosen[g[0]] = pick
        else:
            opts = [ch for ch in options[g[0]] if free(ch)]
            best = None
            for c1, c2 in itertools.combinations(opts[:25], 2):
                if disjoint(c1, c2) and _lanes_apart(c1, c2):
                    if best is None or c1.cost + c2.cost < best[0]:
                        best = (c1.cost + c2.cost, c1, c2)
            if best is None:
                c1 = opts[0] if opts else options[g[0]][0]
                best = (0, c1, _offset_lane(c1))
            lanes = sorted(best[1:], key=lambda ch: _lane_key(ch, board.tracks[g[0]], cities))
            chosen[g[0]], chosen[g[1]] = lanes
        for i in g:
            used |= {p for p in chosen[i].picks if p >= 0}
    return chosen


def _lanes_apart(c1: _Chain, c2: _Chain) -> bool:
    """Two lanes of a double run side by side: matching spaces 5..12 mm apart."""
    d = [float(np.hypot(*(a - b))) for a, b in zip(c1.centers, c2.centers)]
    return all(5.0 <= x <= 12.0 for x in d)


def _offset_lane(c1: _Chain) -> _Chain:
    cs = []
    for c, u in zip(c1.centers, c1.axes):
        cs.append(c + np.array([-u[1], u[0]]) * 8.5)
    return _Chain(c1.cost + 50, [-1] * len(cs), cs, list(c1.axes), list(c1.steps))


def _lane_key(chain: _Chain, track, cities) -> float:
    """Which lane of a one-colour double gets the lower track id: the upper lane, or for a track
    running more up-down than across, the left lane."""
    AB = cities[track.b] - cities[track.a]
    mean = np.mean(chain.centers, axis=0)
    return mean[0] if abs(AB[1]) > abs(AB[0]) else mean[1]


# ----------------------------------------------------------------------------------------------
def outline_map(board_bgr: np.ndarray) -> np.ndarray:
    """Dark thin lines (a space's printed outline, a gray space's frame) as a float map, 0..1."""
    import cv2

    L = cv2.cvtColor(cv2.GaussianBlur(board_bgr, (3, 3), 0), cv2.COLOR_BGR2LAB)[..., 0]
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (int(2.5 * PX_PER_MM) | 1,) * 2)
    bh = cv2.morphologyEx(L, cv2.MORPH_BLACKHAT, k).astype(np.float32)
    return np.minimum(bh / 30.0, 1.0)


@dataclass
class _Maps:
    """What the fitting samples: the outline map (0..1) and the photo in Lab (float), both at
    PX_PER_MM; and the spaces already settled (centres, axes, in mm), which new ones must avoid."""

    lines: np.ndarray
    lab: np.ndarray
    space_mm: tuple[float, float] = (25.0, 8.0)
    occupied: list = field(default_factory=list)  # (centre, axis) of settled spaces

    def overlap(self, centers: np.ndarray, axes: np.ndarray) -> np.ndarray:
        """(h,) share of 27 points spread over each hypothesis that fall inside a settled space."""
        if not self.occupied:
            return np.zeros(len(centers))
        a, b = self.space_mm[0] / 2, self.space_mm[1] / 2
        oc = np.array([c for c, _ in self.occupied])
        ou = np.array([u for _, u in self.occupied])
        near = np.hypot(*(oc[None] - centers.mean(0)).T.reshape(2, -1)) <= 2 * a + \
            np.hypot(*(centers - centers.mean(0)).T).max()
        oc, ou = oc[near], ou[near]
        if not len(oc):
            return np.zeros(len(centers))
        ti, tj = np.meshgrid(np.linspace(-0.45, 0.45, 9) * 2 * a, np.linspace(-0.4, 0.4, 3) * 2 * b)
        nrm = np.stack([-axes[:, 1], axes[:, 0]], 1)
        pts = centers[:, None, :] + ti.ravel()[None, :, None] * axes[:, None, :] + tj.ravel()[None, :, None] * nrm[:, None, :]
        d = pts[:, :, None, :] - oc[None, None]  # (h, 27, m, 2)
        along = np.abs((d * ou[None, None]).sum(-1))
        across = np.abs(d[..., 0] * -ou[None, None, :, 1] + d[..., 1] * ou[None, None, :, 0])
        inside = ((along < a - 0.3) & (across < b - 0.3)).any(-1)
        return inside.mean(axis=1)


def _outline_scores(maps: _Maps, centers: np.ndarray, axes: np.ndarray, long_mm: float,
                    short_mm: float, want_lab=None) -> np.ndarray:
    """How well rectangles (centres (h, 2), unit axes (h, 2), mm) sit on printed outlines: the
    weaker long side plus the weaker short side, less the inside (all means of the outline map);
    with `want_lab`, less a penalty for an inside of another colour."""
    lines = maps.lines
    s = PX_PER_MM
    inset = 0.5  # the printed outline lies just inside the space's edge
    a = long_mm / 2 - inset
    b = short_mm / 2 - inset
    tl = np.linspace(-a + 1, a - 1, 16)
    ts = np.linspace(-b + 0.8, b - 0.8, 6)
    u = axes[:, None, :]
    n = np.stack([-axes[:, 1], axes[:, 0]], 1)[:, None, :]
    c = centers[:, None, :]

    def mean_at(pts, image=lines):
        p = pts * s
        xi = np.clip(np.round(p[..., 0]).astype(int), 0, lines.shape[1] - 1)
        yi = np.clip(np.round(p[..., 1]).astype(int), 0, lines.shape[0] - 1)
        return image[yi, xi].mean(axis=1)

    side1 = mean_at(c + tl[None, :, None] * u + b * n)
    side2 = mean_at(c + tl[None, :, None] * u - b * n)
    end1 = mean_at(c + a * u + ts[None, :, None] * n)
    end2 = mean_at(c - a * u + ts[None, :, None] * n)
    gi, gj = np.meshgrid(np.linspace(-a + 3, a - 3, 8), np.linspace(-b + 2, b - 2, 3))
    inner_pts = c + gi.ravel()[None, :, None] * u + gj.ravel()[None, :, None] * n
    score = np.minimum(side1, side2) + 0.5 * np.minimum(end1, end2) - 0.5 * mean_at(inner_pts)
    if want_lab is not None:
        lab = mean_at(inner_pts, maps.lab)
        distance = np.sqrt(((lab - np.asarray(want_lab, float)) ** 2).sum(-1))
        score = score - 0.5 * np.minimum(distance, 60) / 60
    return score


def refine_space(maps: _Maps, center, axis, long_mm: float, short_mm: float,
                 reach_mm: tuple[float, float, float], want_lab=None,
                 avoid: bool = False) -> tuple[np.ndarray, np.ndarray, float]:
    """Move a space (within reach: along, across in mm, turn in degrees) onto its printed outline.
    Returns the centre, axis and the outline score there."""
    ra, rl, rt = reach_mm
    da = np.arange(-ra, ra + 1e-6, 0.25)
    dl = np.arange(-rl, rl + 1e-6, 0.25)
    dt = np.deg2rad(np.arange(-rt, rt + 1e-6, 1.0))
    A, Lo, T = np.meshgrid(da, dl, dt, indexing="ij")
    u0 = np.asarray(axis, float)
    n0 = np.array([-u0[1], u0[0]])
    cs = np.asarray(center, float) + A.ravel()[:, None] * u0 + Lo.ravel()[:, None] * n0
    ang = np.arctan2(u0[1], u0[0]) + T.ravel()
    us = np.stack([np.cos(ang), np.sin(ang)], 1)
    score = _outline_scores(maps, cs, us, long_mm, short_mm, want_lab)
    if avoid:
        score = score - 2.0 * maps.overlap(cs, us)
    # Small preference for staying put: ties go to the chain's own estimate.
    score = score - 0.004 * (np.abs(A.ravel()) + np.abs(Lo.ravel()))
    best = int(np.argmax(score))
    return cs[best], us[best], float(score[best])


# ----------------------------------------------------------------------------------------------
def find_score_cells(board_bgr: np.ndarray, board: Board) -> tuple[np.ndarray, list[str]]:
    """Centres (100, 2) mm of score cells 0..99. 0 is the round bottom-left corner, 20 top-left,
    50 top-right, 70 bottom-right; 19, 29, 19 and 29 numbered red cells run between them.

    The red cells make a band along each edge: its middle line (from how red each distance from
    the edge is) gives the corners where two bands cross; along each band the cells repeat at one
    pitch, found as the comb of that many teeth that best lands on red and between cells on the
    darker gaps."""
    import cv2

    s = PX_PER_MM
    W, H = (float(v) for v in board.board_mm)
    lab = cv2.cvtColor(cv2.GaussianBlur(board_bgr, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    red = np.clip(lab[..., 1] - 136.0, 0, 20)
    notes: list[str] = []

    def sample(points_mm):
        p = np.round(np.asarray(points_mm) * s).astype(int)
        return red[np.clip(p[..., 1], 0, red.shape[0] - 1), np.clip(p[..., 0], 0, red.shape[1] - 1)]

    depth = np.arange(0.0, 30.0, 0.25)
    # Band middle lines: distance from the left, top, right and bottom edge.
    def band_depth(edge_point, inward, along, length):
        t = np.linspace(0.15 * length, 0.85 * length, 200)
        pts = edge_point + t[:, None, None] * along + depth[None, :, None] * inward
        prof = sample(pts).mean(axis=0)
        half = prof >= prof.max() / 2
        return float((depth[half] * prof[half]).sum() / prof[half].sum())

    left = band_depth(np.array([0, 0]), np.array([1, 0]), np.array([0, 1]), H)
    top = band_depth(np.array([0, 0]), np.array([0, 1]), np.array([1, 0]), W)
    right = band_depth(np.array([W, 0]), np.array([-1, 0]), np.array([0, 1]), H)
    bottom = band_depth(np.array([0, H]), np.array([0, -1]), np.array([1, 0]), W)
    cells = np.full((100, 2), np.nan)
    cells[0] = (left, H - bottom)
    cells[20] = (left, top)
    cells[50] = (W - right, top)
    cells[70] = (W - right, H - bottom)
    for first, count, c0, c1 in ((1, 19, 0, 20), (21, 29, 20, 50), (51, 19, 50, 70), (71, 29, 70, 0)):
        a, z = cells[c0], cells[c1]
        span = float(np.hypot(*(z - a)))
        u = (z - a) / span
        nrm = np.array([-u[1], u[0]])
        t = np.arange(0, span, 0.25)
        prof = np.mean([sample(a + t[:, None] * u + off * nrm) for off in np.linspace(-4, 4, 9)], axis=0)
        prof = np.convolve(prof, np.ones(9) / 9, mode="same")
        best = None
        pitch0 = span / (count + 1.6)
        for pitch in np.arange(0.85 * pitch0, 1.15 * pitch0, 0.05):
            lo, hi = 0.6 * pitch, span - 0.6 * pitch - (count - 1) * pitch
            for t0 in np.arange(lo, hi, 0.25):
                teeth = t0 + pitch * np.arange(count)
                gaps = teeth[:-1] + pitch / 2
                score = np.interp(teeth, t, prof).mean() - np.interp(gaps, t, prof).mean()
                if best is None or score > best[0]:
                    best = (score, t0, pitch)
        if best is None:
            notes.append(f"score cells {first}..{first + count - 1}: no fit, spaced evenly between the corners")
            teeth = span * np.arange(1, count + 1) / (count + 1)
        else:
            teeth = best[1] + best[2] * np.arange(count)
        cells[first:first + count] = a + teeth[:, None] * u
    return cells, notes


# ----------------------------------------------------------------------------------------------
def _quad(center, axis, long_mm, short_mm) -> np.ndarray:
    """Corners of a space: near-a end first side, far end, far end other side, near end other side."""
    u = np.asarray(axis, float)
    n = np.array([-u[1], u[0]])
    hl, hs = u * long_mm / 2, n * short_mm / 2
    c = np.asarray(center, float)
    return np.array([c - hl - hs, c + hl - hs, c + hl + hs, c - hl + hs])


def _settle_found(ch: _Chain):
    """The chain's found spaces stay where their detectors put them (nudging them onto outlines
    or faces made them worse: on a drawn board with known spaces, and against the printed spaces
    of the played photos). Returns centres, axes and which are settled."""
    centers = [np.asarray(c, float) for c in ch.centers]
    axes = [np.asarray(u, float) for u in ch.axes]
    return centers, axes, [p >= 0 for p in ch.picks]


def _place_missing(maps: _Maps, centers, axes, settled, A, B, long_mm: float, short_mm: float, want_lab):
    """Spaces no detector found, placed on the print: one between two settled neighbours is
    fitted near the smooth curve between them; one beside a settled neighbour is tracked on from
    it (any bend up to 80 degrees, gap up to 4 mm); a track with nothing found is tracked from a
    city. New spaces avoid the spaces already settled anywhere on the board."""
    n = len(centers)
    centers, axes, settled = list(centers), list(axes), list(settled)
    while not all(settled):
        progress = False
        for k in range(n):
            if settled[k]:
                continue
            before = k > 0 and settled[k - 1]
            after = k < n - 1 and settled[k + 1]
            if before and after:
                p, tn = _hermite(centers[k - 1], axes[k - 1], centers[k + 1], axes[k + 1], 0.5)
                centers[k], axes[k] = _settle(maps, p, tn, long_mm, short_mm, (3.0, 2.0, 8.0), want_lab, avoid=True)
            elif before or after:
                j = k - 1 if before else k + 1
                sign = 1.0 if before else -1.0
                centers[k], axes[k] = _track_next(maps, centers[j], axes[j] * sign, long_mm, short_mm, want_lab)
                axes[k] = axes[k] * sign
            else:
                continue
            maps.occupied.append((centers[k], axes[k]))
            settled[k] = progress = True
        if not progress:  # nothing found on this track: follow the print from a city
            centers, axes = _track_from_city(maps, A, B, n, long_mm, short_mm, want_lab)
            maps.occupied.extend(zip(centers, axes))
            break
    return centers, axes


def _track_from_city(maps: _Maps, A, B, n: int, long_mm: float, short_mm: float, want_lab):
    """A track no detector found: tracked from either city (the first space the best outline fit
    a little way out towards the other city, each next one tracked on), whichever fits better."""
    best = None
    for start, end, backwards in ((A, B, False), (B, A, True)):
        centers, axes = _track_one_way(maps, start, end, n, long_mm, short_mm, want_lab)
        cs, us = np.array(centers), np.array(axes)
        fit = float((_outline_scores(maps, cs, us, long_mm, short_mm, want_lab) - 2.0 * maps.overlap(cs, us)).sum())
        if backwards:
            centers, axes = centers[::-1], [-u for u in axes[::-1]]
        if best is None or fit > best[0]:
            best = (fit, centers, axes)
    return best[1], best[2]


def _track_one_way(maps: _Maps, A, B, n: int, long_mm: float, short_mm: float, want_lab):
    AB = B - A
    base = np.arctan2(AB[1], AB[0])
    hc, hu, prior = [], [], []
    for dirn in np.deg2rad(np.arange(-60, 60.1, 3)):
        r = np.array([np.cos(base + dirn), np.sin(base + dirn)])
        for tilt in np.deg2rad(np.arange(-15, 15.1, 5)):
            v = np.array([np.cos(base + dirn + tilt), np.sin(base + dirn + tilt)])
            for d in np.arange(0.5 * long_mm + 2, 0.5 * long_mm + 22, 1.0):
                hc.append(A + r * d)
                hu.append(v)
                prior.append(0.1 * abs(dirn) / np.deg2rad(60))
    hc, hu = np.array(hc), np.array(hu)
    score = _outline_scores(maps, hc, hu, long_mm, short_mm, want_lab) - np.array(prior) - 2.0 * maps.overlap(hc, hu)
    best = int(np.argmax(score))
    centers, axes = [hc[best]], [hu[best]]
    for _ in range(n - 1):
        c, u = _track_next(maps, centers[-1], axes[-1], long_mm, short_mm, want_lab)
        centers.append(c)
        axes.append(u)
    return centers, axes


def _settle(maps, c, u, long_mm, short_mm, reach, want_lab=None, avoid=False):
    c2, u2, _ = refine_space(maps, c, u, long_mm, short_mm, reach, want_lab, avoid)
    return c2, (u2 if u2 @ u >= 0 else -u2)


def _track_next(maps, c, u, long_mm: float, short_mm: float, want_lab):
    """The space after the one at centre c (axis u pointing onwards): best outline fit among
    spaces that start 0.5..4 mm beyond its end, turned by up to 80 degrees either way (Raleigh-
    Charleston bends by about 70)."""
    nrm = np.array([-u[1], u[0]])
    end = c + u * long_mm / 2
    hyps_c, hyps_u, prior = [], [], []
    for turn in np.deg2rad(np.arange(-80, 80.1, 3)):
        v = np.array([np.cos(turn) * u[0] - np.sin(turn) * u[1], np.sin(turn) * u[0] + np.cos(turn) * u[1]])
        # A bend pivots about a corner of the two spaces, so the new space's near end may sit up
        # to a width to either side.
        for shift in np.linspace(-short_mm, short_mm, 9):
            for gap in np.arange(0.5, 4.01, 0.5):
                hyps_c.append(end + nrm * shift + v * (gap + long_mm / 2))
                hyps_u.append(v)
                # Most tracks run straight or gently curved: bends and offsets must earn their place.
                prior.append(0.1 * abs(turn) / np.deg2rad(45) + 0.02 * abs(shift))
    hc, hu = np.array(hyps_c), np.array(hyps_u)
    score = _outline_scores(maps, hc, hu, long_mm, short_mm, want_lab) - np.array(prior) - 2.0 * maps.overlap(hc, hu)
    best = int(np.argmax(score))
    return _settle(maps, hc[best], hu[best], long_mm, short_mm, (1.0, 1.0, 3.0), want_lab, avoid=True)


def _penetration(c1, u1, c2, u2, a: float, b: float) -> tuple[float, np.ndarray]:
    """How deep two equal rectangles (half sizes a, b) overlap, and the unit direction that
    separates them fastest (from 1 to 2); depth <= 0 when they do not overlap."""
    best = (np.inf, None)
    d = c2 - c1
    for axis in (u1, np.array([-u1[1], u1[0]]), u2, np.array([-u2[1], u2[0]])):
        r1 = a * abs(u1 @ axis) + b * abs(u1[0] * -axis[1] + u1[1] * axis[0])
        r2 = a * abs(u2 @ axis) + b * abs(u2[0] * -axis[1] + u2[1] * axis[0])
        depth = r1 + r2 - abs(d @ axis)
        if depth < best[0]:
            best = (depth, axis if d @ axis >= 0 else -axis)
    return best


def _separate(placed: dict, fixed: dict, long_mm: float, short_mm: float, rounds: int = 20) -> None:
    """Move overlapping spaces apart in place (placed: track id -> (centres, axes))."""
    keys = [(tid, k) for tid, (cs, _) in placed.items() for k in range(len(cs))]
    a, b = long_mm / 2, short_mm / 2
    for _ in range(rounds):
        moved = False
        centers = np.array([placed[t][0][k] for t, k in keys])
        for i, j in zip(*np.nonzero(np.triu(np.hypot(*(centers[:, None] - centers[None]).transpose(2, 0, 1)) < 2 * a, 1))):
            (ti, ki), (tj, kj) = keys[i], keys[j]
            ci, ui = placed[ti][0][ki], placed[ti][1][ki]
            cj, uj = placed[tj][0][kj], placed[tj][1][kj]
            depth, away = _penetration(ci, ui, cj, uj, a, b)
            if depth <= 0.05:
                continue
            fi, fj = fixed[ti][ki], fixed[tj][kj]
            share_i = 0.5 if fi == fj else (0.0 if fi else 1.0)
            step = depth + 0.05
            placed[ti][0][ki] = ci - away * step * share_i
            placed[tj][0][kj] = cj + away * step * (1 - share_i)
            moved = True
        if not moved:
            return


def _median_lab(cand: SpaceCandidates, colour: str, protos) -> np.ndarray:
    sel = cand.colors == PRINTED_COLORS.index(colour)
    return np.median(cand.lab[sel], axis=0) if sel.sum() >= 3 else np.asarray(protos[colour], float)


def measure_template(image: np.ndarray, board: Board | None = None, photo_name: str = "") -> MeasuredTemplate:
    """Measure every space, city dot and score cell on a flattened photo of the empty board
    (`photo_name` only goes into the template's `source` note)."""
    import cv2

    board = board or load_board()
    img = _board_image(image)
    cities = find_cities(img, board)
    cand = find_space_candidates(img)
    # Re-estimate the colour classes from this photo's own spaces, then detect again.
    protos = dict(DEFAULT_SPACE_LAB)
    for ci, colour in enumerate(PRINTED_COLORS):
        sel = cand.colors == ci
        if sel.sum() >= 5:
            protos[colour] = tuple(np.median(cand.lab[sel], axis=0))
    cand = find_space_candidates(img, protos)
    sized = cand.sizes[cand.by_colour]
    # The printed space: the coloured face plus its dark outline (about 0.4 mm each side).
    long_mm = float(np.median(sized[:, 0])) + 0.8
    short_mm = float(np.median(sized[:, 1])) + 0.8
    chains = assign_tracks(cand, cities, board, long_mm)

    maps = _Maps(outline_map(img), cv2.cvtColor(cv2.GaussianBlur(img, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32),
                 (long_mm, short_mm))
    space_lab = {c: _median_lab(cand, c, protos) for c in PRINTED_COLORS}
    settled = {}
    for t in board.tracks:  # first every found space, so placed ones can keep clear of them
        settled[t.id] = _settle_found(chains[t.id])
        maps.occupied.extend((c, u) for c, u, ok in zip(*settled[t.id]) if ok)
    placed = {}
    # Then the missing ones, tracks with the fewest missing first (their neighbours are surest).
    for t in sorted(board.tracks, key=lambda t: sum(not ok for ok in settled[t.id][2])):
        placed[t.id] = _place_missing(maps, *settled[t.id], cities[t.a], cities[t.b], long_mm, short_mm,
                                      space_lab[t.color])
    # Printed spaces never overlap: push apart any two that still do (the one not measured from
    # a whole coloured face moves; if both or neither were, both move half way).
    fixed = {t.id: [p >= 0 and bool(cand.by_colour[p]) for p in chains[t.id].picks] for t in board.tracks}
    _separate(placed, fixed, long_mm, short_mm)
    guessed, frames = [], {}
    for t in board.tracks:
        ch = chains[t.id]
        frames[t.id] = []
        for k, (c, u) in enumerate(zip(*placed[t.id])):
            if (t.id, k) in OVERRIDES:
                c, u = (np.array(v, float) for v in OVERRIDES[(t.id, k)][:2])
            elif ch.picks[k] < 0:
                guessed.append((t.id, k))
            frames[t.id].append((c, u))
    # Each space's colour as the reader sees it: on the board with its paper brought to one grey
    # (vision.spaces.normalise_light), so the colours say how the print stands to the paper,
    # whatever the light of this photo (the renderer draws them relative to its own paper).
    from vision.spaces import normalise_light

    quads = {t.id: np.array([_quad(c, u, long_mm, short_mm) for c, u in frames[t.id]]) for t in board.tracks}
    norm = normalise_light(img, np.concatenate(list(quads.values())) * PX_PER_MM, PX_PER_MM)
    lab = cv2.cvtColor(cv2.medianBlur(norm, 3), cv2.COLOR_BGR2LAB)
    tracks = []
    for t in board.tracks:
        colours = [_sample_lab(lab, c, u, long_mm, short_mm) for c, u in frames[t.id]]
        tracks.append(TrackTemplate(t.id, t.a, t.b, t.color, t.length, quads[t.id], np.array(colours)))
    score_cells, notes = find_score_cells(img, board)
    photo = f" ({photo_name})" if photo_name else ""
    source = (f"Measured by calibration.measure (ttr template measure) from a flattened photo of an empty "
              f"board{photo}: spaces found by colour segmentation and outlined-rectangle detection, "
              f"assigned to tracks by chains from city a to city b; each space is the measured median "
              f"rectangle {long_mm:.1f} x {short_mm:.1f} mm at its detected centre and angle; "
              f"{len(guessed)} spaces no detector found were tracked onto their print from their "
              f"neighbours; {len(OVERRIDES)} hand fixes. Score cells: comb fit along the border's red "
              f"band. One-colour doubles: the lower track id is the upper lane (the left lane where "
              f"the track runs more up-down than across).")
    template = Template(board_mm=tuple(float(v) for v in board.board_mm), cities=dot_centres(img, cities),
                        tracks=tuple(tracks), score_cells=score_cells, source=source)
    problems = check_template(template, board)
    if problems:
        raise TtrError(f"the measured template does not fit the board: {problems[0]}")
    return MeasuredTemplate(template, cand, tuple(guessed), (long_mm, short_mm), tuple(notes))


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Alignment:
    """How far each template space lies from a printed rectangle detected in a photo."""

    offset_mm: np.ndarray  # (309,) centre distance to the matched detection, NaN where none matched
    turn_deg: np.ndarray  # (309,) angle between the two long axes, NaN where none matched
    track_ids: np.ndarray  # (309,)

    def summary(self) -> str:
        ok = ~np.isnan(self.offset_mm)
        if not ok.any():
            return "no template space matched a detected printed rectangle"
        o, t = self.offset_mm[ok], self.turn_deg[ok]
        return (f"{ok.sum()} of {len(ok)} spaces matched a detected printed rectangle: centre offset "
                f"median {np.median(o):.2f} mm, 95th percentile {np.percentile(o, 95):.2f} mm, "
                f"max {o.max():.2f} mm; angle median {np.median(t):.1f} deg, max {t.max():.1f} deg")


def check_alignment(image: np.ndarray, template: Template, match_mm: float = 6.0) -> Alignment:
    """Compare a template with the printed rectangles detected in a flattened photo (spaces under
    trains are not detected and stay unmatched). A detection matches a space when its centre is
    within `match_mm` and its long axis within 15 degrees; among the detectors, one that finds the
    whole coloured face is preferred, else the nearest."""
    img = _board_image(image)
    cand = find_space_candidates(img)
    quads, track_ids, _ = template.all_spaces()
    centers = quads.mean(axis=1)
    axes = quads[:, 1] - quads[:, 0]
    axes = axes / np.hypot(axes[:, 0], axes[:, 1])[:, None]
    offset = np.full(len(quads), np.nan)
    turn = np.full(len(quads), np.nan)
    for i, (c, u) in enumerate(zip(centers, axes)):
        d = np.hypot(*(cand.centers - c).T)
        cos = np.abs(cand.axes @ u)
        ok = (d <= match_mm) & (cos >= np.cos(np.deg2rad(15)))
        if not ok.any():
            continue
        pick = np.nonzero(ok & cand.by_colour)[0] if (ok & cand.by_colour).any() else np.nonzero(ok)[0]
        j = pick[np.argmin(d[pick])]
        offset[i] = d[j]
        turn[i] = np.degrees(np.arccos(np.clip(cos[j], -1, 1)))
    return Alignment(offset, turn, track_ids)


def draw_template(image: np.ndarray, template: Template, labels: bool = True) -> np.ndarray:
    """A copy of `image` (a flattened board) with every space outline, city dot and score cell drawn."""
    import cv2

    h, w = image.shape[:2]
    t = template.for_image(w, h)
    out = image.copy()
    shift = 4  # sub-pixel drawing
    f = 1 << shift
    for track in t.tracks:
        colour = TRACK_BGR[track.color]
        for quad in track.spaces:
            pts = np.round(quad * f).astype(np.int32)
            cv2.polylines(out, [pts], True, (0, 0, 0), 2, cv2.LINE_AA, shift)
            cv2.polylines(out, [pts], True, colour, 1, cv2.LINE_AA, shift)
        if labels:
            c = track.centers()[len(track.spaces) // 2]
            org = (int(c[0]) - 6, int(c[1]) + 4)
            cv2.putText(out, str(track.id), org, cv2.FONT_HERSHEY_SIMPLEX, 0.35, (255, 255, 255), 2, cv2.LINE_AA)
            cv2.putText(out, str(track.id), org, cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 160), 1, cv2.LINE_AA)
    r = max(2, int(round(4.5 * t.scale_xy[0])))
    for c in t.cities.values():
        cv2.circle(out, (int(round(c[0] * f)), int(round(c[1] * f))), r * f, (255, 0, 255), 1, cv2.LINE_AA, shift)
    for i, c in enumerate(t.score_cells):
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), (0, 255, 255), cv2.MARKER_CROSS, 7, 1)
        if labels and i % 5 == 0:
            cv2.putText(out, str(i), (int(c[0]) + 3, int(c[1]) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                        (0, 255, 255), 1, cv2.LINE_AA)
    return out


def draw_measurement(image: np.ndarray, result: MeasuredTemplate) -> np.ndarray:
    """The template over the photo, plus every candidate rectangle (thin cyan) and placed spaces (red)."""
    import cv2

    out = draw_template(image, result.template)
    h, w = image.shape[:2]
    sx, sy = w / result.template.board_mm[0], h / result.template.board_mm[1]
    sc = np.array([sx, sy])
    for c, u, (lo, sh) in zip(result.candidates.centers, result.candidates.axes, result.candidates.sizes):
        q = _quad(c, u, lo, sh) * sc
        cv2.polylines(out, [np.round(q).astype(np.int32)], True, (255, 255, 0), 1)
    for tid, k in result.guessed:
        q = result.template.tracks[tid].spaces[k] * sc
        cv2.polylines(out, [np.round(q).astype(np.int32)], True, (0, 0, 255), 2)
    return out
