"""The board's outline by colour: the red-brown score-track band against whatever lies around it.

In: the photo (BGR uint8) and a reduced copy (`rectify.shrink`). Out: `find_outlines` gives the outlines
that fit, best first (corners in photo pixels, clockwise on screen, any start, and how well their
sides fit), and whether the frame seems to cut into the board. `board_order` then says which
corner is the board's top-left. Nothing here is trusted alone: `vision.locate` checks every outline
by the city dots before it is read.

How (about 1000 px on the long side for the search, full resolution for the edges):
1. Candidate quadrilaterals, likeliest first: the score track is a dark red-brown band all round
   the board, so red-brown pixels (three colour limits, from tight to loose) are grouped into
   blobs; the four straight outline runs with most support (Hough lines) that wrap the blobs give
   one quad, each blob's hull another (the light corner medallions cut the hull's corners, so
   corners always come from intersecting sides). For a table as red-brown as the band, the pale
   map's outline, stepped out by the band's 24.5 mm, gives more.
2. Each side is refined in the full-resolution photo: profiles across the side, a per-side colour
   discriminant (band against whatever lies outside), the outermost band-to-outside crossing to a
   fraction of a pixel, then a trimmed line fit; corners are where the lines meet. A side is
   scored by how many profiles agree, how well band and outside separate, and whether the strip
   inside differs from the map (else it is the band's inner edge). The worst side rates the quad;
   a clean one ends the search. Sides on the frame's edge are the photo's crop (band seen just
   inside) or a cut-off board (no band: `BoardCutOff`).
3. When three sides fit and one does not (a band washed out by side light), the fourth is slid
   along its neighbours to where the strip inside looks most like the band of the other three.
4. Which corner is the board's top-left: the quad is flattened both ways round and scored by the
   36 city dots, the other two orders being the same flattenings turned half round; the sides'
   proportions (795 x 525 mm) break near-ties.
"""
from __future__ import annotations

import dataclasses
import itertools
from functools import lru_cache

import cv2
import numpy as np

from scoring.board import load_board
from vision.locate.dots import dot_map
from vision.rectify import BOARD_MM, flatten

BAND_MM = load_board().score_track_mm  # width of the score-track band
CORNER_SKIP = 0.07  # fraction of each side left out at both ends (light corner medallions)
MIN_QUALITY = 0.15  # a board's worst side agrees at least this well (0..1.25)
GOOD_QUALITY = 0.5  # a fit this clean ends the search


@dataclasses.dataclass(frozen=True)
class _Candidate:
    corners: np.ndarray  # (4, 2) photo pixels, clockwise on screen, any start
    quality: float  # the worst side's agreement x band contrast (plus a little of the mean), 0..1.25
    cut_off: bool  # a side lies on the frame's edge with no band along it
    sides: tuple = ()  # per side (corner i -> i+1): agreement x band contrast
    seen_quality: float = 1.0  # the worst side that is not the frame's edge (0 if under two)


def find_outlines(img: np.ndarray, small: np.ndarray, scale: float, exhaustive: bool = False) -> tuple[list[_Candidate], bool]:
    """Outlines that fit (photo pixels of `img`; `small` = `img` shrunk by `scale`), best first, and
    whether the best fits run into the frame (the board may be cut off). The search stops at the
    first clean fit unless `exhaustive` (when the clean fit turned out to be the table's)."""
    best, cut_seen, tried = None, False, []
    # The warm-light candidates only when no other candidate fits well enough to be kept.
    candidates = itertools.chain(
        _coarse_quads(small),
        _when(lambda: best is None or best.quality < MIN_QUALITY, lambda: _warm_map_quads(small)))
    for q, from_map in candidates:
        corners = (q + 0.5) / scale - 0.5  # pixel centres of `small` -> of the photo
        try:
            if from_map:
                cand = _refine_from_map(img, corners)
                cand = _refine_from_map(img, cand.corners, second=True)
            else:
                cand = _refine(img, corners)
                cand = _refine(img, cand.corners, second=True)
        except _Reject:
            continue
        # A board whose seen sides fit well but that runs into the frame without its band.
        cut_seen |= cand.cut_off and cand.seen_quality >= 0.3
        tried.append(cand)
        if best is None or cand.quality > best.quality:
            best = cand
        if best.quality >= GOOD_QUALITY and not exhaustive:
            break  # candidates come strongest first; a clean fit needs no rivals
    if best is not None and (best.quality < GOOD_QUALITY or exhaustive):
        # Three good sides and a missed fourth: complete the likeliest few candidates.
        for cand in sorted(tried, key=lambda c: -c.quality)[:3]:
            completed = _complete_weak_side(img, cand)
            # Only a clear gain: a side slid onto some inner edge can score a little higher.
            if completed is not None and completed.quality > cand.quality + 0.05:
                tried.append(completed)
    if best is None:
        return [], False
    cut = (cut_seen and best.quality < GOOD_QUALITY) or (best.cut_off and best.quality >= MIN_QUALITY)
    return sorted((c for c in tried if c.quality >= MIN_QUALITY), key=lambda c: -c.quality), cut


