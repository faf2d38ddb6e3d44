"""The board's outline by colour: the red-brown score-track band against whatever lies around it.

In: the photo (BGR uint8) and a reduced copy (`rectify.shrink`). Out: `find_outlines` gives the outlines
that fit, best first (corners in photo pixels, clockwise on screen, any start, and how well their
sides fit), and whether the frame seems to cut into the board. `board_order` then says which
corner is the board's top-left. Nothing here is trusted alone: `vision.locate` checks every outline
by the city dots before it is read.

How (about 1000 px on the long side for the search, full resolution for the edges; every setting
in `OutlineConfig`, `vision/locate/config.py`):
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
5. Asked for last (`cut_map_quads`, by `vision.locate` when nothing else stands): the map cut from
   the table by GrabCut, which learns this photo's own colours of the two, stepped out by the band.
"""
from __future__ import annotations

import dataclasses
import itertools
from functools import lru_cache
from typing import NamedTuple

import cv2
import numpy as np

from scoring.board import load_board
from vision.config import BYTE_MAX, CHANNELS, CORNERS, EPS, HUE_RANGE, MAD_TO_SIGMA, PARALLEL_DET
from vision.locate.config import HUE_SHIFT, DotConfig, OutlineColours, OutlineConfig, QuadConfig, SideConfig
from vision.locate.dots import dot_map
from vision.rectify import BOARD_MM, flatten, shrink

BAND_MM = load_board().score_track_mm  # width of the score-track band
_CUT_SEED = 0  # the map cut's random start (`cut_map_quads`): any fixed value
# The colour masks candidates come from, likeliest first: the band's three limits and the pale map.
LEVELS = ("strict", "map", "tight", "loose")


@dataclasses.dataclass(frozen=True)
class _Candidate:
    corners: np.ndarray  # (4, 2) photo pixels, clockwise on screen, any start
    quality: float  # the worst side's agreement x band contrast (plus a little of the mean), 0..1.25
    cut_off: bool  # a side lies on the frame's edge with no band along it
    sides: tuple = ()  # per side (corner i -> i+1): agreement x band contrast
    seen_quality: float = 1.0  # the worst side that is not the frame's edge (0 if under two)


def find_outlines(img: np.ndarray, small: np.ndarray, scale: float, exhaustive: bool = False,
                  cfg: OutlineConfig = OutlineConfig()) -> tuple[list[_Candidate], bool]:
    """Outlines that fit (photo pixels of `img`; `small` = `img` shrunk by `scale`), best first, and
    whether the best fits run into the frame (the board may be cut off). The search stops at the
    first clean fit unless `exhaustive` (when the clean fit turned out to be the table's)."""
    best, cut_seen, tried = None, False, []
    # The warm-light candidates only when no other candidate fits well enough to be kept.
    candidates = itertools.chain(
        _coarse_quads(small, cfg),
        _when(lambda: best is None or best.quality < cfg.min_quality, lambda: _warm_map_quads(small, cfg)))
    for q, from_map in candidates:
        corners = (q + 0.5) / scale - 0.5  # pixel centres of `small` -> of the photo
        try:
            if from_map:
                cand = _refine_from_map(img, corners, cfg)
                cand = _refine_from_map(img, cand.corners, cfg, second=True)
            else:
                cand = _refine(img, corners, cfg)
                cand = _refine(img, cand.corners, cfg, second=True)
        except _Reject:
            continue
        # A board whose seen sides fit well but that runs into the frame without its band.
        cut_seen |= cand.cut_off and cand.seen_quality >= cfg.side_fits
        tried.append(cand)
        if best is None or cand.quality > best.quality:
            best = cand
        if best.quality >= cfg.good_quality and not exhaustive:
            break  # candidates come strongest first; a clean fit needs no rivals
    if best is not None and (best.quality < cfg.good_quality or exhaustive):
        # Three good sides and a missed fourth: complete the likeliest few candidates.
        for cand in sorted(tried, key=lambda c: -c.quality)[:cfg.complete_tries]:
            completed = _complete_weak_side(img, cand, cfg)
            # Only a clear gain: a side slid onto some inner edge can score a little higher.
            if completed is not None and completed.quality > cand.quality + cfg.complete_gain:
                tried.append(completed)
    if best is None:
        return [], False
    cut = (cut_seen and best.quality < cfg.good_quality) or (best.cut_off and best.quality >= cfg.min_quality)
    return sorted((c for c in tried if c.quality >= cfg.min_quality), key=lambda c: -c.quality), cut


def for_photo(cfg: OutlineConfig, photo_hw, smallest_px_per_mm: float) -> OutlineConfig:
    """`cfg` for a photo of `photo_hw` pixels: where a board seen at `smallest_px_per_mm` covers less
    than `QuadConfig.min_quad_share` of the photo (a large photo), the shares of its area that the
    board and its band's blobs must cover are lowered in proportion, so that such a board is looked
    at rather than left out as a speck."""
    h, w = photo_hw[:2]
    smallest = BOARD_MM[0] * BOARD_MM[1] * smallest_px_per_mm ** 2
    r = smallest / (cfg.quads.min_quad_share * w * h)
    if r >= 1.0:
        return cfg
    q = cfg.quads
    quads = dataclasses.replace(q, min_quad_share=q.min_quad_share * r, min_seed_share=q.min_seed_share * r,
                                min_blob_share=q.min_blob_share * r)
    return dataclasses.replace(cfg, quads=quads)


def board_order(small: np.ndarray, scale: float, corners: np.ndarray, cfg: OutlineConfig = OutlineConfig(),
                dots: DotConfig = DotConfig()) -> np.ndarray:
    """`corners` (photo pixels, clockwise on screen, any start) rolled to the board's own order
    TL, TR, BR, BL, by the city dots."""
    return np.roll(corners, -_board_order(small, (corners + 0.5) * scale - 0.5, cfg, dots), axis=0)


