"""Plastic train cars, placed on printed spaces as players place them, drawn onto the flat board.

`place_cars(rng, model, claims)` -> list of `Car` (where each car stands, in millimetres);
`draw_cars(img, px_per_mm, cars, camera_mm, light)` paints them as 3-D blocks: a soft shadow on the
board, the sides that face the camera, the top face shifted by the camera's parallax, a recessed
roof panel, end details and a highlight along the top. The parallax makes a car seen from a low
camera show its near side, as in a phone photo, once the flat board is warped into the photo.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np

from scoring.board import load_board
from scoring.rules import ROUTE_POINTS
from vision.synth.board_art import BoardModel, _space_frame

# Player plastic (BGR), the centre of each game's variation.
PLASTIC_BGR = {
    "red": (48, 48, 215), "blue": (176, 98, 22), "green": (66, 122, 46),
    "yellow": (28, 208, 246), "black": (44, 44, 46),
}
CAR_MM = (23.0, 7.5, 6.0)  # length, width, height of a car
_SHIFT = 4
_ONE = 1 << _SHIFT


@dataclass(frozen=True)
class Car:
    player: str
    track_id: int
    center_mm: np.ndarray  # (2,) where the car's footprint is centred
    axis: np.ndarray  # (2,) unit vector along the car
    length_mm: float
    width_mm: float
    height_mm: float
    bgr: np.ndarray  # (3,) plastic colour


Plastic = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]  # a game's plastic colours -> changed ones


@dataclass(frozen=True)
class Hands:
    """How carefully players lay their cars: each car's offset from its space's middle, along it and
    across it (normal, standard deviation, clipped to the largest), a whole track's offset, and a
    double's track pushed towards its free lane."""

    along_sd_mm: float = 0.8
    along_max_mm: float = 2.5
    across_sd_mm: float = 0.5
    across_max_mm: float = 1.5
    track_sd_mm: float = 0.5
    # A double's track laid towards its other lane, when that lane is free, by this much (uniform,
    # mm): players crowd a double's lanes, as the real D2 game's New York-Washington shows.
    towards_free_lane_mm: tuple[float, float] = (0.0, 0.0)


CAREFUL = Hands()  # the renderer's default
# Cars laid a few millimetres off their spaces, as on real tables (a car's middle up to 3.5 mm off
# a 7.5 mm wide space, so half of the car may stand beside it).
SLOPPY = Hands(along_sd_mm=1.2, along_max_mm=3.5, across_sd_mm=1.6, across_max_mm=3.5, track_sd_mm=1.0)
# Every double's claimed track pushed 1.5-3.5 mm towards its free lane, each car laid carefully on
# the track so pushed: the lanes lie ~9 mm apart, so the cars stay nearer their own lane, as a
# player would still say.
CROWDED = replace(CAREFUL, towards_free_lane_mm=(1.5, 3.5))
HANDS = {"careful": CAREFUL, "sloppy": SLOPPY, "crowded": CROWDED}


def player_colors(rng: np.random.Generator, players, plastic: Plastic | None = None) -> dict[str, np.ndarray]:
    """This game's plastic for each player: the box colour with lot-to-lot and lighting drift
    (`plastic`, if given, then changes it: the training recipe's wider plastic)."""
    out = {}
    for p in players:
        base = np.array(PLASTIC_BGR[p], float)
        if p == "black":  # dark gray, nearly neutral
            base = np.full(3, rng.uniform(25, 80)) + rng.normal(0, 2.5, 3)
        else:
            base = base * rng.uniform(0.85, 1.15) + rng.normal(0, 8, 3)
        out[p] = np.clip(base, 8, 250)
    return plastic(out) if plastic is not None else out


