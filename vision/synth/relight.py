"""A real labelled photo re-lit and re-coloured as if taken in another home (`benchmarks/relight.py`).

In: a photo (BGR uint8), its truth (the `eval_real.py` format: the board's corners and every
track's owner) and a `World` (`world.random_world`). Out: `Relit`, the new photo's JPEG and its
truth (corners moved with the frame, the world recorded). The real cars and print stay real: only
their colours, the paper's, the light, the noise and the frame change. In this order:

1. Each empty track's print moved by the world's ink of its colour and faded towards the paper.
   Its spaces are the template's, registered on the flattened board (`spaces.light_board`) and
   mapped into the photo through the true corners; only pixels near the print's own measured colour
   move (`PRINT_KEY_DE`). Cars are kept clear of: a car reaches `CAR_REACH_MM` past its space and
   its top leans away from the camera by the parallax of `CAR_HEIGHT_MM`; within `KEEP_OFF_MM` of
   where a car may be, a pixel moves only if its colour is far from the nearby cars' too
   (`CAR_KEY_DE`), so an empty lane beside a claimed one is recoloured up to the cars and the
   cars are not. The lanes of a double held differently, which the truth does not tell apart, count
   as claimed.
2. Each player's cars re-shaded to the world's plastic: the pixels of the player's colour where its
   cars may be get their lightness and chroma scaled and their hue turned from the cars' measured
   shade (as the reader sees it, paper evened out) to the drawn one, so faces and highlights keep
   their shading. Wear shows as lost chroma only (no scuffs are drawn on real cars).
3. The paper's tone: the board, but the cars' pixels (as step 2 found them), multiplied by the
   paper's change.
4. The world's light (`world.light_photo`: casts, flash fall-off and glare, a window and a lamp),
   the phone's metering (`world.meter`), lens and noise (`world.phone_finish`).
5. The frame: a 16:9 phone crops the photo to 16:9 where the whole board fits in the crop (the
   development photos' boards mostly fill 4:3 frames, so most stay 4:3), and a smaller frame
   shrinks it (never enlarged); the corners move with it. The JPEG at the phone's quality.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.template import FLAT_PX_PER_MM
from scoring.board import load_board
from vision.light import light_board, paper_light_map
from vision.rectify import (
    BOARD_MM,
    board_to_photo_homography,
    camera_position,
    flatten,
    parallax_mm,
    photo_px_per_mm,
    to_photo,
)
from vision.settings import SampleSettings
from vision.spaces import inner_mean_lab, space_frames, space_grid

INNER = SampleSettings().inner  # the part of a space the reader measures
from vision.synth.camera import with_flash_tag
from vision.synth.render import default_model, owners_from_truth
from vision.synth.world import (
    World,
    bgr_to_lab,
    lab_to_bgr,
    lab_to_lch,
    lch_to_lab,
    light_photo,
    meter,
    move_ink,
    phone_finish,
)

CAR_REACH_MM = 3.5  # hands lay cars up to 3.5 mm off their spaces' middles (trains.SLOPPY)
CAR_HEIGHT_MM = 7.0  # a car is ~6 mm tall; its top is seen leaning away from the camera
KEEP_OFF_MM = 2.0  # print is moved no nearer than this to where a car may be
PRINT_REACH_MM = 1.0  # a space's printed outline and its anti-aliasing reach past its quad
# A pixel's CIE76 distance to its space's measured print colour: moved fully below the first (the
# print in light and shade, its icon in a lighter or darker tone of the same ink), not at all above
# the second (the dark outline, glare, a neighbouring colour).
PRINT_KEY_DE = (25.0, 45.0)
# Within reach of cars, a pixel's CIE76 distance to every nearby player's measured car colour:
# left alone below the first (it may be a car's), moved as print above the second.
CAR_KEY_DE = (20.0, 30.0)
# A pixel is taken for a player's car when its hue lies within the first of the cars' measured hue
# (not at all beyond the second), and its chroma above a quarter of theirs (fully above a half);
# black cars: chroma under 12 (none over 20) and not much lighter than the cars.
PLASTIC_HUE_DEG = (20.0, 40.0)
DARK_CHROMA = (12.0, 20.0)
CHROMATIC = 12.0  # cars measured under this chroma are keyed as black ones


@dataclass(frozen=True)
class Relit:
    jpeg: bytes
    truth: dict  # the source's truth with the new image_size and corners, "world" and "frame"
    size_wh: tuple[int, int]


def _sample_lab(img: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """CIE Lab (..., 3) of `img` at points (..., 2) (bilinear)."""
    flat = np.asarray(pts, np.float32).reshape(-1, 1, 2)
    px = cv2.remap(img, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return bgr_to_lab(px.astype(np.float32)).reshape(pts.shape[:-1] + (3,))


def _rects_mm(quads_mm: np.ndarray, grow_mm: float) -> np.ndarray:
    """(n, 4, 2) each space's rectangle grown by `grow_mm` all round."""
    c, axis, length, width = space_frames(quads_mm)
    n = np.stack([-axis[:, 1], axis[:, 0]], axis=1)
    hl, hw = (length / 2 + grow_mm)[:, None], (width / 2 + grow_mm)[:, None]
    return np.stack([c - axis * hl - n * hw, c + axis * hl - n * hw, c + axis * hl + n * hw, c - axis * hl + n * hw], 1)