def board_order(small: np.ndarray, scale: float, corners: np.ndarray) -> np.ndarray:
    """`corners` (photo pixels, clockwise on screen, any start) rolled to the board's own order
    TL, TR, BR, BL, by the city dots."""
    return np.roll(corners, -_board_order(small, (corners + 0.5) * scale - 0.5), axis=0)


def refine_sides(img: np.ndarray, corners: np.ndarray) -> _Candidate | None:
    """The outline's four sides refitted to the band's outer edge (order kept), or None."""
    try:
        cand = _refine(img, corners)
        return _refine(img, cand.corners, second=True)
    except _Reject:
        return None


# ---------------------------------------------------------------- 1-2: coarse quadrilaterals

# Red-brown colour limits per level: (max hue after shifting red to 12, min saturation).
# "tight" survives warm orange wood, "loose" takes a band washed out by side light.
_LEVELS = {"tight": (12 + 9, 80), "strict": (12 + 14, 65), "loose": (12 + 16, 40)}


def border_mask(image_bgr: np.ndarray, level: str = "strict") -> np.ndarray:
    """uint8 0/1 mask of red-brown score-track colours (dark to mid red-orange, saturated).

    Candidates from several levels are tried and the fits scored, so no single colour limit has
    to suit every table and light.
    """
    max_hue, min_sat = _LEVELS[level]
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    hue = (hsv[:, :, 0].astype(np.int16) + 12) % 180  # red wraps round 0: shift it to 12
    s, v = hsv[:, :, 1].astype(np.int16), hsv[:, :, 2].astype(np.int16)
    # Chroma (saturation x value) too: in near-black pixels saturation is mostly sensor noise.
    mask = (hue <= max_hue) & (s >= min_sat) & (v >= 35) & (v <= 235) & (s * v >= 18 * 255)
    if level == "loose":
        mask &= s * 3 >= 255 - v  # pale and bright: not a band even in side light
    return mask.astype(np.uint8)


def _coarse_quads(small: np.ndarray):
    """Candidate board quadrilaterals (4, 2) in `small`'s pixels, clockwise on screen, likeliest
    first (a generator: the search stops at the first clean fit)."""
    seen: list[np.ndarray] = []
    smooth = cv2.blur(small, (3, 3))  # sensor noise would speckle the colour masks
    for level in ("strict", "map", "tight", "loose"):
        quads = _quads_from_map(smooth) if level == "map" else _quads_from_mask(border_mask(smooth, level))
        for q in quads:
            if not any(np.allclose(q, p, atol=4) for p in seen):
                seen.append(q)
                yield q, level == "map"


def _when(condition, make):
    """Items of `make()` if `condition()` holds when the iteration reaches them (lazy chaining)."""
    if condition():
        yield from make()


def _warm_map_quads(small: np.ndarray):
    """Last-resort candidates (as `_coarse_quads`), when no other candidate fits at all: in warm
    light over a wooden table the band's colours are everywhere and the map itself is too saturated
    for `map_mask`, so the map is taken as the photo's least saturated bright part."""
    smooth = cv2.blur(small, (3, 3))
    limit = _least_saturated_limit(smooth)
    if limit > MAP_MAX_SAT:
        for q in _quads_from_map(smooth, limit):
            yield q, True


MAP_MAX_SAT = 70  # HSV saturation of the map in neutral light (it is pale and greyish)


def map_mask(image_bgr: np.ndarray, max_sat: float = MAP_MAX_SAT) -> np.ndarray:
    """uint8 0/1 mask of the pale, greyish map inside the band (light, little colour)."""
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    s, v = hsv[:, :, 1], hsv[:, :, 2]
    return ((s <= max_sat) & (v >= 110)).astype(np.uint8)