def place_cars(rng: np.random.Generator, model: BoardModel, claims: dict[str, list[int]],
               plastic: Plastic | None = None, hands: Hands = CAREFUL) -> list[Car]:
    """One car per space of every claimed track, placed the way hands place them."""
    colors = player_colors(rng, sorted(claims), plastic)
    cars = []
    claimed = {tid for ids in claims.values() for tid in ids}
    for player, ids in claims.items():
        for tid in ids:
            shift = rng.normal(0, hands.track_sd_mm, 2)  # a whole track laid a little off
            shift = shift + towards_free_lane(rng, model, tid, claimed, hands)
            for quad in model.spaces[tid]:
                c, u, length, width = _space_frame(quad)
                v = np.array([-u[1], u[0]])
                if rng.random() < 0.04:  # knocked askew
                    angle = np.radians(rng.choice([-1, 1]) * rng.uniform(7, 22))
                    off = rng.normal(0, 1.5, 2)
                else:
                    angle = np.radians(rng.normal(0, 2.0))
                    off = np.array([np.clip(rng.normal(0, hands.along_sd_mm), -hands.along_max_mm, hands.along_max_mm),
                                    np.clip(rng.normal(0, hands.across_sd_mm), -hands.across_max_mm, hands.across_max_mm)])
                ca, sa = np.cos(angle), np.sin(angle)
                axis = ca * u + sa * v
                center = c + shift + off[0] * u + off[1] * v
                cars.append(Car(
                    player=player, track_id=tid, center_mm=center, axis=axis,
                    length_mm=min(CAR_MM[0], 0.95 * length) * rng.uniform(0.98, 1.02),
                    width_mm=float(np.clip(0.93 * width, 6.5, CAR_MM[1])) * rng.uniform(0.97, 1.03),
                    height_mm=CAR_MM[2] * rng.uniform(0.95, 1.05),
                    bgr=np.clip(colors[player] * rng.uniform(0.97, 1.03), 0, 255),
                ))
    return cars


def towards_free_lane(rng: np.random.Generator, model: BoardModel, track_id: int, claimed: set[int],
                      hands: Hands) -> np.ndarray:
    """(2,) mm: how far `hands` push a claimed track towards the other lane of its double when that
    lane is free (`Hands.towards_free_lane_mm`); nothing for a single route or a claimed lane. No
    draw from `rng` unless there is a push, so the other hands' renders stay as they were."""
    lo, hi = hands.towards_free_lane_mm
    other = load_board().double_ids[track_id]
    if hi <= 0 or other < 0 or other in claimed:
        return np.zeros(2)
    towards = np.mean(model.spaces[other], axis=(0, 1)) - np.mean(model.spaces[track_id], axis=(0, 1))
    return towards / max(float(np.linalg.norm(towards)), 1e-9) * rng.uniform(lo, hi)


def _rect(center, axis, half_len, half_wid) -> np.ndarray:
    v = np.array([-axis[1], axis[0]])
    return np.array([center - axis * half_len - v * half_wid, center + axis * half_len - v * half_wid,
                     center + axis * half_len + v * half_wid, center - axis * half_len + v * half_wid])


def _p(mm, ppm) -> np.ndarray:
    return np.round(np.asarray(mm) * ppm * _ONE).astype(np.int32).reshape(-1, 1, 2)


def _pt(mm, ppm) -> tuple[int, int]:
    return int(round(mm[0] * ppm * _ONE)), int(round(mm[1] * ppm * _ONE))


def _c(bgr) -> tuple[float, float, float]:
    return tuple(float(min(255.0, max(0.0, v))) for v in bgr)


def _darken(img: np.ndarray, mask: np.ndarray, strength: float) -> None:
    """img *= 1 - strength * mask / 255, in place (uint8 BGR image, uint8 mask)."""
    keep = (255 - strength * mask.astype(np.float32)).astype(np.uint8)
    img[:] = cv2.multiply(img, cv2.merge([keep, keep, keep]), scale=1 / 255)