def refine_sides(img: np.ndarray, corners: np.ndarray, cfg: OutlineConfig = OutlineConfig()) -> _Candidate | None:
    """The outline's four sides refitted to the band's outer edge (order kept), or None."""
    try:
        cand = _refine(img, corners, cfg)
        return _refine(img, cand.corners, cfg, second=True)
    except _Reject:
        return None


# ---------------------------------------------------------------- 1-2: coarse quadrilaterals

def border_mask(image_bgr: np.ndarray, level: str = "strict", cfg: OutlineColours = OutlineColours()) -> np.ndarray:
    """uint8 0/1 mask of red-brown score-track colours (dark to mid red-orange, saturated), by the
    colour limit `level` ("tight", "strict" or "loose", see `OutlineColours`).

    Candidates from several levels are tried and the fits scored, so no single colour limit has
    to suit every table and light.
    """
    limit = {"tight": cfg.tight, "strict": cfg.strict, "loose": cfg.loose}[level]
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    hue = (hsv[:, :, 0].astype(np.int16) + HUE_SHIFT) % HUE_RANGE  # red wraps round 0: shift it
    s, v = hsv[:, :, 1].astype(np.int16), hsv[:, :, 2].astype(np.int16)
    # Chroma (saturation x value) too: in near-black pixels saturation is mostly sensor noise.
    mask = ((hue <= limit.max_hue) & (s >= limit.min_sat) & (v >= cfg.min_value) & (v <= cfg.max_value)
            & (s * v >= cfg.min_chroma * BYTE_MAX))
    if level == "loose":
        mask &= s * cfg.loose_pale >= BYTE_MAX - v  # pale and bright: not a band even in side light
    return mask.astype(np.uint8)


def _coarse_quads(small: np.ndarray, cfg: OutlineConfig):
    """Candidate board quadrilaterals (4, 2) in `small`'s pixels, clockwise on screen, likeliest
    first (a generator: the search stops at the first clean fit)."""
    seen: list[np.ndarray] = []
    smooth = _denoised(small, cfg)
    for level in LEVELS:
        quads = (_quads_from_map(smooth, cfg) if level == "map"
                 else _quads_from_mask(border_mask(smooth, level, cfg.colours), cfg.quads))
        for q in quads:
            if not any(np.allclose(q, p, atol=cfg.quads.same_px) for p in seen):
                seen.append(q)
                yield q, level == "map"


CAST_SIDE_PX = 64  # a colour cast varies slowly: it is measured on the photo shrunk to this long side


def even_cast(image_bgr: np.ndarray, reach: float, brightness: bool = False) -> np.ndarray:
    """`image_bgr` with the colour cast that varies across it evened out: each channel scaled so that
    its local mean (a Gaussian of `reach` of the long side) is the three channels' mean there. The
    brightness is kept; a lamp's yellow on one side and a window's blue on the other both turn grey.
    With `brightness`, the local means are all made the photo's mean: a flash's hot spot and its
    dark fall-off are evened out as well."""
    img = np.asarray(image_bgr, np.float32) + 1.0  # no channel divides by zero
    h, w = img.shape[:2]
    f = CAST_SIDE_PX / max(h, w)
    local = cv2.resize(img, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)
    local = cv2.GaussianBlur(local, (0, 0), reach * CAST_SIDE_PX)
    local = cv2.resize(local, (w, h), interpolation=cv2.INTER_LINEAR)
    target = img.mean() if brightness else local.mean(axis=2, keepdims=True)
    return np.clip(img * target / local - 1.0, 0, BYTE_MAX).astype(np.uint8)


def _denoised(image: np.ndarray, cfg: OutlineConfig) -> np.ndarray:
    """`image` box-blurred (`denoise_px`): sensor noise would speckle the colour masks."""
    k = cfg.colours.denoise_px
    return cv2.blur(image, (k, k))


def _when(condition, make):
    """Items of `make()` if `condition()` holds when the iteration reaches them (lazy chaining)."""
    if condition():
        yield from make()


def _warm_map_quads(small: np.ndarray, cfg: OutlineConfig):
    """Last-resort candidates (as `_coarse_quads`), when no other candidate fits at all: in warm
    light over a wooden table the band's colours are everywhere and the map itself is too saturated
    for `map_mask`, so the map is taken as the photo's least saturated bright part."""
    smooth = _denoised(small, cfg)
    limit = _least_saturated_limit(smooth, cfg.colours)
    if limit > cfg.colours.map_max_sat:
        for q in _quads_from_map(smooth, cfg, limit):
            yield q, True


def cut_map_quads(small: np.ndarray, cfg: OutlineConfig = OutlineConfig()) -> list[np.ndarray]:
    """Board quadrilaterals in `small`'s pixels from the map cut out of the photo (GrabCut), each
    stepped out by the band's width (as `_quads_from_map`).

    Where the band's colour is the table's (wood) and fixed colour limits take the table's light or
    the band's lit side for the map, the cut learns this photo's own colours of map and table (a
    mixture of colours each, seeded by the pale part) and parts them where the image's edges are
    strongest: the map's edge against the band. The map is its largest part."""
    reduced, r = shrink(small, cfg.cut_side_px)
    smooth = _denoised(reduced, cfg)
    pale = map_mask(smooth, max(_least_saturated_limit(smooth, cfg.colours), cfg.colours.map_max_sat), cfg.colours)
    if not pale.any():
        return []
    seeds = np.where(pale > 0, cv2.GC_PR_FGD, cv2.GC_PR_BGD).astype(np.uint8)
    f = cfg.cut_frame_px
    seeds[:f], seeds[-f:], seeds[:, :f], seeds[:, -f:] = cv2.GC_BGD, cv2.GC_BGD, cv2.GC_BGD, cv2.GC_BGD
    if not (seeds == cv2.GC_PR_FGD).any():  # pale only at the photo's edge: nothing to cut (GrabCut would raise)
        return []
    models = np.zeros((1, 65)), np.zeros((1, 65))  # (GrabCut's own: background, foreground mixtures)
    # GrabCut starts its mixtures by k-means from OpenCV's shared random state: seeded, so that a
    # photo is cut the same way whatever was read before it in the same process.
    cv2.setRNGSeed(_CUT_SEED)
    cv2.grabCut(smooth, seeds, None, *models, cfg.cut_iterations, cv2.GC_INIT_WITH_MASK)
    cut = ((seeds == cv2.GC_FGD) | (seeds == cv2.GC_PR_FGD)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(cut, connectivity=cfg.quads.connectivity)
    if n < 2:
        return []
    largest = (labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))).astype(np.uint8)
    return [(q + 0.5) / r - 0.5 for q in _step_out(_quads_from_mask(largest, cfg.quads))]