def _least_saturated_limit(image_bgr: np.ndarray) -> float:
    """Otsu's split of the saturation of the bright pixels: below it, the least saturated part."""
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    bright = hsv[:, :, 1][hsv[:, :, 2] >= 110]
    if bright.size < 100:
        return 0.0
    t, _ = cv2.threshold(bright.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(t)


def _quads_from_map(smooth: np.ndarray, max_sat: float = MAP_MAX_SAT) -> list[np.ndarray]:
    """Board quadrilaterals grown from the map's outline by the band's width.

    For tables as red-brown as the band itself: the map is the large pale area, its edge is the
    band's inner edge, and the board's edge lies 24.5 mm further out on every side.
    """
    inner = []
    mask = map_mask(smooth, max_sat)
    if max_sat > MAP_MAX_SAT:
        # With the looser limit the score cells' light numbers pass too; they lie a few pixels
        # outside the map's edge, and the blob closing in _quads_from_mask would join them to the
        # map, growing it by half a band. Only large pale parts count then.
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        large = stats[:, cv2.CC_STAT_AREA] >= 0.002 * mask.size
        large[0] = False
        mask = large[labels].astype(np.uint8)
    for q in _quads_from_mask(mask):
        # Board mm of the map's corners; which sides are long does not matter much (the band is
        # equally wide all round) and refining settles the rest.
        L = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
        long_first = L[0] + L[2] >= L[1] + L[3]
        W, H = (BOARD_MM if long_first else BOARD_MM[::-1])
        m = BAND_MM
        mm_in = np.array([[m, m], [W - m, m], [W - m, H - m], [m, H - m]])
        mm_out = np.array([[0, 0], [W, 0], [W, H], [0, H]], float)
        Hm = cv2.getPerspectiveTransform(mm_in.astype(np.float32), q.astype(np.float32))
        inner.append(cv2.perspectiveTransform(mm_out.reshape(-1, 1, 2), Hm).reshape(-1, 2))
    return inner


def _quads_from_mask(mask: np.ndarray) -> list[np.ndarray]:
    """Quadrilaterals wrapping the mask's large blobs.

    The band's blobs break at the light corner medallions (and at glare or a hand), so besides each
    large blob alone, blobs lying close to it are merged with it.
    """
    h, w = mask.shape[:2]
    k = max(3, int(round(max(h, w) / 180)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    areas = stats[:, cv2.CC_STAT_AREA].copy()
    areas[0] = 0
    big = [i for i in np.argsort(-areas) if areas[i] >= 0.002 * h * w][:40]
    if not big:
        return []
    # Outer outline of each big blob (far fewer points than the blob, same hull).
    outline: dict[int, np.ndarray] = {}
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    wanted = set(int(i) for i in big)
    for c in contours:
        x, y = c[0, 0]
        lab = int(labels[y, x])
        if lab in wanted:
            outline[lab] = np.vstack([outline[lab], c.reshape(-1, 2)]) if lab in outline else c.reshape(-1, 2)
    big = [int(i) for i in big if int(i) in outline]
    quads = []
    hq = _hough_quad([outline[i] for i in big], (w, h))
    if hq is not None:
        quads.append(hq)
    reach = max(3, int(round(0.06 * max(h, w))))
    boxes = stats[:, :4]
    hulls = []
    for seed in big[:3]:
        if areas[seed] < 0.01 * h * w:
            break
        hulls.append(cv2.convexHull(outline[seed]))
        # Merge: repeatedly add big blobs whose boxes come within `reach` of a member's box.
        members = {seed}
        changed = True
        while changed:
            changed = False
            for j in big:
                if j not in members and any(_boxes_near(boxes[j], boxes[m], reach) for m in members):
                    members.add(j)
                    changed = True
        if len(members) > 1:
            hulls.append(cv2.convexHull(np.vstack([outline[j] for j in members])))
    for hull in hulls:
        q = _quad_from_hull(hull.reshape(-1, 2).astype(np.float64), (w, h))
        if q is not None and not any(np.allclose(q, p, atol=3) for p in quads):
            quads.append(q)
    return quads


def _hough_quad(outlines: list[np.ndarray], size_wh) -> np.ndarray | None:
    """The quadrilateral of four straight outline runs with the most support (Hough lines).

    Unlike a hull, this ignores clutter beside the board (cars, a red box) as long as the board's
    four sides are the longest straight runs of band outline that wrap (almost) all of it.
    """
    w, h = size_wh
    edges = np.zeros((h, w), np.uint8)
    cv2.drawContours(edges, [o.reshape(-1, 1, 2) for o in outlines], -1, 255, 1)
    pts = np.column_stack(np.nonzero(edges)[::-1]).astype(np.float64)
    if len(pts) < 50:
        return None
    lines = cv2.HoughLines(edges, 1, np.pi / 240, max(20, int(0.1 * min(w, h))))
    if lines is None or len(lines) < 4:
        return None
    diag = float(np.hypot(w, h))
    centre = pts.mean(axis=0)
    kept = []  # (point on line, unit direction, outward normal angle, rank)
    for rho, theta in lines[:60, 0]:
        nrm = np.array([np.cos(theta), np.sin(theta)])
        if rho - centre @ nrm < 0:
            nrm, rho = -nrm, -rho
        phi = float(np.arctan2(nrm[1], nrm[0]) % (2 * np.pi))
        dist = rho - centre @ nrm
        if any(abs((phi - k[2] + np.pi) % (2 * np.pi) - np.pi) < np.radians(4) and abs(dist - k[3]) < 0.02 * diag
               for k in kept):
            continue
        kept.append((nrm * rho, np.array([-nrm[1], nrm[0]]), phi, dist, len(kept)))
        if len(kept) >= 12:
            break
    if len(kept) < 4:
        return None
    sub = pts[:: max(1, len(pts) // 1500)]
    combos = []
    for combo in itertools.combinations(range(len(kept)), 4):
        ls = sorted((kept[i] for i in combo), key=lambda k: k[2])
        gaps = np.diff([k[2] for k in ls] + [ls[0][2] + 2 * np.pi])
        if np.any(gaps < np.radians(40)) or np.any(gaps > np.radians(140)):
            continue
        combos.append((sum(k[4] for k in ls), ls))
    combos.sort(key=lambda c: c[0])  # Hough returns lines strongest first: low rank sum = strong
    for _, ls in combos[:40]:
        q = []
        for j in range(4):
            p = _line_intersection((ls[j - 1][0], ls[j - 1][1]), (ls[j][0], ls[j][1]))
            if p is None:
                break
            q.append(p)
        if len(q) != 4:
            continue
        q = _clockwise(np.array(q))
        if not _convex(q) or _area(q) < 0.08 * w * h:
            continue
        if _inside_share(q, sub, tol=0.008 * diag) >= 0.95:
            return q
    return None


def _inside_share(q: np.ndarray, pts: np.ndarray, tol: float) -> float:
    """Share of points inside the clockwise quad q, allowing `tol` pixels outside."""
    inside = np.ones(len(pts), bool)
    for i in range(4):
        p0, p1 = q[i], q[(i + 1) % 4]
        d = (p1 - p0) / np.linalg.norm(p1 - p0)
        inside &= d[0] * (pts[:, 1] - p0[1]) - d[1] * (pts[:, 0] - p0[0]) >= -tol
    return float(inside.mean())


def _boxes_near(a, b, reach) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    gap_x = max(bx - (ax + aw), ax - (bx + bw), 0)
    gap_y = max(by - (ay + ah), ay - (by + bh), 0)
    return gap_x <= reach and gap_y <= reach


def _quad_from_hull(hull: np.ndarray, size_wh) -> np.ndarray | None:
    """The smallest quadrilateral with its sides on four of the hull's sides.

    The light corner medallions cut the band's corners off, so the board's corners are where its
    sides meet, outside the hull; a corner cut by the frame is handled the same way.
    """
    w, h = size_wh
    hull32 = hull.astype(np.float32).reshape(-1, 1, 2)
    area = cv2.contourArea(hull32)
    if area < 0.08 * w * h:
        return None
    peri = cv2.arcLength(hull32, True)
    poly = cv2.approxPolyDP(hull32, 0.004 * peri, True).reshape(-1, 2).astype(np.float64)
    if len(poly) < 4:
        return None
    poly = _clockwise(poly)
    a, b = poly, np.roll(poly, -1, axis=0)
    lengths = np.linalg.norm(b - a, axis=1)
    idx = [i for i in np.argsort(-lengths)[:14] if lengths[i] >= 0.02 * peri]
    idx = sorted(idx)
    if len(idx) < 4:
        return None
    best, best_area = None, np.inf
    for combo in itertools.combinations(idx, 4):
        sides = [(a[i], b[i] - a[i]) for i in combo]  # (point, direction) of each side's line
        corners = []
        for j in range(4):
            p = _line_intersection(sides[j - 1], sides[j])
            if p is None:
                break
            corners.append(p)
        if len(corners) != 4:
            continue
        q = np.array(corners)
        if not _convex(q) or np.any(np.abs(q) > 4 * max(w, h)):
            continue
        qa = _area(q)
        # Each side's line leaves the hull on one side; the quad must be the one that wraps it.
        if qa < 0.98 * area or qa >= best_area:
            continue
        if _area(_clockwise(q)) <= 0 or not _wraps(q, poly):
            continue
        best, best_area = q, qa
    if best is None or best_area > 1.6 * area:
        return None
    return _clockwise(best)


def _area(q: np.ndarray) -> float:
    x, y = q[:, 0], q[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _wraps(q: np.ndarray, pts: np.ndarray, tol: float = 2.0) -> bool:
    """All points inside the convex quad q (with a small tolerance)."""
    q = _clockwise(q)
    for i in range(4):
        p0, p1 = q[i], q[(i + 1) % 4]
        d = p1 - p0
        # clockwise on screen (y down): inside is to the right of each side, i.e. cross >= 0
        cross = d[0] * (pts[:, 1] - p0[1]) - d[1] * (pts[:, 0] - p0[0])
        if np.any(cross < -tol * np.linalg.norm(d)):
            return False
    return True


def _convex(q: np.ndarray) -> bool:
    pts = [(float(x), float(y)) for x, y in q]
    cross = []
    for i in range(4):
        (x0, y0), (x1, y1), (x2, y2) = pts[i], pts[(i + 1) % 4], pts[(i + 2) % 4]
        cross.append((x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1))
    return all(c > 0 for c in cross) or all(c < 0 for c in cross)


def _clockwise(q: np.ndarray) -> np.ndarray:
    """Order as clockwise on screen (y down): positive shoelace area in image coordinates."""
    x, y = q[:, 0], q[:, 1]
    area2 = np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
    return q if area2 > 0 else q[::-1].copy()


# ---------------------------------------------------------------- 3: sub-pixel sides

class _Reject(Exception):
    pass


def _refine(img: np.ndarray, corners: np.ndarray, second: bool = False) -> _Candidate:
    """Refit the four sides of `corners` (clockwise, photo pixels) on the photo's pixels."""
    q = np.asarray(corners, dtype=np.float64)
    lengths = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    if lengths.min() < 20:
        raise _Reject
    # Band width in pixels, from the board's longer sides (795 mm) seen roughly.
    band_px = max(4.0, BAND_MM / BOARD_MM[0] * 0.5 * (max(lengths[0], lengths[2]) + max(lengths[1], lengths[3])) * 0.8)
    centre = q.mean(axis=0)
    lines, quality, cut, seen = [], [], False, []
    for i in range(4):
        a, b = q[i], q[(i + 1) % 4]
        frame_line = _frame_side(a, b, img.shape)
        if frame_line is not None:
            # The photo ends here: the board is cropped to its edge, or cut off by the frame.
            band = _band_inside(img, a, b, centre, band_px)
            lines.append(frame_line)
            # Capped: a side that is only the frame is less sure than a seen edge.
            quality.append(min(band, 0.6))
            cut |= band < 0.3
            continue
        res = _fit_side(img, a, b, centre, band_px, second)
        if res is None:
            raise _Reject
        line, frac, band = res
        lines.append(line)
        quality.append(frac * band)
        seen.append(frac * band)
    new = _quad_from_sides(lines)
    # Corners that moved a lot mean the coarse side was not the board's side.
    diag = np.linalg.norm(q[0] - q[2])
    if np.max(np.linalg.norm(new - q, axis=1)) > 0.08 * diag:
        raise _Reject
    if _area(new) < 0:  # keep clockwise; side k of the reversed order is side 2 - k
        new = new[::-1].copy()
        quality = [quality[(2 - k) % 4] for k in range(4)]
    return _Candidate(corners=new, quality=float(min(quality) + 0.25 * np.mean(quality)),
                      cut_off=cut, sides=tuple(float(x) for x in quality),
                      seen_quality=float(min(seen)) if len(seen) >= 2 else 0.0)


def _complete_weak_side(img: np.ndarray, cand: _Candidate) -> _Candidate | None:
    """Find the one side the colour masks missed (e.g. a band washed out by side light).

    Three sides fit well; the fourth is searched by sliding it along its two neighbours' lines
    (outwards and inwards), scoring how much the strip just inside it looks like the band on the
    three good sides and the strip just outside does not. The best position is then refined.
    """
    sides = np.array(cand.sides)
    weak = int(np.argmin(sides))
    good = [i for i in range(4) if i != weak]
    if sides[weak] >= 0.3 or sides[good].min() < 0.35:
        return None
    q = cand.corners
    lengths = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    band_px = max(4.0, BAND_MM / BOARD_MM[0] * 0.5 * (max(lengths[0], lengths[2]) + max(lengths[1], lengths[3])) * 0.8)
    centre = q.mean(axis=0)
    u = np.linspace(-1.0, 0.7, 35) * band_px
    in_sel = (u > -0.75 * band_px) & (u < -0.25 * band_px)
    out_sel = u > 0.2 * band_px
    ref = []
    for i in good:
        lab, *_ = _sample_strip(img, q[i], q[(i + 1) % 4], centre, u, m=30)
        ref.append(lab[:, in_sel].reshape(-1, 3))
    ref = np.median(np.vstack(ref), axis=0)
    i0, i1 = weak, (weak + 1) % 4
    p0, p1 = q[(weak - 1) % 4], q[(weak + 2) % 4]  # the far ends of the two neighbouring sides
    d0, d1 = q[i0] - p0, q[i1] - p1
    h, w = img.shape[:2]
    step = 0.3 * band_px / max(np.linalg.norm(d0), np.linalg.norm(d1))
    best, best_score = None, -np.inf
    for lam in np.arange(0.5, 3.0, step):
        a, b = p0 + lam * d0, p1 + lam * d1
        if min(a[0], b[0], a[1], b[1]) < -band_px or max(a[0], b[0]) > w + band_px or max(a[1], b[1]) > h + band_px:
            if lam > 1:
                break
            continue
        lab, _, _, inside, _ = _sample_strip(img, a, b, centre, u, m=30)
        if inside[:, out_sel].mean() < 0.5:
            continue
        d_in = np.linalg.norm(np.median(lab[:, in_sel].reshape(-1, 3), axis=0) - ref)
        d_out = np.linalg.norm(np.median(lab[:, out_sel].reshape(-1, 3), axis=0) - ref)
        score = d_out - d_in
        if score > best_score:
            best, best_score = (a, b), score
    if best is None:
        return None
    new = q.copy()
    new[i0], new[i1] = best
    try:
        c = _refine(img, new)
        return _refine(img, c.corners, second=True)
    except _Reject:
        return None


def _inner_outer_mm(q: np.ndarray):
    """Board mm of the map's corners and of the board's, for a clockwise quad q whose sides
    0 and 2 are the long ones when they look longer."""
    L = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    W, H = BOARD_MM if L[0] + L[2] >= L[1] + L[3] else BOARD_MM[::-1]
    m = BAND_MM
    mm_in = np.array([[m, m], [W - m, m], [W - m, H - m], [m, H - m]])
    mm_out = np.array([[0, 0], [W, 0], [W, H], [0, H]], float)
    return mm_in, mm_out


def _refine_from_map(img: np.ndarray, corners: np.ndarray, second: bool = False) -> _Candidate:
    """Refit the board from the map's edge (the band's inner edge), then step out by the band.

    For a table as red-brown as the band, where the board's outer edge hardly shows.
    """
    q = np.asarray(corners, dtype=np.float64)
    mm_in, mm_out = _inner_outer_mm(q)
    inner = cv2.perspectiveTransform(
        mm_in.reshape(-1, 1, 2), cv2.getPerspectiveTransform(mm_out.astype(np.float32), q.astype(np.float32))).reshape(-1, 2)
    lengths = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    band_px = max(4.0, BAND_MM / BOARD_MM[0] * 0.5 * (max(lengths[0], lengths[2]) + max(lengths[1], lengths[3])) * 0.8)
    centre = inner.mean(axis=0)
    lines, quality = [], []
    for i in range(4):
        res = _fit_side(img, inner[i], inner[(i + 1) % 4], centre, band_px, second, check_map=False)
        if res is None:
            raise _Reject
        line, frac, band = res
        lines.append(line)
        quality.append(frac * band)
    new_inner = _quad_from_sides(lines)
    if np.max(np.linalg.norm(new_inner - inner, axis=1)) > 0.08 * np.linalg.norm(q[0] - q[2]):
        raise _Reject
    Hm = cv2.getPerspectiveTransform(mm_in.astype(np.float32), new_inner.astype(np.float32))
    new = cv2.perspectiveTransform(mm_out.reshape(-1, 1, 2), Hm).reshape(-1, 2)
    if _area(new) < 0:
        new = new[::-1].copy()
        quality = [quality[(2 - k) % 4] for k in range(4)]
    # A little below an outer-edge fit of the same agreement: the outer edge itself was not seen.
    score = 0.9 * float(min(quality) + 0.25 * np.mean(quality))
    return _Candidate(corners=new, quality=score, cut_off=False, sides=tuple(float(x) for x in quality),
                      seen_quality=float(min(quality)))


def _quad_from_sides(lines) -> np.ndarray:
    """(4, 2) corners where consecutive side lines meet; _Reject if two are parallel or the quad is not convex."""
    corners = []
    for i in range(4):
        p = _line_intersection(lines[i - 1], lines[i])
        if p is None:
            raise _Reject
        corners.append(p)
    corners = np.array(corners)
    if not _convex(corners):
        raise _Reject
    return corners


def _line_intersection(l1, l2):
    """Intersection of two lines given as (point, direction); None when parallel."""
    p, d = l1
    r, e = l2
    m = np.array([[d[0], -e[0]], [d[1], -e[1]]])
    if abs(np.linalg.det(m)) < 1e-9:
        return None
    t = np.linalg.solve(m, r - p)
    return p + t[0] * d


def _frame_side(a, b, shape):
    """The frame's edge as a line when side a-b lies along it, else None."""
    h, w = shape[:2]
    tol = max(3.0, 0.01 * max(w, h))
    for axis, lim in ((0, 0.0), (0, w - 1.0), (1, 0.0), (1, h - 1.0)):
        if abs(a[axis] - lim) < tol and abs(b[axis] - lim) < tol:
            p = np.array([lim, 0.0]) if axis == 0 else np.array([0.0, lim])
            d = np.array([0.0, 1.0]) if axis == 0 else np.array([1.0, 0.0])
            return p, d
    return None


def _sample_strip(img, a, b, centre, u, m: int = 90):
    """Colour (Lab, float32) on lines across side a-b at offsets u (outward +) ; (m, len(u), 3)."""
    d = (b - a) / np.linalg.norm(b - a)
    n = np.array([d[1], -d[0]])
    if np.dot((a + b) / 2 - centre, n) < 0:
        n = -n  # outward
    t = np.linspace(CORNER_SKIP, 1 - CORNER_SKIP, m)
    base = a[None, :] + t[:, None] * (b - a)[None, :]
    pts = base[:, None, :] + u[None, :, None] * n[None, None, :]
    mapx = pts[:, :, 0].astype(np.float32)
    mapy = pts[:, :, 1].astype(np.float32)
    strip = cv2.remap(img, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(strip, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = img.shape[:2]
    inside = (mapx >= 0) & (mapx <= w - 1) & (mapy >= 0) & (mapy <= h - 1)
    return lab, base, n, inside, strip


def _band_inside(img, a, b, centre, band_px) -> float:
    """0..1: how clearly the red-brown band runs just inside side a-b (for sides on the frame)."""
    u = -np.arange(0.05, 2.2, 0.05) * band_px
    _, _, _, _, strip = _sample_strip(img, a, b, centre, u)
    mask = border_mask(strip).astype(np.float32)
    band = mask[:, u > -0.8 * band_px].mean()
    inner = mask[:, u < -1.4 * band_px].mean()
    return float(np.clip((band - inner) / 0.5, 0, 1))


def _fit_side(img, a, b, centre, band_px, second, check_map: bool = True):
    """Fit the outer edge of the band along side a->b.

    Returns ((point, unit direction), share of profiles on the line, band contrast 0..1) or None.
    """
    reach_in = 1.0 * band_px
    reach_out = (0.5 if second else 0.9) * band_px
    step = max(0.5, band_px / 40.0)
    u = np.arange(-reach_in, reach_out + step / 2, step)
    lab, base, n, inside, strip = _sample_strip(img, a, b, centre, u)
    m = len(base)

    # Discriminant between the band (just inside the edge) and what lies just outside it.
    band_sel = (u > -0.8 * band_px) & (u < -0.25 * band_px)
    out_sel = (u > 0.2 * band_px) & (u < reach_out)
    fb = lab[:, band_sel].reshape(-1, 3)
    out_ok = inside[:, out_sel].reshape(-1)
    fo = lab[:, out_sel].reshape(-1, 3)[out_ok]
    if len(fb) < 10 or len(fo) < 10:
        return None
    mb, mo = fb.mean(0), fo.mean(0)
    cov = np.cov(fb.T) + np.cov(fo.T) + np.eye(3) * 4.0
    wv = np.linalg.solve(cov, mb - mo)
    lo, hi = float(np.median(fo @ wv)), float(np.median(fb @ wv))
    if hi - lo < 1e-6:
        return None
    z = ((lab @ wv) - lo) / (hi - lo)  # ~1 on the band, ~0 outside
    z = cv2.blur(z.astype(np.float32), (3, 1))
    sep = float(np.linalg.norm(mb - mo) / np.sqrt(np.trace(cov) / 3))

    # Outermost 0.5 crossing (band -> outside) in the window, to a fraction of a sample.
    win = (u >= -0.6 * band_px) & (u <= reach_out - 2 * step)
    cross = (z[:, :-1] >= 0.5) & (z[:, 1:] < 0.5) & win[None, :-1]
    has = cross.any(axis=1)
    k = (cross.shape[1] - 1) - np.argmax(cross[:, ::-1], axis=1)
    rows = np.arange(m)
    z0, z1 = z[rows, k], z[rows, np.minimum(k + 1, len(u) - 1)]
    f = np.where(has, (z0 - 0.5) / np.maximum(z0 - z1, 1e-6), 0.0)
    edge = u[k] + f * step
    ok = has & inside[rows, k]
    if ok.sum() < 0.3 * m:
        return None
    P = (base + edge[:, None] * n[None, :])[ok]
    line, inliers = _robust_line(P, tol=max(1.0, band_px / 25))
    frac = inliers.sum() / m
    # The strip just inside must differ from the map further in: else this edge is the band's
    # inner edge (map on both sides of the strip) or an edge inside the map. Judged against the
    # map, not by a fixed colour, so a red-brown table does not matter.
    band = float(np.clip(sep / 3.0, 0, 1)) * float(np.mean(z[:, band_sel] > 0.5))
    if check_map:
        u_map = np.linspace(-2.6, -1.8, 5) * band_px
        lab_map, *_ = _sample_strip(img, a, b, centre, u_map, m=30)
        d_map = float(np.linalg.norm(np.median(lab[:, band_sel].reshape(-1, 3), axis=0)
                                     - np.median(lab_map.reshape(-1, 3), axis=0)))
        band *= float(np.clip(d_map / 30.0, 0, 1))
    return line, frac, band


def _robust_line(P: np.ndarray, tol: float):
    """Line through points with outliers: RANSAC-free trimmed least squares (3 rounds)."""
    keep = np.ones(len(P), bool)
    for _ in range(3):
        Q = P[keep]
        c = Q.mean(0)
        _, _, vt = np.linalg.svd(Q - c)
        d = vt[0]
        nrm = np.array([-d[1], d[0]])
        r = (P - c) @ nrm
        med = np.median(r[keep])  # the bulk of the points, not their mean, sets the line
        mad = np.median(np.abs(r[keep] - med)) * 1.4826
        keep = np.abs(r - med) <= max(tol, 2.5 * mad)
        if keep.sum() < 5:
            raise _Reject
    Q = P[keep]
    c = Q.mean(0)
    _, _, vt = np.linalg.svd(Q - c)
    return (c, vt[0]), keep


# ---------------------------------------------------------------- 4: which corner is top-left

@lru_cache(maxsize=1)
def _city_mm() -> np.ndarray:
    """The cities' places from the board facts. (The turn was chosen by these before the dots'
    check existed; the template's measured centres, `dots.city_dots_mm`, turned one hostile
    render the wrong way, so the switch waits for a measurement over more photos.)"""
    b = load_board()
    return np.array([[c.x * BOARD_MM[0], c.y * BOARD_MM[1]] for c in b.cities.values()])


def _board_order(small: np.ndarray, q_small: np.ndarray) -> int:
    """Which of the 4 cyclic orders of q (clockwise) starts at the board's top-left (the shift)."""
    ppm = 1.0
    cities = _city_mm()
    xy = np.clip(np.round(cities * ppm - 0.5).astype(int), 0, [round(BOARD_MM[0] * ppm) - 1, round(BOARD_MM[1] * ppm) - 1])
    scores = np.zeros(4)
    for k in range(2):
        flat = flatten(small, np.roll(q_small, -k, axis=0), px_per_mm=ppm)
        dm = dot_map(flat, ppm)
        dm = cv2.dilate(dm, np.ones((5, 5), np.uint8))  # allow ~2 mm of misplacement
        scores[k] = float(np.mean(dm[xy[:, 1], xy[:, 0]]))
        # Starting two corners later is the same board turned half round: the same flattening rotated.
        dm180 = dm[::-1, ::-1]
        scores[k + 2] = float(np.mean(dm180[xy[:, 1], xy[:, 0]]))
    # Proportions: the sides 0-1 and 2-3 are the board's 795 mm ones.
    L = np.linalg.norm(q_small - np.roll(q_small, -1, axis=0), axis=1)
    ratio_even = np.log((L[0] + L[2]) / (L[1] + L[3]))  # >0: sides 0/2 look longer
    target = np.log(BOARD_MM[0] / BOARD_MM[1])
    prior = np.array([-(ratio_even - target) ** 2, -(-ratio_even - target) ** 2] * 2)
    total = scores + 0.02 * prior
    return int(np.argmax(total))