def draw_cars(img: np.ndarray, px_per_mm: float, cars: list[Car], camera_mm: np.ndarray,
              light: np.ndarray, rng: np.random.Generator, shadow_strength: float = 0.45,
              worn: float = 0.0) -> np.ndarray:
    """Paint `cars` onto the flat board `img` (BGR uint8, modified and returned).

    `camera_mm` (3,): the camera's position over the board (x, y mm, height mm above it), which
    sets each car's parallax; `light` (3,): unit vector towards the main light (x, y, up); `worn`
    (0..1): how scuffed the roofs are (about 4 pale scratches a car when fully worn)."""
    ppm = float(px_per_mm)
    if not cars:
        return img
    cam_xy, cam_h = np.asarray(camera_mm[:2], float), float(camera_mm[2])
    light = np.asarray(light, float)
    light_xy = light[:2] / max(np.linalg.norm(light[:2]), 1e-6)
    shadow_len = min(2.5, np.linalg.norm(light[:2]) / max(light[2], 0.15))  # per mm of height

    # Shadows first, on one mask blurred once.
    mask = np.zeros(img.shape[:2], np.uint8)
    for car in cars:
        foot = _rect(car.center_mm, car.axis, car.length_mm / 2, car.width_mm / 2)
        cast = foot - light_xy * car.height_mm * shadow_len * 0.8
        hull = cv2.convexHull(np.concatenate([foot, cast]).astype(np.float32))
        cv2.fillConvexPoly(mask, _p(hull.reshape(-1, 2), ppm), 255, cv2.LINE_AA, _SHIFT)
    sigma = max(0.8, 1.3 * ppm)
    _darken(img, cv2.GaussianBlur(mask, (0, 0), sigma), shadow_strength)

    # Far cars first, so nearer ones overlap them.
    order = sorted(cars, key=lambda c: -float(np.linalg.norm(c.center_mm - cam_xy)))
    line = max(1, int(round(0.35 * ppm)))
    # How dark a car's silhouette and roof rim look varies with the plastic and the light: a
    # glossy bright car shows almost none (its sides catch light), a matt one in side light a
    # dark edge. Drawn at random per photo so a dark frame is not what makes a car a car.
    outline = float(rng.uniform(0.22, 0.85))
    rim = float(rng.uniform(0.55, 0.9))
    for car in order:
        h = car.height_mm
        par = (car.center_mm - cam_xy) * h / max(cam_h - h, 1.0)  # top face shift
        bevel = 0.8
        foot = _rect(car.center_mm, car.axis, car.length_mm / 2, car.width_mm / 2)
        top = _rect(car.center_mm + par, car.axis, car.length_mm / 2 - bevel, car.width_mm / 2 - bevel)
        base = car.bgr
        # Body: the hull in the darkest side shade, then the faces towards the camera.
        hull = cv2.convexHull(np.concatenate([foot, top]).astype(np.float32)).reshape(-1, 2)
        cv2.fillConvexPoly(img, _p(hull, ppm), _c(base * 0.42), cv2.LINE_AA, _SHIFT)
        for i in range(4):
            j = (i + 1) % 4
            edge = foot[j] - foot[i]
            normal = np.array([edge[1], -edge[0]])
            normal /= max(np.linalg.norm(normal), 1e-9)
            if np.dot(normal, car.center_mm - foot[i]) > 0:
                normal = -normal
            if np.dot(normal, par) < 0:  # faces the camera
                lit = 0.5 + 0.35 * max(0.0, float(np.dot(normal, light_xy)))
                face = np.array([foot[i], foot[j], top[j], top[i]])
                cv2.fillConvexPoly(img, _p(face, ppm), _c(base * lit), cv2.LINE_AA, _SHIFT)
        # Roof: face rounded towards its long edges, recessed panel, end details, a gloss line
        # on the lit side, and a dark rim where roof meets side.
        roof = base * (0.85 + 0.25 * light[2])
        v = np.array([-car.axis[1], car.axis[0]])
        tc = car.center_mm + par
        cv2.fillConvexPoly(img, _p(top, ppm), _c(roof * 0.86), cv2.LINE_AA, _SHIFT)
        crown = _rect(tc, car.axis, car.length_mm / 2 - bevel - 0.3, car.width_mm / 2 - bevel - 0.9)
        cv2.fillConvexPoly(img, _p(crown, ppm), _c(roof), cv2.LINE_AA, _SHIFT)
        panel = _rect(tc, car.axis, car.length_mm / 2 - 3.0, car.width_mm / 2 - 1.8)
        cv2.fillConvexPoly(img, _p(panel, ppm), _c(roof * 0.92), cv2.LINE_AA, _SHIFT)
        cv2.polylines(img, [_p(panel, ppm)], True, _c(roof * 0.62), line, cv2.LINE_AA, _SHIFT)
        for end in (-1, 1):
            for k in (1.3, 2.1):
                p = tc + car.axis * end * (car.length_mm / 2 - k)
                cv2.line(img, _pt(p - v * (car.width_mm / 2 - 1.0), ppm), _pt(p + v * (car.width_mm / 2 - 1.0), ppm),
                         _c(roof * 0.6), 1, cv2.LINE_AA, _SHIFT)
        side = 1.0 if np.dot(v, light_xy) > 0 else -1.0
        gloss = 0.3 + 0.4 * rng.random()
        hi = roof + (255 - roof) * gloss
        a = tc + v * side * (car.width_mm / 2 - 1.3) - car.axis * (car.length_mm / 2 - 2.2)
        b = tc + v * side * (car.width_mm / 2 - 1.3) + car.axis * (car.length_mm / 2 - 2.2)
        cv2.line(img, _pt(a, ppm), _pt(b, ppm), _c(hi), line, cv2.LINE_AA, _SHIFT)
        if worn > 0:
            _scuff(img, ppm, rng, tc, car, roof, worn)
        cv2.polylines(img, [_p(top, ppm)], True, _c(roof * rim), 1, cv2.LINE_AA, _SHIFT)
        cv2.polylines(img, [_p(hull, ppm)], True, _c(base * outline), line, cv2.LINE_AA, _SHIFT)
    return img