def _fill(mask: np.ndarray, polys_px) -> None:
    for p in polys_px:
        cv2.fillConvexPoly(mask, np.round(np.asarray(p) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)


def _weight(x: np.ndarray, full: float, none: float) -> np.ndarray:
    """1 where x <= full, 0 where x >= none, linear between."""
    return np.clip((none - x) / (none - full), 0.0, 1.0)


class _Photo:
    """A photo's board: where each space is in the photo, who holds it, and where cars may be."""

    def __init__(self, image_bgr: np.ndarray, truth: dict):
        board, model = load_board(), default_model()
        h, w = image_bgr.shape[:2]
        self.corners = np.asarray(truth["corners"], float)
        self.track_of = np.repeat(np.arange(len(model.spaces)), [len(s) for s in model.spaces])
        self.colours = [t.color for t in board.tracks]
        flat = flatten(image_bgr, self.corners, FLAT_PX_PER_MM)
        self.lit = light_board(flat, np.concatenate(model.spaces), FLAT_PX_PER_MM)
        self.paper_grid = paper_light_map(flat, self.lit.quads_px, FLAT_PX_PER_MM)
        self.quads_mm = (self.lit.quads_px + 0.5) / FLAT_PX_PER_MM
        self.quads = to_photo(self.quads_mm.reshape(-1, 2), self.corners).reshape(-1, 4, 2)
        self.px_per_mm = photo_px_per_mm(self.corners)
        self.camera_mm = camera_position(self.corners, (w, h))
        owners = owners_from_truth(board, truth)
        self.owner = list(owners.owner)
        # Each space's possible players: its owner, or every owner of a double held differently.
        candidates: list[set] = [{o} - {None} for o in self.owner]
        for ids, group in owners.unsure:
            for t in ids:
                candidates[t] = set(group) - {None}
        self.maybe_held = np.array([bool(candidates[t]) for t in self.track_of])
        self.candidates = [candidates[t] for t in self.track_of]
        self.players = sorted({p for c in self.candidates for p in c})
        # Where each player's cars may be seen, and what colour they are in this photo (their
        # surely held spaces' middles).
        self.zone = {}
        self.car_lab = {}
        for player in self.players:
            self.zone[player] = np.zeros((h, w), np.uint8)
            _fill(self.zone[player], self.car_zone(np.flatnonzero([player in c for c in self.candidates])))
            sure = np.array([self.owner[t] == player for t in self.track_of])
            if sure.any():
                inner = space_grid(self.quads[sure], INNER, (9, 5))
                self.car_lab[player] = np.median(_sample_lab(image_bgr, inner).reshape(-1, 3), axis=0)
        anywhere = np.zeros((h, w), np.uint8)
        for z in self.zone.values():
            anywhere |= z
        r = max(1, int(round(KEEP_OFF_MM * self.px_per_mm)))
        self.near_cars = cv2.dilate(anywhere, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1)))

    def car_zone(self, spaces: np.ndarray) -> list[np.ndarray]:
        """Photo polygons where the cars on `spaces` (indices) may be seen."""
        feet = _rects_mm(self.quads_mm[spaces], CAR_REACH_MM)
        tops = feet + parallax_mm(feet.reshape(-1, 2), self.camera_mm, CAR_HEIGHT_MM).reshape(feet.shape)
        out = []
        for f, t in zip(feet, tops):
            hull = cv2.convexHull(np.concatenate([f, t]).astype(np.float32)).reshape(-1, 2)
            out.append(to_photo(hull, self.corners))
        return out

    def paper_bgr_at(self, points_mm: np.ndarray) -> np.ndarray:
        """(n, 3) the paper's BGR in the photo (not evened out) in the light map's cell over each point."""
        ny, nx = self.paper_grid.shape[:2]
        ix = np.clip((points_mm[:, 0] / BOARD_MM[0] * nx).astype(int), 0, nx - 1)
        iy = np.clip((points_mm[:, 1] / BOARD_MM[1] * ny).astype(int), 0, ny - 1)
        return self.paper_grid[iy, ix]