def map_mask(image_bgr: np.ndarray, max_sat: float | None = None, cfg: OutlineColours = OutlineColours()) -> np.ndarray:
    """uint8 0/1 mask of the pale, greyish map inside the band (light, little colour); saturation at
    most `max_sat` (default: the map's in neutral light)."""
    max_sat = cfg.map_max_sat if max_sat is None else max_sat
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    s, v = hsv[:, :, 1], hsv[:, :, 2]
    return ((s <= max_sat) & (v >= cfg.map_min_value)).astype(np.uint8)


def _least_saturated_limit(image_bgr: np.ndarray, cfg: OutlineColours) -> float:
    """Otsu's split of the saturation of the bright pixels: below it, the least saturated part."""
    hsv = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2HSV)
    bright = hsv[:, :, 1][hsv[:, :, 2] >= cfg.map_min_value]
    if bright.size < cfg.min_bright_px:
        return 0.0
    t, _ = cv2.threshold(bright.reshape(-1, 1), 0, BYTE_MAX, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(t)


def _quads_from_map(smooth: np.ndarray, cfg: OutlineConfig, max_sat: float | None = None) -> list[np.ndarray]:
    """Board quadrilaterals grown from the map's outline by the band's width.

    For tables as red-brown as the band itself: the map is the large pale area, its edge is the
    band's inner edge, and the board's edge lies a band's width (`BAND_MM`) further out on every side.
    """
    mask = map_mask(smooth, max_sat, cfg.colours)
    if max_sat is not None and max_sat > cfg.colours.map_max_sat:
        # With the looser limit the score cells' light numbers pass too; they lie a few pixels
        # outside the map's edge, and the blob closing in _quads_from_mask would join them to the
        # map, growing it by half a band. Only large pale parts count then.
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=cfg.quads.connectivity)
        large = stats[:, cv2.CC_STAT_AREA] >= cfg.quads.min_blob_share * mask.size
        large[0] = False
        mask = large[labels].astype(np.uint8)
    return _step_out(_quads_from_mask(mask, cfg.quads))


def _step_out(map_quads: list[np.ndarray]) -> list[np.ndarray]:
    """The board's quadrilateral around each of the map's, a band's width (`BAND_MM`) further out.
    Board mm of the map's corners: which sides are long does not matter much (the band is equally
    wide all round) and refining settles the rest."""
    out = []
    for q in map_quads:
        mm_in, mm_out = _inner_outer_mm(q)
        Hm = cv2.getPerspectiveTransform(mm_in.astype(np.float32), q.astype(np.float32))
        out.append(cv2.perspectiveTransform(mm_out.reshape(-1, 1, 2), Hm).reshape(-1, 2))
    return out


def _quads_from_mask(mask: np.ndarray, cfg: QuadConfig) -> list[np.ndarray]:
    """Quadrilaterals wrapping the mask's large blobs.

    The band's blobs break at the light corner medallions (and at glare or a hand), so besides each
    large blob alone, blobs lying close to it are merged with it.
    """
    h, w = mask.shape[:2]
    big, outline, areas, stats = _big_blobs(mask, cfg)
    if not big:
        return []
    quads = []
    hq = _hough_quad([outline[i] for i in big], (w, h), cfg)
    if hq is not None:
        quads.append(hq)
    reach = max(cfg.merge_min_px, int(round(cfg.merge_reach * max(h, w))))
    boxes = stats[:, [cv2.CC_STAT_LEFT, cv2.CC_STAT_TOP, cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT]]
    hulls = []
    for seed in big[:cfg.hull_seeds]:
        if areas[seed] < cfg.min_seed_share * h * w:
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
        q = _quad_from_hull(hull.reshape(-1, 2).astype(np.float64), (w, h), cfg)
        if q is not None and not any(np.allclose(q, p, atol=cfg.same_hull_px) for p in quads):
            quads.append(q)
    return quads