def _scuff(img: np.ndarray, ppm: float, rng: np.random.Generator, top_mm: np.ndarray, car: Car,
           roof: np.ndarray, worn: float) -> None:
    """Pale scratches on a worn car's roof centred at `top_mm` (rubbed plastic scatters light)."""
    v = np.array([-car.axis[1], car.axis[0]])
    for _ in range(int(rng.poisson(4 * worn))):
        p = (top_mm + car.axis * rng.uniform(-0.4, 0.4) * car.length_mm
             + v * rng.uniform(-0.3, 0.3) * car.width_mm)
        a = rng.uniform(0, np.pi)
        d = np.array([np.cos(a), np.sin(a)]) * rng.uniform(0.4, 1.5)
        mark = roof + (235 - roof) * rng.uniform(0.2, 0.5)
        cv2.line(img, _pt(p - d, ppm), _pt(p + d, ppm), _c(mark), 1, cv2.LINE_AA, _SHIFT)


MARKER_MM = (5.5, 4.0)  # radius, height of a score marker


def place_markers(rng: np.random.Generator, model: BoardModel, claims: dict[str, list[int]],
                  lengths: list[int], plastic: Plastic | None = None) -> list[tuple[np.ndarray, str]]:
    """Score markers on the score track at each player's route points (plus a ticket swing):
    (centre mm, player). Markers on the same cell sit a little apart, as stacked discs slide."""
    out = []
    colors = player_colors(rng, sorted(claims), plastic)
    for player, ids in claims.items():
        score = sum(ROUTE_POINTS[lengths[i]] for i in ids) + int(rng.integers(-15, 40))
        cell = model.score_cells[max(score, 0) % 100]
        out.append((cell + rng.normal(0, 1.5, 2), colors[player]))
    return out


def draw_markers(img: np.ndarray, px_per_mm: float, markers, camera_mm: np.ndarray, light: np.ndarray) -> np.ndarray:
    """Paint score markers (plastic discs) with shadow, near side and lit top; `img` is modified."""
    ppm = float(px_per_mm)
    cam_xy, cam_h = np.asarray(camera_mm[:2], float), float(camera_mm[2])
    light_xy = np.asarray(light[:2], float)
    light_xy = light_xy / max(np.linalg.norm(light_xy), 1e-6)
    ring = np.stack([np.cos(np.linspace(0, 2 * np.pi, 24, endpoint=False)),
                     np.sin(np.linspace(0, 2 * np.pi, 24, endpoint=False))], axis=1)
    r, h = MARKER_MM
    for center, bgr in markers:
        base = center + ring * r
        # The shadow, worked out in a window around the marker only.
        pad = (r + 2 * h + 4) * ppm
        x0, y0 = (int(max(0, v)) for v in center * ppm - pad)
        x1, y1 = int(min(img.shape[1], center[0] * ppm + pad)), int(min(img.shape[0], center[1] * ppm + pad))
        if x1 <= x0 or y1 <= y0:
            continue
        shadow = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cast = cv2.convexHull(np.concatenate([base, base - light_xy * h * 0.8]).astype(np.float32)).reshape(-1, 2)
        cv2.fillConvexPoly(shadow, _p(cast - np.array([x0, y0]) / ppm, ppm), 255, cv2.LINE_AA, _SHIFT)
        _darken(img[y0:y1, x0:x1], cv2.GaussianBlur(shadow, (0, 0), max(0.8, 1.2 * ppm)), 0.45)
        par = (center - cam_xy) * h / max(cam_h - h, 1.0)
        top = center + par + ring * (r - 0.3)
        hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32)).reshape(-1, 2)
        cv2.fillConvexPoly(img, _p(hull, ppm), _c(bgr * 0.55), cv2.LINE_AA, _SHIFT)
        cv2.fillConvexPoly(img, _p(top, ppm), _c(bgr), cv2.LINE_AA, _SHIFT)
        hi = center + par - light_xy * 0 + ring * (r - 1.2)
        arc = hi[[i for i in range(24) if np.dot(ring[i], light_xy) > 0.3]]
        if len(arc) > 1:
            cv2.polylines(img, [_p(arc, ppm)], False, _c(bgr + (255 - bgr) * 0.5), 1, cv2.LINE_AA, _SHIFT)
        cv2.polylines(img, [_p(hull, ppm)], True, _c(bgr * 0.3), 1, cv2.LINE_AA, _SHIFT)
    return img
