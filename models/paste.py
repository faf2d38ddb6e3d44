"""Real cars laid onto real empty boards, in patch space (`ttr train --real DIR --paste N`).

Why: the fine-tune on real patches (`models.real`) sees only the three played states of the dev
folder, so each car is seen on one printed colour, in one light, once or twice. The misses left are
cars on print of their own colour (blue on blue, black on black) and colour in dim light. The truth
says where every car is, so the real cars can be cut out of the played photos and laid onto the
empty photos' spaces of any printed colour (deliberately often their own), in other lights: many
more real-looking labelled patches from the same few photos.

Why in patch space: the reader's classifier sees a 30 mm patch per space, its long axis horizontal
and centred (`vision.spaces.crop_spaces`), so every collected photo gives its 309 patches in the
same per-space frame. A car cut from space k of a played photo sits where a car sits on any space
k' of an empty photo: pasting patch onto patch is exact for this classifier, no board warp needed.

How (one car):
- Its pixels: where the played photo's patch k differs from the empty photos' patch k (OpenCV Lab
  distance, the least over the empty photos, lightly blurred: their registration differs by a
  pixel or two), united with the space's own core (a car covers it, even on print of its own
  colour, where the difference is faint), cleaned by opening and closing, and kept inside the
  car's region: the pixels within `grow_mm` of its own track's spaces and nearer to them than to
  any other track's (cars stand up and lean by parallax; a double's other lane stays out, the
  same track's next cars stay in, as a claimed track shows them). Its shadow is in where it differs.
- Laid on: an empty photo's patch of a space k' (printed in the car's own colour with probability
  `own_print_share`, else any space), with a feathered mask, a shift of a few pixels, flips, and
  the car's own light and white balance changed a little. Label: the car's colour.
The fine-tune adds its usual augmentation (white balance, light, blur, shift, zoom) on top.

Only the photos it is given are used: `pasted_patches` takes the cars from the photos of the
fold's training states and the backgrounds from its training empty photos, never a left-out one.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.spaces import patch_points, space_frames

EMPTY = 0  # class index of `empty` (vision.reading.SPACE_CLASSES order)


@dataclass(frozen=True)
class PasteConfig:
    threshold: float = 22.0  # Lab distance (OpenCV 8-bit scale) from the empty look that is car
    grow_mm: float = 3.0  # the car's region: this far around its track's spaces
    core: tuple[float, float] = (0.85, 0.6)  # the part of the space (length, width) always car
    feather_px: float = 1.2  # the mask's edge softness (Gaussian sigma, patch pixels)
    shift_px: int = 3  # the car moves up to this many pixels each way on its new space
    own_print_share: float = 0.5  # how often a car goes on print of its own colour
    car_gain: tuple[float, float] = (0.75, 1.1)  # the car's own light (dim light, glare)
    car_wb: float = 0.06  # the car's own white balance, each channel x(1 +- this)
    # This share of the patches are the bare backgrounds the cars were laid on (label empty), so the
    # net learns the car, not the print: without them, print of a player colour on the empty boards
    # was read as a car of that colour (13.9 % of the empty boards' patches wrong in fold D, 1.4 %
    # before; 3 false claims).
    bare_share: float = 0.5
    # Of the bare backgrounds whose space is a lane of a double, this share is the other lane's patch
    # instead, with the car laid on the first lane seen from beside it (label empty): the reader's
    # misses include a double's empty lane read as a car beside a real one.
    neighbour_share: float = 0.5


# ----------------------------------------------------------------------------- geometry


def _rect_distance(pts: np.ndarray, c: np.ndarray, axis: np.ndarray, length: float, width: float) -> np.ndarray:
    """Distance (same unit) of points (..., 2) to a rectangle (centre, unit long axis, sides); 0 inside."""
    d = pts - c
    along = np.abs(d @ axis) - length / 2
    across = np.abs(d @ np.array([-axis[1], axis[0]])) - width / 2
    return np.hypot(np.maximum(along, 0), np.maximum(across, 0))


def patch_points_mm(quads_mm: np.ndarray, side_mm: float, imgsz: int) -> np.ndarray:
    """(N, S, S, 2) board point (mm) each patch pixel shows, as `vision.spaces.crop_spaces` cuts it."""
    return patch_points(quads_mm, side_mm / imgsz, imgsz)


def car_regions(quads_mm: np.ndarray, track_ids: np.ndarray, side_mm: float, imgsz: int,
                grow_mm: float, core_part: tuple[float, float] = PasteConfig.core) -> tuple[np.ndarray, np.ndarray]:
    """Per space, in its patch frame: (region, core), (N, S, S) bool. Region: the pixels within
    `grow_mm` of a space of its own track and nearer to those than to any other track's space.
    Core: the space's own middle (`core_part` of its length and width), always car when it is held."""
    quads_mm = np.asarray(quads_mm, float)
    c, axis, length, width = space_frames(quads_mm)
    pts = patch_points_mm(quads_mm, side_mm, imgsz)
    n = len(quads_mm)
    region = np.zeros((n, imgsz, imgsz), bool)
    core = np.zeros((n, imgsz, imgsz), bool)
    reach = side_mm * 0.75 + grow_mm + float(length.max())
    for k in range(n):
        near = np.flatnonzero(np.linalg.norm(c - c[k], axis=1) < reach)
        d_own = np.full((imgsz, imgsz), np.inf)
        d_other = np.full((imgsz, imgsz), np.inf)
        for j in near:
            d = _rect_distance(pts[k], c[j], axis[j], length[j], width[j])
            if track_ids[j] == track_ids[k]:
                d_own = np.minimum(d_own, d)
            else:
                d_other = np.minimum(d_other, d)
        region[k] = (d_own <= grow_mm) & (d_own < d_other)
        dk = pts[k] - c[k]
        core[k] = ((np.abs(dk @ axis[k]) <= length[k] * core_part[0] / 2)
                   & (np.abs(dk @ np.array([-axis[k][1], axis[k][0]])) <= width[k] * core_part[1] / 2))
    return region, core