def _recolour_print(img: np.ndarray, photo: _Photo, world: World) -> None:
    """Step 1 (module docstring), in place on `img` (uint8 BGR)."""
    h, w = img.shape[:2]
    for t in range(len(photo.owner)):
        spaces = np.flatnonzero((photo.track_of == t) & ~photo.maybe_held)
        if len(spaces) == 0:
            continue
        ink = world.print_run.inks[photo.colours[t]]
        polys = [to_photo(r, photo.corners) for r in _rects_mm(photo.quads_mm[spaces], PRINT_REACH_MM)]
        pts = np.concatenate(polys)
        x0, y0 = np.maximum(np.floor(pts.min(axis=0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(pts.max(axis=0)).astype(int) + 2, [w, h])
        if x1 <= x0 or y1 <= y0:
            continue
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        _fill(mask, [p - [x0, y0] for p in polys])
        print_lab = np.median(_sample_lab(img, space_grid(photo.quads[spaces], INNER, (9, 5))).reshape(-1, 3), axis=0)
        centre = photo.quads_mm[spaces].reshape(-1, 2).mean(axis=0, keepdims=True)
        paper_lab = bgr_to_lab(photo.paper_bgr_at(centre).astype(np.float32))[0]
        crop = img[y0:y1, x0:x1].astype(np.float32)
        lab = bgr_to_lab(crop)
        key = _weight(np.linalg.norm(lab - print_lab, axis=-1), *PRINT_KEY_DE) * (mask / 255.0)
        near = photo.near_cars[y0:y1, x0:x1] > 0
        if near.any():
            far = np.ones(near.shape, np.float32)
            for player, car in photo.car_lab.items():
                if photo.zone[player][y0:y1, x0:x1].any():
                    far = np.minimum(far, 1 - _weight(np.linalg.norm(lab - car, axis=-1), *CAR_KEY_DE))
            key = np.where(near, key * far, key)
        moved = move_ink(lab, ink)
        moved += world.print_run.fade * (paper_lab - moved)
        lab += key[..., None] * (moved - lab)
        img[y0:y1, x0:x1] = np.clip(lab_to_bgr(lab), 0, 255).astype(np.uint8)


def _reshade_cars(img: np.ndarray, photo: _Photo, world: World) -> np.ndarray:
    """Step 2 (module docstring), in place on `img` (uint8 BGR); returns where cars were seen
    ((h, w) float32, 1 on a car's pixel, 0 off any)."""
    h, w = img.shape[:2]
    cars = np.zeros((h, w), np.float32)
    seen = inner_mean_lab(photo.lit.board, photo.lit.quads_px)
    seen = np.stack([seen[:, 0] * 100 / 255, seen[:, 1] - 128, seen[:, 2] - 128], axis=1)
    target = {p: lab_to_lch(bgr_to_lab(bgr)) for p, bgr in world.cars.plastic_bgr().items()}
    for player, car in photo.car_lab.items():
        sure = np.array([photo.owner[t] == player for t in photo.track_of])
        L_m, C_m, h_m = lab_to_lch(np.median(seen[sure], axis=0))
        L_t, C_t, h_t = target[player]
        in_photo = lab_to_lch(car)
        black = in_photo[1] < CHROMATIC
        k_l = L_t / max(L_m, 1.0)
        k_c, turn = (1.0, 0.0) if black else (C_t / max(C_m, 1.0), (h_t - h_m + 180) % 360 - 180)
        zone = photo.zone[player]
        ys, xs = np.nonzero(zone)
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        lab = bgr_to_lab(img[y0:y1, x0:x1].astype(np.float32))
        lch = lab_to_lch(lab)
        if black:
            key = _weight(lch[..., 1], *DARK_CHROMA) * _weight(lch[..., 0], in_photo[0] + 20, in_photo[0] + 35)
        else:
            dh = np.abs((lch[..., 2] - in_photo[2] + 180) % 360 - 180)
            key = _weight(dh, *PLASTIC_HUE_DEG) * np.clip(lch[..., 1] / (0.25 * in_photo[1]) - 1, 0, 1)
        key *= zone[y0:y1, x0:x1] / 255.0
        moved = lch_to_lab(np.stack([lch[..., 0] * k_l, lch[..., 1] * k_c, lch[..., 2] + turn], axis=-1))
        lab += key[..., None] * (moved.astype(np.float32) - lab)
        img[y0:y1, x0:x1] = np.clip(lab_to_bgr(lab), 0, 255).astype(np.uint8)
        cars[y0:y1, x0:x1] = np.maximum(cars[y0:y1, x0:x1], key)
    return cars


def _tone_paper(img: np.ndarray, photo: _Photo, world: World, cars: np.ndarray) -> np.ndarray:
    """Step 3 (module docstring): a float32 copy of `img` (`cars`: where cars were seen, 0..1)."""
    h, w = img.shape[:2]
    paper = bgr_to_lab(np.nanmedian(photo.paper_grid.reshape(-1, 3), axis=0).astype(np.float32))
    dl, a, b = world.print_run.paper_lab
    gain = lab_to_bgr(np.array([paper[0] + dl, a, b], np.float32)) / np.maximum(lab_to_bgr(paper), 1.0)
    board = np.zeros((h, w), np.uint8)
    _fill(board, [photo.corners])
    soft = cv2.GaussianBlur(board, (0, 0), max(1.0, photo.px_per_mm)).astype(np.float32) / 255 * (1 - cars)
    return img.astype(np.float32) * (1 + soft[..., None] * (gain - 1).astype(np.float32))


def _frame(size_wh: tuple[int, int], corners: np.ndarray, want_wh: tuple[int, int],
           rng: np.random.Generator) -> tuple[tuple[int, int, int, int], float, str]:
    """The crop (x, y, w, h) and scale of step 5 (module docstring), and what was done, in words."""
    w, h = size_wh
    crop, kind = (0, 0, w, h), "as taken"
    if abs(max(want_wh) / min(want_wh) - 16 / 9) < 0.01:
        long_, short = (w, h) if w >= h else (h, w)
        cut = int(round(long_ * 9 / 16))
        if cut < short:
            across = corners[:, 1] if w >= h else corners[:, 0]  # the board along the side cut
            lo, hi = across.min(), across.max()
            margin = 0.02 * short  # what a person framing the board leaves (at 1 % the locator took it for cut off)
            first, last = max(0.0, hi + margin - cut), min(float(short - cut), lo - margin)
            if first <= last:
                start = int(round(rng.uniform(first, last)))
                crop = (0, start, w, cut) if w >= h else (start, 0, cut, h)
                kind = "cropped to 16:9"
            else:
                kind = "as taken (the board does not fit a 16:9 crop)"
    scale = min(1.0, max(want_wh) / max(crop[2], crop[3]))
    return crop, scale, kind + (f", shrunk x{scale:.3f}" if scale < 1 else "")


def relight(image_bgr: np.ndarray, truth: dict, world: World, rng: np.random.Generator) -> Relit:
    """The photo as taken in `world` (module docstring); `rng` draws the noise and the crop."""
    photo = _Photo(image_bgr, truth)
    h, w = image_bgr.shape[:2]
    img = np.ascontiguousarray(image_bgr).copy()
    _recolour_print(img, photo, world)
    cars = _reshade_cars(img, photo, world)
    lit = _tone_paper(img, photo, world, cars)
    H = board_to_photo_homography(photo.corners)
    lit = light_photo(lit, world.light, H, photo.camera_mm, BOARD_MM)
    gx, gy = np.meshgrid(np.linspace(45, BOARD_MM[0] - 45, 48), np.linspace(45, BOARD_MM[1] - 45, 32))
    probe = np.round(to_photo(np.stack([gx.ravel(), gy.ravel()], 1), photo.corners)).astype(int)
    probe = probe[(probe[:, 0] >= 0) & (probe[:, 0] < w) & (probe[:, 1] >= 0) & (probe[:, 1] < h)]
    lit = meter(lit, lit[probe[:, 1], probe[:, 0]], world.light)
    lit = phone_finish(lit, world.phone, world.light, rng)
    out = np.clip(lit, 0, 255).astype(np.uint8)

    (x, y, cw, ch), scale, kind = _frame((w, h), photo.corners, world.phone.size_wh, rng)
    out = out[y:y + ch, x:x + cw]
    corners = photo.corners - [x, y]
    if scale < 1:
        size = (max(1, int(round(cw * scale))), max(1, int(round(ch * scale))))
        out = cv2.resize(out, size, interpolation=cv2.INTER_AREA)
        corners = (corners + 0.5) * [size[0] / cw, size[1] / ch] - 0.5
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(world.phone.jpeg_quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    new = dict(truth)
    new.update(image_size=[out.shape[1], out.shape[0]], corners=np.round(corners, 2).tolist(),
               world=world.to_dict(), frame={"crop_xywh": [x, y, cw, ch], "scale": round(scale, 5), "kind": kind})
    data = with_flash_tag(buf.tobytes(), world.light.kind == "flash")
    return Relit(data, new, (out.shape[1], out.shape[0]))