def _big_blobs(mask: np.ndarray, cfg: QuadConfig):
    """The mask closed, and its large blobs: their labels (largest first), each one's outer outline
    (far fewer points than the blob, same hull), every blob's area and its stats."""
    h, w = mask.shape[:2]
    k = max(cfg.close_min_px, int(round(max(h, w) / cfg.close_per_side)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=cfg.connectivity)
    areas = stats[:, cv2.CC_STAT_AREA].copy()
    areas[0] = 0
    big = [i for i in np.argsort(-areas) if areas[i] >= cfg.min_blob_share * h * w][:cfg.max_blobs]
    outline: dict[int, np.ndarray] = {}
    if big:
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        wanted = set(int(i) for i in big)
        for c in contours:
            x, y = c[0, 0]
            lab = int(labels[y, x])
            if lab in wanted:
                outline[lab] = np.vstack([outline[lab], c.reshape(-1, 2)]) if lab in outline else c.reshape(-1, 2)
    return [int(i) for i in big if int(i) in outline], outline, areas, stats


def supported_quads(small: np.ndarray, cfg: OutlineConfig = OutlineConfig()) -> list[np.ndarray]:
    """Board quadrilaterals in `small`'s pixels whose four sides the colour masks' blobs run along,
    whatever else those blobs take in, best supported first (each mask's best `cfg.quads.supported`).

    Where glare, a patch of light or a checked cloth of the band's colour touches the board, its
    blob grows past the board: no quad wraps it (`_hough_quad`) and its hull is not the board's.
    The board's four sides are still long straight runs of the blob's outline, each followed along
    most of its length, which the other lines' quads are not."""
    smooth = _denoised(small, cfg)
    h, w = small.shape[:2]
    out = []
    for level in LEVELS:
        mask = map_mask(smooth, None, cfg.colours) if level == "map" else border_mask(smooth, level, cfg.colours)
        big, outline, _, _ = _big_blobs(mask, cfg.quads)
        quads = _best_supported([outline[i] for i in big], (w, h), cfg.quads)
        out += _step_out(quads) if level == "map" else quads
    return out


def _best_supported(outlines: list[np.ndarray], size_wh, cfg: QuadConfig) -> list[np.ndarray]:
    """Of the quads of four strong Hough lines on `outlines`, the best `cfg.supported` by their worst
    side's share followed by the outlines (within `support_px`, the corners' medallions and the
    frame's edge left out), that share `min_support` at least."""
    w, h = size_wh
    edges = _outline_edges(outlines, size_wh)
    kept = _hough_lines(edges, _edge_points(edges), cfg)
    if kept is None:
        return []
    off = cv2.distanceTransform(BYTE_MAX - edges, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    t = np.linspace(cfg.support_skip, 1.0 - cfg.support_skip, cfg.support_samples)[:, None]
    m = int(np.ceil(2 * cfg.support_px))  # a blob's outline along the frame's edge is the crop, not a side
    scored = []
    for q in _line_quads(kept, cfg):
        if q is None or _area(q) < cfg.min_quad_share * w * h:
            continue
        worst = 1.0
        for j in range(CORNERS):
            a, b = q[j], q[(j + 1) % CORNERS]
            xy = np.rint(a + t * (b - a)).astype(int)
            seen = (xy[:, 0] >= m) & (xy[:, 0] < w - m) & (xy[:, 1] >= m) & (xy[:, 1] < h - m)
            near = np.zeros(len(xy), bool)
            near[seen] = off[xy[seen, 1], xy[seen, 0]] <= cfg.support_px
            worst = min(worst, float(near.mean()))
        if worst >= cfg.min_support:
            scored.append((worst, q))
    scored.sort(key=lambda s: -s[0])
    return [q for _, q in scored[:cfg.supported]]


class _Line(NamedTuple):
    """A Hough line kept: a point on it, its direction, its outward normal's angle, its distance
    from the outline's centre, and its rank (0: the strongest)."""

    point: np.ndarray
    direction: np.ndarray
    phi: float
    dist: float
    rank: int


def _outline_edges(outlines: list[np.ndarray], size_wh) -> np.ndarray:
    w, h = size_wh
    edges = np.zeros((h, w), np.uint8)
    cv2.drawContours(edges, [o.reshape(-1, 1, 2) for o in outlines], -1, BYTE_MAX, 1)
    return edges


def _edge_points(edges: np.ndarray) -> np.ndarray:
    """(n, 2) x, y of the drawn pixels of `edges`."""
    return np.column_stack(np.nonzero(edges)[::-1]).astype(np.float64)


def _hough_lines(edges: np.ndarray, pts: np.ndarray, cfg: QuadConfig) -> list[_Line] | None:
    """The `cfg.hough_kept` strongest distinct straight runs of `edges` (Hough lines; `pts` its
    `_edge_points`), or None when there are too few for a quad."""
    h, w = edges.shape
    if len(pts) < cfg.hough_min_points:
        return None
    lines = cv2.HoughLines(edges, 1, np.pi / cfg.hough_angle_steps,
                           max(cfg.hough_min_votes, int(cfg.hough_votes * min(w, h))))
    if lines is None or len(lines) < CORNERS:
        return None
    diag = float(np.hypot(w, h))
    centre = pts.mean(axis=0)
    kept: list[_Line] = []
    for rho, theta in lines[:cfg.hough_lines, 0]:
        nrm = np.array([np.cos(theta), np.sin(theta)])
        if rho - centre @ nrm < 0:
            nrm, rho = -nrm, -rho
        phi = float(np.arctan2(nrm[1], nrm[0]) % (2 * np.pi))
        dist = rho - centre @ nrm
        if any(abs((phi - k.phi + np.pi) % (2 * np.pi) - np.pi) < np.radians(cfg.same_line_deg)
               and abs(dist - k.dist) < cfg.same_line_share * diag for k in kept):
            continue
        kept.append(_Line(nrm * rho, np.array([-nrm[1], nrm[0]]), phi, dist, len(kept)))
        if len(kept) >= cfg.hough_kept:
            break
    return kept if len(kept) >= CORNERS else None


def _line_quads(kept: list[_Line], cfg: QuadConfig):
    """The convex clockwise quad of every four of the lines whose normals turn by
    `min_corner_deg`-`max_corner_deg` from one to the next (a board seen aslant), strongest first;
    None for a four whose sides do not meet in a convex quad."""
    combos = []
    for combo in itertools.combinations(range(len(kept)), CORNERS):
        ls = sorted((kept[i] for i in combo), key=lambda k: k.phi)
        gaps = np.diff([k.phi for k in ls] + [ls[0].phi + 2 * np.pi])
        if np.any(gaps < np.radians(cfg.min_corner_deg)) or np.any(gaps > np.radians(cfg.max_corner_deg)):
            continue
        combos.append((sum(k.rank for k in ls), ls))
    combos.sort(key=lambda c: c[0])  # Hough returns lines strongest first: low rank sum = strong
    for _, ls in combos:
        q = []
        for j in range(CORNERS):
            p = _line_intersection((ls[j - 1].point, ls[j - 1].direction), (ls[j].point, ls[j].direction))
            if p is None:
                break
            q.append(p)
        q = _clockwise(np.array(q)) if len(q) == CORNERS else None
        yield q if q is not None and _convex(q) else None


def _hough_quad(outlines: list[np.ndarray], size_wh, cfg: QuadConfig) -> np.ndarray | None:
    """The quadrilateral of four straight outline runs with the most support (Hough lines).

    Unlike a hull, this ignores clutter beside the board (cars, a red box) as long as the board's
    four sides are the longest straight runs of band outline that wrap (almost) all of it.
    """
    w, h = size_wh
    edges = _outline_edges(outlines, size_wh)
    pts = _edge_points(edges)
    kept = _hough_lines(edges, pts, cfg)
    if kept is None:
        return None
    diag = float(np.hypot(w, h))
    sub = pts[:: max(1, len(pts) // cfg.wrap_points)]
    for q in itertools.islice(_line_quads(kept, cfg), cfg.hough_quads):
        if q is None or _area(q) < cfg.min_quad_share * w * h:
            continue
        if _inside_share(q, sub, tol=cfg.wrap_tolerance * diag) >= cfg.wrap_share:
            return q
    return None


def _inside_share(q: np.ndarray, pts: np.ndarray, tol: float) -> float:
    """Share of points inside the clockwise quad q, allowing `tol` pixels outside."""
    inside = np.ones(len(pts), bool)
    for i in range(len(q)):
        p0, p1 = q[i], q[(i + 1) % len(q)]
        d = (p1 - p0) / np.linalg.norm(p1 - p0)
        inside &= d[0] * (pts[:, 1] - p0[1]) - d[1] * (pts[:, 0] - p0[0]) >= -tol
    return float(inside.mean())


def _boxes_near(a, b, reach) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    gap_x = max(bx - (ax + aw), ax - (bx + bw), 0)
    gap_y = max(by - (ay + ah), ay - (by + bh), 0)
    return gap_x <= reach and gap_y <= reach


def _quad_from_hull(hull: np.ndarray, size_wh, cfg: QuadConfig) -> np.ndarray | None:
    """The smallest quadrilateral with its sides on four of the hull's sides.

    The light corner medallions cut the band's corners off, so the board's corners are where its
    sides meet, outside the hull; a corner cut by the frame is handled the same way.
    """
    w, h = size_wh
    hull32 = hull.astype(np.float32).reshape(-1, 1, 2)
    area = cv2.contourArea(hull32)
    if area < cfg.min_quad_share * w * h:
        return None
    peri = cv2.arcLength(hull32, True)
    poly = cv2.approxPolyDP(hull32, cfg.hull_simplify * peri, True).reshape(-1, 2).astype(np.float64)
    if len(poly) < CORNERS:
        return None
    poly = _clockwise(poly)
    a, b = poly, np.roll(poly, -1, axis=0)
    lengths = np.linalg.norm(b - a, axis=1)
    idx = [i for i in np.argsort(-lengths)[:cfg.hull_sides] if lengths[i] >= cfg.hull_min_side * peri]
    idx = sorted(idx)
    if len(idx) < CORNERS:
        return None
    best, best_area = None, np.inf
    for combo in itertools.combinations(idx, CORNERS):
        sides = [(a[i], b[i] - a[i]) for i in combo]  # (point, direction) of each side's line
        corners = []
        for j in range(CORNERS):
            p = _line_intersection(sides[j - 1], sides[j])
            if p is None:
                break
            corners.append(p)
        if len(corners) != CORNERS:
            continue
        q = np.array(corners)
        if not _convex(q) or np.any(np.abs(q) > cfg.max_corner_reach * max(w, h)):
            continue
        qa = _area(q)
        # Each side's line leaves the hull on one side; the quad must be the one that wraps it.
        if qa < cfg.hull_min_cover * area or qa >= best_area:
            continue
        if _area(_clockwise(q)) <= 0 or not _wraps(q, poly):
            continue
        best, best_area = q, qa
    if best is None or best_area > cfg.hull_max_growth * area:
        return None
    return _clockwise(best)


def _area(q: np.ndarray) -> float:
    x, y = q[:, 0], q[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def _wraps(q: np.ndarray, pts: np.ndarray, tol: float = 2.0) -> bool:
    """All points inside the convex quad q (with a small tolerance)."""
    q = _clockwise(q)
    for i in range(len(q)):
        p0, p1 = q[i], q[(i + 1) % len(q)]
        d = p1 - p0
        # clockwise on screen (y down): inside is to the right of each side, i.e. cross >= 0
        cross = d[0] * (pts[:, 1] - p0[1]) - d[1] * (pts[:, 0] - p0[0])
        if np.any(cross < -tol * np.linalg.norm(d)):
            return False
    return True


def _convex(q: np.ndarray) -> bool:
    pts = [(float(x), float(y)) for x, y in q]
    n = len(pts)
    cross = []
    for i in range(n):
        (x0, y0), (x1, y1), (x2, y2) = pts[i], pts[(i + 1) % n], pts[(i + 2) % n]
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


def _band_px(q: np.ndarray, cfg: SideConfig) -> float:
    """The band's width in pixels along the quad `q`, roughly: its share of the board's width (795
    mm) times the longer of each pair of opposite sides."""
    lengths = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    return max(cfg.min_band_px, BAND_MM / BOARD_MM[0] * 0.5 * (max(lengths[::2]) + max(lengths[1::2])) * cfg.band_seen)


def _refine(img: np.ndarray, corners: np.ndarray, cfg: OutlineConfig, second: bool = False) -> _Candidate:
    """Refit the four sides of `corners` (clockwise, photo pixels) on the photo's pixels."""
    q = np.asarray(corners, dtype=np.float64)
    lengths = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    if lengths.min() < cfg.sides.min_side_px:
        raise _Reject
    band_px = _band_px(q, cfg.sides)
    centre = q.mean(axis=0)
    lines, quality, cut, seen = [], [], False, []
    for i in range(CORNERS):
        a, b = q[i], q[(i + 1) % CORNERS]
        frame_line = _frame_side(a, b, img.shape, cfg.sides)
        if frame_line is not None:
            # The photo ends here: the board is cropped to its edge, or cut off by the frame.
            band = _band_inside(img, a, b, centre, band_px, cfg)
            lines.append(frame_line)
            # Capped: a side that is only the frame is less sure than a seen edge.
            quality.append(min(band, cfg.frame_side_cap))
            cut |= band < cfg.frame_band
            continue
        res = _fit_side(img, a, b, centre, band_px, second, cfg.sides)
        if res is None:
            raise _Reject
        line, frac, band = res
        lines.append(line)
        quality.append(frac * band)
        seen.append(frac * band)
    new = _quad_from_sides(lines)
    # Corners that moved a lot mean the coarse side was not the board's side.
    diag = np.linalg.norm(q[0] - q[2])
    if np.max(np.linalg.norm(new - q, axis=1)) > cfg.sides.max_corner_move * diag:
        raise _Reject
    if _area(new) < 0:  # keep clockwise; side k of the reversed order is side 2 - k
        new = new[::-1].copy()
        quality = [quality[(2 - k) % CORNERS] for k in range(CORNERS)]
    return _Candidate(corners=new, quality=float(min(quality) + cfg.mean_weight * np.mean(quality)),
                      cut_off=cut, sides=tuple(float(x) for x in quality),
                      seen_quality=float(min(seen)) if len(seen) >= 2 else 0.0)


def _complete_weak_side(img: np.ndarray, cand: _Candidate, cfg: OutlineConfig) -> _Candidate | None:
    """Find the one side the colour masks missed (e.g. a band washed out by side light).

    Three sides fit well; the fourth is searched by sliding it along its two neighbours' lines
    (outwards and inwards), scoring how much the strip just inside it looks like the band on the
    three good sides and the strip just outside does not. The best position is then refined.
    """
    sides = np.array(cand.sides)
    weak = int(np.argmin(sides))
    good = [i for i in range(CORNERS) if i != weak]
    if sides[weak] >= cfg.side_fits or sides[good].min() < cfg.good_side:
        return None
    q = cand.corners
    sc = cfg.sides
    band_px = _band_px(q, sc)
    centre = q.mean(axis=0)
    u = np.linspace(-1.0, cfg.strip_out, cfg.strip_samples) * band_px
    in_sel = (u > -cfg.strip_band_from * band_px) & (u < -sc.band_to * band_px)
    out_sel = u > sc.outside_from * band_px
    ref = []
    for i in good:
        lab, *_ = _sample_strip(img, q[i], q[(i + 1) % CORNERS], centre, u, sc, m=sc.few_profiles)
        ref.append(lab[:, in_sel].reshape(-1, CHANNELS))
    ref = np.median(np.vstack(ref), axis=0)
    i0, i1 = weak, (weak + 1) % CORNERS
    p0, p1 = q[(weak - 1) % CORNERS], q[(weak + 2) % CORNERS]  # the far ends of the two neighbouring sides
    d0, d1 = q[i0] - p0, q[i1] - p1
    h, w = img.shape[:2]
    step = cfg.slide_step * band_px / max(np.linalg.norm(d0), np.linalg.norm(d1))
    best, best_score = None, -np.inf
    for lam in np.arange(cfg.slide_from, cfg.slide_to, step):
        a, b = p0 + lam * d0, p1 + lam * d1
        if min(a[0], b[0], a[1], b[1]) < -band_px or max(a[0], b[0]) > w + band_px or max(a[1], b[1]) > h + band_px:
            if lam > 1:
                break
            continue
        lab, _, _, inside, _ = _sample_strip(img, a, b, centre, u, sc, m=sc.few_profiles)
        if inside[:, out_sel].mean() < 0.5:
            continue
        d_in = np.linalg.norm(np.median(lab[:, in_sel].reshape(-1, CHANNELS), axis=0) - ref)
        d_out = np.linalg.norm(np.median(lab[:, out_sel].reshape(-1, CHANNELS), axis=0) - ref)
        score = d_out - d_in
        if score > best_score:
            best, best_score = (a, b), score
    if best is None:
        return None
    new = q.copy()
    new[i0], new[i1] = best
    try:
        c = _refine(img, new, cfg)
        return _refine(img, c.corners, cfg, second=True)
    except _Reject:
        return None


def _inner_outer_mm(q: np.ndarray):
    """Board mm of the map's corners and of the board's, for a clockwise quad q whose sides
    0 and 2 are the long ones when they look longer."""
    L = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    W, H = BOARD_MM if L[::2].sum() >= L[1::2].sum() else BOARD_MM[::-1]
    m = BAND_MM
    mm_in = np.array([[m, m], [W - m, m], [W - m, H - m], [m, H - m]])
    mm_out = np.array([[0, 0], [W, 0], [W, H], [0, H]], float)
    return mm_in, mm_out


def refine_from_map(img: np.ndarray, corners: np.ndarray, cfg: OutlineConfig = OutlineConfig()) -> np.ndarray | None:
    """`corners` (photo pixels, clockwise on screen) refitted from the map's edge on the photo's
    pixels and stepped out by the band, or None where the map's edge does not fit."""
    try:
        cand = _refine_from_map(img, corners, cfg)
        return _refine_from_map(img, cand.corners, cfg, second=True).corners
    except _Reject:
        return None


def _refine_from_map(img: np.ndarray, corners: np.ndarray, cfg: OutlineConfig, second: bool = False) -> _Candidate:
    """Refit the board from the map's edge (the band's inner edge), then step out by the band.

    For a table as red-brown as the band, where the board's outer edge hardly shows.
    """
    q = np.asarray(corners, dtype=np.float64)
    mm_in, mm_out = _inner_outer_mm(q)
    inner = cv2.perspectiveTransform(
        mm_in.reshape(-1, 1, 2), cv2.getPerspectiveTransform(mm_out.astype(np.float32), q.astype(np.float32))).reshape(-1, 2)
    band_px = _band_px(q, cfg.sides)
    centre = inner.mean(axis=0)
    lines, quality = [], []
    for i in range(CORNERS):
        res = _fit_side(img, inner[i], inner[(i + 1) % CORNERS], centre, band_px, second, cfg.sides, check_map=False)
        if res is None:
            raise _Reject
        line, frac, band = res
        lines.append(line)
        quality.append(frac * band)
    new_inner = _quad_from_sides(lines)
    if np.max(np.linalg.norm(new_inner - inner, axis=1)) > cfg.sides.max_corner_move * np.linalg.norm(q[0] - q[2]):
        raise _Reject
    Hm = cv2.getPerspectiveTransform(mm_in.astype(np.float32), new_inner.astype(np.float32))
    new = cv2.perspectiveTransform(mm_out.reshape(-1, 1, 2), Hm).reshape(-1, 2)
    if _area(new) < 0:
        new = new[::-1].copy()
        quality = [quality[(2 - k) % CORNERS] for k in range(CORNERS)]
    # A little below an outer-edge fit of the same agreement: the outer edge itself was not seen.
    score = cfg.map_fit_discount * float(min(quality) + cfg.mean_weight * np.mean(quality))
    return _Candidate(corners=new, quality=score, cut_off=False, sides=tuple(float(x) for x in quality),
                      seen_quality=float(min(quality)))


def _quad_from_sides(lines) -> np.ndarray:
    """(4, 2) corners where consecutive side lines meet; _Reject if two are parallel or the quad is not convex."""
    corners = []
    for i in range(CORNERS):
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
    if abs(np.linalg.det(m)) < PARALLEL_DET:
        return None
    t = np.linalg.solve(m, r - p)
    return p + t[0] * d


def _frame_side(a, b, shape, cfg: SideConfig):
    """The frame's edge as a line when side a-b lies along it, else None."""
    h, w = shape[:2]
    tol = max(cfg.frame_min_px, cfg.frame_share * max(w, h))
    for axis, lim in ((0, 0.0), (0, w - 1.0), (1, 0.0), (1, h - 1.0)):
        if abs(a[axis] - lim) < tol and abs(b[axis] - lim) < tol:
            p = np.array([lim, 0.0]) if axis == 0 else np.array([0.0, lim])
            d = np.array([0.0, 1.0]) if axis == 0 else np.array([1.0, 0.0])
            return p, d
    return None


def _sample_strip(img, a, b, centre, u, cfg: SideConfig, m: int | None = None):
    """Colour (Lab, float32) on `m` (default `cfg.profiles`) lines across side a-b at offsets u
    (outward +); (m, len(u), 3)."""
    m = cfg.profiles if m is None else m
    d = (b - a) / np.linalg.norm(b - a)
    n = np.array([d[1], -d[0]])
    if np.dot((a + b) / 2 - centre, n) < 0:
        n = -n  # outward
    t = np.linspace(cfg.corner_skip, 1 - cfg.corner_skip, m)
    base = a[None, :] + t[:, None] * (b - a)[None, :]
    pts = base[:, None, :] + u[None, :, None] * n[None, None, :]
    mapx = pts[:, :, 0].astype(np.float32)
    mapy = pts[:, :, 1].astype(np.float32)
    strip = cv2.remap(img, mapx, mapy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(strip, cv2.COLOR_BGR2LAB).astype(np.float32)
    h, w = img.shape[:2]
    inside = (mapx >= 0) & (mapx <= w - 1) & (mapy >= 0) & (mapy <= h - 1)
    return lab, base, n, inside, strip


def _band_inside(img, a, b, centre, band_px, cfg: OutlineConfig) -> float:
    """0..1: how clearly the red-brown band runs just inside side a-b (for sides on the frame)."""
    sc = cfg.sides
    u = -np.arange(sc.frame_step, sc.frame_depth, sc.frame_step) * band_px
    _, _, _, _, strip = _sample_strip(img, a, b, centre, u, sc)
    mask = border_mask(strip, cfg=cfg.colours).astype(np.float32)
    band = mask[:, u > -sc.band_from * band_px].mean()
    inner = mask[:, u < -sc.frame_map_from * band_px].mean()
    return float(np.clip((band - inner) / 0.5, 0, 1))


def _fit_side(img, a, b, centre, band_px, second, cfg: SideConfig, check_map: bool = True):
    """Fit the outer edge of the band along side a->b.

    Returns ((point, unit direction), share of profiles on the line, band contrast 0..1) or None.
    """
    reach_in = 1.0 * band_px
    reach_out = (cfg.reach_out_second if second else cfg.reach_out) * band_px
    step = max(cfg.min_step_px, band_px / cfg.steps_per_band)
    u = np.arange(-reach_in, reach_out + step / 2, step)
    lab, base, n, inside, strip = _sample_strip(img, a, b, centre, u, cfg)
    m = len(base)

    # Discriminant between the band (just inside the edge) and what lies just outside it.
    band_sel = (u > -cfg.band_from * band_px) & (u < -cfg.band_to * band_px)
    out_sel = (u > cfg.outside_from * band_px) & (u < reach_out)
    fb = lab[:, band_sel].reshape(-1, CHANNELS)
    out_ok = inside[:, out_sel].reshape(-1)
    fo = lab[:, out_sel].reshape(-1, CHANNELS)[out_ok]
    if len(fb) < cfg.min_samples or len(fo) < cfg.min_samples:
        return None
    mb, mo = fb.mean(0), fo.mean(0)
    cov = np.cov(fb.T) + np.cov(fo.T) + np.eye(CHANNELS) * cfg.cov_ridge
    wv = np.linalg.solve(cov, mb - mo)
    lo, hi = float(np.median(fo @ wv)), float(np.median(fb @ wv))
    if hi - lo < EPS:
        return None
    z = ((lab @ wv) - lo) / (hi - lo)  # ~1 on the band, ~0 outside
    z = cv2.blur(z.astype(np.float32), (cfg.profile_blur, 1))
    sep = float(np.linalg.norm(mb - mo) / np.sqrt(np.trace(cov) / CHANNELS))

    # Outermost 0.5 crossing (band -> outside) in the window, to a fraction of a sample.
    win = (u >= -cfg.crossing_from * band_px) & (u <= reach_out - 2 * step)
    cross = (z[:, :-1] >= 0.5) & (z[:, 1:] < 0.5) & win[None, :-1]
    has = cross.any(axis=1)
    k = (cross.shape[1] - 1) - np.argmax(cross[:, ::-1], axis=1)
    rows = np.arange(m)
    z0, z1 = z[rows, k], z[rows, np.minimum(k + 1, len(u) - 1)]
    f = np.where(has, (z0 - 0.5) / np.maximum(z0 - z1, EPS), 0.0)
    edge = u[k] + f * step
    ok = has & inside[rows, k]
    if ok.sum() < cfg.min_crossings * m:
        return None
    P = (base + edge[:, None] * n[None, :])[ok]
    line, inliers = _robust_line(P, max(1.0, band_px / cfg.line_tol_per_band), cfg)
    frac = inliers.sum() / m
    # The strip just inside must differ from the map further in: else this edge is the band's
    # inner edge (map on both sides of the strip) or an edge inside the map. Judged against the
    # map, not by a fixed colour, so a red-brown table does not matter.
    band = float(np.clip(sep / cfg.full_separation, 0, 1)) * float(np.mean(z[:, band_sel] > 0.5))
    if check_map:
        u_map = np.linspace(-cfg.map_from, -cfg.map_to, cfg.map_samples) * band_px
        lab_map, *_ = _sample_strip(img, a, b, centre, u_map, cfg, m=cfg.few_profiles)
        d_map = float(np.linalg.norm(np.median(lab[:, band_sel].reshape(-1, CHANNELS), axis=0)
                                     - np.median(lab_map.reshape(-1, CHANNELS), axis=0)))
        band *= float(np.clip(d_map / cfg.full_map_contrast, 0, 1))
    return line, frac, band


def _robust_line(P: np.ndarray, tol: float, cfg: SideConfig):
    """Line through points with outliers: RANSAC-free trimmed least squares (`cfg.line_rounds` rounds)."""
    keep = np.ones(len(P), bool)
    for _ in range(cfg.line_rounds):
        Q = P[keep]
        c = Q.mean(0)
        _, _, vt = np.linalg.svd(Q - c)
        d = vt[0]
        nrm = np.array([-d[1], d[0]])
        r = (P - c) @ nrm
        med = np.median(r[keep])  # the bulk of the points, not their mean, sets the line
        mad = np.median(np.abs(r[keep] - med)) * MAD_TO_SIGMA
        keep = np.abs(r - med) <= max(tol, cfg.line_sigmas * mad)
        if keep.sum() < cfg.line_min_points:
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


def _board_order(small: np.ndarray, q_small: np.ndarray, cfg: OutlineConfig, dots: DotConfig) -> int:
    """Which of the 4 cyclic orders of q (clockwise) starts at the board's top-left (the shift)."""
    ppm = 1.0
    cities = _city_mm()
    xy = np.clip(np.round(cities * ppm - 0.5).astype(int), 0, [round(BOARD_MM[0] * ppm) - 1, round(BOARD_MM[1] * ppm) - 1])
    scores = np.zeros(CORNERS)
    k_slack = cfg.turn_slack_px
    for k in range(2):
        flat = flatten(small, np.roll(q_small, -k, axis=0), px_per_mm=ppm)
        dm = dot_map(flat, ppm, dots)
        dm = cv2.dilate(dm, np.ones((k_slack, k_slack), np.uint8))  # allow ~2 mm of misplacement
        scores[k] = float(np.mean(dm[xy[:, 1], xy[:, 0]]))
        # Starting two corners later is the same board turned half round: the same flattening rotated.
        dm180 = dm[::-1, ::-1]
        scores[k + 2] = float(np.mean(dm180[xy[:, 1], xy[:, 0]]))
    # Proportions: the sides 0-1 and 2-3 are the board's 795 mm ones.
    L = np.linalg.norm(q_small - np.roll(q_small, -1, axis=0), axis=1)
    ratio_even = np.log(L[::2].sum() / L[1::2].sum())  # >0: sides 0/2 look longer
    target = np.log(BOARD_MM[0] / BOARD_MM[1])
    prior = np.array([-(ratio_even - target) ** 2, -(-ratio_even - target) ** 2] * 2)
    total = scores + cfg.turn_shape_weight * prior
    return int(np.argmax(total))