# ----------------------------------------------------------------------------- one car


def _lab(patch: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(cv2.GaussianBlur(patch, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(np.float32)


def car_mask(played: np.ndarray, empties: np.ndarray, region: np.ndarray, core: np.ndarray,
             cfg: PasteConfig = PasteConfig()) -> np.ndarray:
    """The car's alpha (S, S) float 0..1 in a played patch, from the same space's patches on empty
    photos (M, S, S, 3): differing pixels and the core, cleaned, inside the region, feathered."""
    lab = _lab(played)
    dist = np.min([np.linalg.norm(lab - _lab(e), axis=2) for e in empties], axis=0)
    m = ((dist > cfg.threshold) | core).astype(np.uint8)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    m = (m.astype(bool) | core) & region
    # Keep what joins the core: a speck elsewhere in the region is glare or registration, not car.
    _, comp = cv2.connectedComponents(m.astype(np.uint8), connectivity=8)
    keep = np.isin(comp, np.unique(comp[core & m])) & m
    alpha = cv2.GaussianBlur(keep.astype(np.float32), (0, 0), cfg.feather_px) if cfg.feather_px > 0 else \
        keep.astype(np.float32)
    return np.clip(alpha * region, 0.0, 1.0)


def place_car(car: np.ndarray, alpha: np.ndarray, shift: tuple[int, int] = (0, 0), flip_h: bool = False,
              flip_v: bool = False, gain: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`car` (S, S, 3 BGR uint8) and its `alpha` moved by `shift` (dx, dy) pixels, flipped, its colour
    multiplied by `gain` (3,): (car float32, alpha float32), ready for `blend`."""
    car = car.astype(np.float32)
    a = alpha.astype(np.float32)
    if flip_h:
        car, a = car[:, ::-1], a[:, ::-1]
    if flip_v:
        car, a = car[::-1], a[::-1]
    if gain is not None:
        car = car * np.asarray(gain, np.float32)
    if shift != (0, 0):
        s = car.shape[0]
        m = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        car = cv2.warpAffine(car, m, (s, s), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE)
        a = cv2.warpAffine(a, m, (s, s), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return np.ascontiguousarray(car), np.ascontiguousarray(a)


def blend(car: np.ndarray, alpha: np.ndarray, background: np.ndarray) -> np.ndarray:
    """`car` laid on `background` with `alpha`; where alpha is 0 the background's pixels, unchanged."""
    bg = background.astype(np.float32)
    out = alpha[..., None] * car + (1 - alpha[..., None]) * bg
    out = np.where(alpha[..., None] > 0, out, bg)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def paste_car(car: np.ndarray, alpha: np.ndarray, background: np.ndarray, shift: tuple[int, int] = (0, 0),
              flip_h: bool = False, flip_v: bool = False, gain: np.ndarray | None = None) -> np.ndarray:
    """`car` (S, S, 3 BGR uint8) laid on `background` with `alpha`, moved by `shift` (dx, dy) pixels,
    flipped, its colour multiplied by `gain` (3,). Pixels where the moved alpha is 0 are the
    background's, unchanged."""
    return blend(*place_car(car, alpha, shift, flip_h, flip_v, gain), background)


def other_lane_space(quads_mm: np.ndarray, track_ids: np.ndarray, double_ids) -> np.ndarray:
    """(N,) per space, the nearest space of its double route's other lane, or -1 on a single route."""
    c = space_frames(np.asarray(quads_mm, float))[0]
    out = np.full(len(track_ids), -1)
    for k, t in enumerate(track_ids):
        o = double_ids[int(t)]
        if o >= 0:
            cand = np.flatnonzero(track_ids == o)
            out[k] = cand[np.argmin(np.linalg.norm(c[cand] - c[k], axis=1))]
    return out


def frame_warp(quads_mm: np.ndarray, side_mm: float, imgsz: int, src: int, dst: int) -> np.ndarray:
    """2x3 affine taking space `dst`'s patch pixels to space `src`'s (cv2.WARP_INVERSE_MAP): what
    `src`'s patch shows, seen from `dst`'s patch frame (`crop_spaces`' pixel-to-board maps)."""
    c, axis, _, _ = space_frames(np.asarray(quads_mm, float))
    scale, half = side_mm / imgsz, (imgsz - 1) / 2.0

    def frame(k):
        return scale * np.stack([axis[k], [-axis[k][1], axis[k][0]]], axis=1)  # columns u, v

    s_src, s_dst = frame(src), frame(dst)
    lin = np.linalg.solve(s_src, s_dst)
    off = np.linalg.solve(s_src, c[dst] - c[src]) - lin @ np.array([half, half]) + half
    return np.hstack([lin, off[:, None]]).astype(np.float32)


def car_seen_from(car: np.ndarray, alpha: np.ndarray, warp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A placed car (`place_car`) as another space's patch frame shows it (`frame_warp`)."""
    s = car.shape[0]
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    return (cv2.warpAffine(car, warp, (s, s), flags=flags, borderMode=cv2.BORDER_REPLICATE),
            cv2.warpAffine(alpha, warp, (s, s), flags=flags, borderMode=cv2.BORDER_CONSTANT, borderValue=0))


# ----------------------------------------------------------------------------- many cars


@dataclass
class PasteSet:
    """Pasted patches and where each came from (indices into the photos given)."""

    x: np.ndarray  # (N, S, S, 3) uint8 BGR
    y: np.ndarray  # (N,) class index
    source: np.ndarray  # (N, 2) photo index, space of the car
    target: np.ndarray  # (N, 2) photo index, space it was laid on


def pasted_patches(photos: list[dict], n: int, printed: list[str], classes: tuple[str, ...],
                   region: np.ndarray, core: np.ndarray, seed: int = 0, cfg: PasteConfig = PasteConfig(),
                   other: np.ndarray | None = None, warp=None) -> PasteSet:
    """`n` patches of real cars laid on real empty boards. `photos`: the fold's training photos
    (`models.real.collect` entries: patches, labels, state); the cars come from those with cars, the
    backgrounds and empty looks from those of state "empty". `printed`: each space's printed colour.
    Colours are drawn evenly; `own_print_share` of the cars go on print of their own colour;
    `bare_share` of the patches are bare backgrounds of pasted ones (label empty, source -1), or,
    given `other` (each space's other lane, -1: none) and `warp(src, dst)` (`frame_warp`), for a car
    on a double's lane, `neighbour_share` of those the other lane's patch with the car beside it
    (label empty, source the car)."""
    s = photos[0]["patches"].shape[1] if photos else 0
    played = [i for i, o in enumerate(photos) if o["state"] != "empty" and (o["labels"] > EMPTY).any()]
    blank = [i for i, o in enumerate(photos) if o["state"] == "empty"]
    if n <= 0 or not played or not blank:
        return PasteSet(np.zeros((0, s, s, 3), np.uint8), np.zeros(0, int), np.zeros((0, 2), int), np.zeros((0, 2), int))
    rng = np.random.default_rng(seed)
    cars = {c: [(i, k) for i in played for k in np.flatnonzero(photos[i]["labels"] == c)]
            for c in range(1, len(classes))}
    colours = [c for c in cars if cars[c]]
    printed = np.asarray(printed)
    empty_looks = np.stack([photos[i]["patches"] for i in blank], axis=1)  # (309, M, S, S, 3)
    masks: dict = {}
    xs, ys, src, dst = [], [], [], []
    n_bare = round(n * cfg.bare_share)
    for m in range(n - n_bare):
        c = colours[rng.integers(len(colours))]
        i, k = cars[c][rng.integers(len(cars[c]))]
        if (i, k) not in masks:
            masks[(i, k)] = car_mask(photos[i]["patches"][k], empty_looks[k], region[k], core[k], cfg)
        own = np.flatnonzero(printed == classes[c])
        if len(own) and rng.random() < cfg.own_print_share:
            k2 = int(own[rng.integers(len(own))])
        else:
            k2 = int(rng.integers(len(printed)))
        j = blank[rng.integers(len(blank))]
        gain = rng.uniform(*cfg.car_gain) * (1 + rng.uniform(-cfg.car_wb, cfg.car_wb, 3))
        shift = tuple(int(v) for v in rng.integers(-cfg.shift_px, cfg.shift_px + 1, 2))
        car, alpha = place_car(photos[i]["patches"][k], masks[(i, k)], shift, bool(rng.random() < 0.5),
                               bool(rng.random() < 0.5), gain)
        xs.append(blend(car, alpha, photos[j]["patches"][k2]))
        ys.append(c)
        src.append((i, k))
        dst.append((j, k2))
        if m >= n_bare:
            continue
        o = -1 if other is None or warp is None else int(other[k2])
        if o >= 0 and rng.random() < cfg.neighbour_share:  # the other lane, the car beside it
            xs.append(blend(*car_seen_from(car, alpha, warp(k2, o)), photos[j]["patches"][o]))
            ys.append(EMPTY)
            src.append((i, k))
            dst.append((j, o))
        else:  # the same background, bare
            xs.append(photos[j]["patches"][k2].copy())
            ys.append(EMPTY)
            src.append((-1, -1))
            dst.append((j, k2))
    while len(ys) < n:  # bare_share above one half: more bare backgrounds of the cars' spaces
        j, k2 = dst[len(ys) % max(len(dst), 1)]
        xs.append(photos[j]["patches"][k2].copy())
        ys.append(EMPTY)
        src.append((-1, -1))
        dst.append((j, k2))
    return PasteSet(np.stack(xs), np.asarray(ys), np.asarray(src), np.asarray(dst))


def fold_pasted(photos: list[dict], leave_out: str | None, n: int, quads_mm: np.ndarray, track_ids: np.ndarray,
                printed: list[str], classes: tuple[str, ...], side_mm: float, seed: int = 0,
                cfg: PasteConfig = PasteConfig(), double_ids=None) -> tuple[PasteSet, list[dict]]:
    """The pasted patches of a fold: built only from the photos not of state `leave_out` (with
    `double_ids`, per track its double's other track or -1, also the other lanes beside the cars).
    Returns them and the photos used (for the record)."""
    train = [o for o in photos if not (leave_out and o["state"] == leave_out)]
    if n <= 0 or not train:
        return pasted_patches([], 0, printed, classes, np.zeros((0,)), np.zeros((0,))), train
    s = train[0]["patches"].shape[1]
    region, core = car_regions(quads_mm, track_ids, side_mm, s, cfg.grow_mm, cfg.core)
    other, warp = None, None
    if double_ids is not None:
        other = other_lane_space(quads_mm, track_ids, double_ids)
        warp = lambda a, b: frame_warp(quads_mm, side_mm, s, a, b)
    return pasted_patches(train, n, printed, classes, region, core, seed, cfg, other, warp), train
