"""The printed board, drawn flat and empty: map paper, lettering, printed spaces, city dots and the
score track, in the template frame (millimetres from the board's top-left outer corner).

In: a `BoardModel` (the template's geometry in millimetres), a `Look` (colours and printing of
one imagined print run) and a scale in pixels per millimetre. Out: a BGR uint8 image of
round(795 * px_per_mm) x round(525 * px_per_mm) pixels, pixel (i, j) at (j / px_per_mm,
i / px_per_mm) mm. `board_image(look_id, px_per_mm)` caches the result, since the printing does not
change between photos of the same look.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from calibration.template import load_template
from scoring.board import load_board
from vision.rectify import BOARD_MM  # the template frame's size (the board facts')
from vision.settings import LightSettings

PAPER_LEVEL = LightSettings().paper_level  # the paper's grey after the reader's light normalisation

N_LOOKS = 16  # print runs the renderer draws from; each is cached once drawn

# Printed space colours (BGR), the centre of what the looks vary around.
PRINTED_BGR = {
    "red": (62, 58, 200), "blue": (190, 118, 38), "green": (60, 168, 112), "yellow": (60, 208, 236),
    "black": (46, 44, 44), "white": (228, 232, 232), "orange": (44, 132, 232), "pink": (180, 130, 224),
    "gray": (180, 180, 178),
}
_SHIFT = 4  # sub-pixel bits for cv2 drawing
_ONE = 1 << _SHIFT


@dataclass(frozen=True)
class BoardModel:
    """The board's geometry in millimetres (from the template)."""

    spaces: tuple[np.ndarray, ...]  # per track id: (length, 4, 2) quads, in order from city a to b
    cities: dict[str, tuple[float, float]]  # city centre
    score_cells: np.ndarray  # (100, 2) centres of score cells 0..99
    track_colors: tuple[str, ...]  # printed colour per track id
    printed_bgr: dict[str, np.ndarray] | None = None  # measured printed colours, if the template has them


def board_model() -> BoardModel:
    """The shipped template as a `BoardModel`."""
    return model_from_template(load_template(), load_board())


def model_from_template(template, board) -> BoardModel:
    """Adapt a template object (`.tracks[i].spaces`, `.cities`, `.score_cells`, mm) to a BoardModel."""
    spaces = tuple(np.asarray(t.spaces, np.float64).reshape(-1, 4, 2) for t in template.tracks)
    for t, s in zip(board.tracks, spaces):
        if len(s) != t.length:
            raise ValueError(f"template track {t.id} has {len(s)} spaces, board says {t.length}")
    cities = {name: (float(xy[0]), float(xy[1])) for name, xy in dict(template.cities).items()}
    printed = None
    labs = [getattr(t, "space_colors_lab", None) for t in template.tracks]
    if all(lab is not None for lab in labs):
        # The measured board's printed colours (median per colour), as the centre the looks vary around.
        printed = {}
        for color in PRINTED_BGR:
            rows = [np.asarray(lab).reshape(-1, 3) for lab, t in zip(labs, board.tracks) if t.color == color]
            if rows:
                lab = np.median(np.concatenate(rows), axis=0).astype(np.uint8)
                printed[color] = cv2.cvtColor(lab[None, None, :], cv2.COLOR_LAB2BGR)[0, 0].astype(float)
    return BoardModel(spaces, cities, np.asarray(template.score_cells, np.float64).reshape(100, 2),
                      tuple(t.color for t in board.tracks), printed)


@dataclass(frozen=True)
class Look:
    """How one print run of the board looks."""

    paper_bgr: np.ndarray  # map paper
    sea_tint: np.ndarray  # added outside the land
    texture: float  # strength of the paper's blotchy texture
    relief: float  # darkness of the hatched mountains
    line_gray: float  # faint borders and rivers
    space_bgr: dict[str, np.ndarray]
    outline_bgr: np.ndarray
    outline_mm: float
    frame_mm: float  # the printed frame band inside the outline
    frame_gray: float
    border_bgr: np.ndarray  # score track
    cell_line_bgr: np.ndarray
    number_bgr: np.ndarray
    dot_bgr: np.ndarray  # city dots
    letter_bgr: np.ndarray
    letter_mm: float  # capital height of city names
    font: int
    seed: int


def make_look(seed: int, printed_bgr: dict[str, np.ndarray] | None = None) -> Look:
    """A print run: colours and printing drawn around the real board's (`printed_bgr` when
    measured, else PRINTED_BGR), seeded."""
    rng = np.random.default_rng([seed, 7])
    # Paper from blue-gray to beige-gray.
    t = rng.uniform(0, 1)
    paper = (1 - t) * np.array([214, 208, 198]) + t * np.array([190, 205, 214]) + rng.normal(0, 4, 3)
    paper *= rng.uniform(0.84, 1.02)
    space = {}
    toward_measured = rng.uniform(0.3, 1.0)
    for name, bgr in PRINTED_BGR.items():
        if printed_bgr and name in printed_bgr:
            # Measured as the reader sees it, on paper brought to PAPER_LEVEL grey: the same ink
            # printed on this look's paper keeps the real print's relation to the paper.
            on_paper = np.asarray(printed_bgr[name], float) * paper / PAPER_LEVEL
            bgr = (1 - toward_measured) * np.asarray(bgr, float) + toward_measured * on_paper
        neutral = name in ("gray", "white", "black")
        c = np.array(bgr, float) + rng.normal(0, 3 if neutral else 9, 3) + rng.normal(0, 6)
        if name == "black":
            # Warmer or cooler at random: black print and black plastic must not be told apart by
            # a tint (on real boards the print is the cooler one, in the light of some photos not).
            c += rng.uniform(-4.0, 4.0) * np.array([1.0, 0.0, -1.0])
        c = c * rng.uniform(0.9, 1.07)
        space[name] = np.clip(c, 0, 255)
    return Look(
        paper_bgr=np.clip(paper, 0, 255),
        sea_tint=np.array([8, 2, -6]) * rng.uniform(0, 1.5),
        texture=float(rng.uniform(0.04, 0.1)),
        relief=float(rng.uniform(0.2, 0.5)),
        line_gray=float(rng.uniform(0.3, 0.6)),
        space_bgr=space,
        outline_bgr=np.clip(np.array([40, 44, 52]) + rng.normal(0, 8, 3), 0, 255),
        outline_mm=float(rng.uniform(0.3, 0.6)),
        frame_mm=float(rng.uniform(0.4, 1.0)),
        frame_gray=float(rng.uniform(90, 170)),
        border_bgr=np.clip(np.array([36, 50, 112]) * rng.uniform(0.8, 1.25) + rng.normal(0, 6, 3), 0, 255),
        cell_line_bgr=np.clip(np.array([90, 150, 200]) + rng.normal(0, 10, 3), 0, 255),
        number_bgr=np.clip(np.array([215, 230, 240]) + rng.normal(0, 8, 3), 0, 255),
        dot_bgr=np.clip(np.array([40, 100, 185]) + rng.normal(0, 10, 3), 0, 255),
        letter_bgr=np.clip(np.array([40, 50, 70]) + rng.normal(0, 8, 3), 0, 255),
        letter_mm=float(rng.uniform(5.0, 7.0)),
        font=int(rng.choice([cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_DUPLEX])),
        seed=seed,
    )


def fractal_noise(rng: np.random.Generator, hw: tuple[int, int], octaves=(4, 12, 40, 120),
                  falloff: float = 0.6) -> np.ndarray:
    """Smooth noise in about -1..1 (float32), summed over a few scales (coarsest first)."""
    h, w = hw
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for cells in octaves:
        ch, cw = max(2, int(cells * h / max(h, w))), max(2, cells)
        small = rng.standard_normal((ch, cw)).astype(np.float32)
        out += amp * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= falloff
    return out / total


def _pts(mm: np.ndarray, ppm: float) -> np.ndarray:
    return np.round(np.asarray(mm) * ppm * _ONE).astype(np.int32).reshape(-1, 1, 2)


def _c(bgr) -> tuple[float, float, float]:
    return tuple(float(v) for v in bgr)


def _text(img, text, center_px, height_px, color, font, thickness=1, angle180=False):
    """Text centred at a point, `height_px` tall (capital height)."""
    (tw, th), base = cv2.getTextSize(text, font, 1.0, thickness)
    scale = height_px / max(th, 1)
    (tw, th), base = cv2.getTextSize(text, font, scale, thickness)
    x, y = int(center_px[0] - tw / 2), int(center_px[1] + th / 2)
    if not angle180:
        cv2.putText(img, text, (x, y), font, scale, _c(color), thickness, cv2.LINE_AA)
        return
    pad = 2
    x0, y0 = x - pad, y - th - pad
    x1, y1 = x + tw + pad, y + base + pad
    if x0 < 0 or y0 < 0 or x1 > img.shape[1] or y1 > img.shape[0]:
        return
    patch = np.ascontiguousarray(img[y0:y1, x0:x1][::-1, ::-1])
    cv2.putText(patch, text, (pad, th + pad), font, scale, _c(color), thickness, cv2.LINE_AA)
    img[y0:y1, x0:x1] = patch[::-1, ::-1]


def _space_frame(quad: np.ndarray):
    """Centre, unit long axis, length and width (mm) of a space quad."""
    c = quad.mean(axis=0)
    e0 = (quad[1] - quad[0] + quad[2] - quad[3]) / 2
    e1 = (quad[3] - quad[0] + quad[2] - quad[1]) / 2
    if np.linalg.norm(e0) < np.linalg.norm(e1):
        e0, e1 = e1, e0
    length, width = float(np.linalg.norm(e0)), float(np.linalg.norm(e1))
    return c, e0 / max(length, 1e-9), length, width


def draw_board(model: BoardModel, look: Look, px_per_mm: float, city_names: bool = True) -> np.ndarray:
    """The empty board, flat, as BGR uint8 (see the module docstring for the frame)."""
    rng = np.random.default_rng([look.seed, 11])
    ppm = float(px_per_mm)
    w, h = int(round(BOARD_MM[0] * ppm)), int(round(BOARD_MM[1] * ppm))
    cells = model.score_cells
    # The score band on each side (left, top, right, bottom): cell centres sit mid-band.
    bands = tuple(float(np.clip(2 * np.median(v), 12, 30)) for v in (
        cells[1:20, 0], cells[21:50, 1], BOARD_MM[0] - cells[51:70, 0], BOARD_MM[1] - cells[71:100, 1]))
    band = max(bands)
    inner = (int(bands[0] * ppm), int(bands[1] * ppm), int(w - bands[2] * ppm), int(h - bands[3] * ppm))

    # Paper: base colour times a relief texture (mountains and plains), sea tinted.
    relief = fractal_noise(rng, (h, w))
    ridges = 1 - np.abs(fractal_noise(rng, (h, w), octaves=(8, 24, 70), falloff=0.7)) * 2.5
    west = np.clip(1.2 - np.linspace(0, 1.6, w, dtype=np.float32), 0, 1)[None, :]
    # Mountains: hatched strokes (noise stretched ~5 mm along, ~0.7 mm across), densest in the west.
    mountains = np.clip(ridges, 0, 1) ** 2 * (0.35 + 0.65 * west)
    sh, sw = max(2, int(BOARD_MM[1] / 0.7)), max(2, int(BOARD_MM[0] / 5))
    strokes = cv2.resize(rng.standard_normal((sh, sw)).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:
        sh, sw = max(2, int(BOARD_MM[1] / 4)), max(2, int(BOARD_MM[0] / 0.7))
        strokes = np.maximum(strokes, cv2.resize(rng.standard_normal((sh, sw)).astype(np.float32), (w, h),
                                                 interpolation=cv2.INTER_LINEAR))
    hatch = np.clip(strokes + 0.2, 0, 1.5) * 0.6
    shade = 1 + look.texture * relief - look.relief * mountains * (0.35 + hatch)
    img = (np.asarray(look.paper_bgr, np.float32)[None, None, :] * shade[..., None])
    grain = rng.standard_normal((h, w)).astype(np.float32) * 3.0
    img += grain[..., None]

    # Land: the cities' hull grown by a few cm; the sea outside is tinted.
    city_xy = np.array(list(model.cities.values()))
    hull = cv2.convexHull(city_xy.astype(np.float32)).reshape(-1, 2)
    centre = hull.mean(axis=0)
    coast = centre + (hull - centre) * 1.12 + rng.normal(0, 4, hull.shape)
    land = np.zeros((h, w), np.uint8)
    cv2.fillPoly(land, [_pts(coast, ppm)], 255, cv2.LINE_AA, _SHIFT)
    sea = (1 - land.astype(np.float32) / 255)[..., None]
    img += sea * np.asarray(look.sea_tint, np.float32)
    img = np.clip(img, 0, 255).astype(np.uint8)
    line = _c(np.asarray(look.paper_bgr) * look.line_gray)
    cv2.polylines(img, [_pts(coast, ppm)], True, line, max(1, int(ppm * 0.4)), cv2.LINE_AA, _SHIFT)

    # Faint borders (straight, like state lines) and wavy rivers.
    for _ in range(30):  # state lines: mostly along parallels and meridians
        p = rng.uniform([band, band], [BOARD_MM[0] - band, BOARD_MM[1] - band])
        a = rng.choice([0, np.pi / 2]) + rng.normal(0, 0.12)
        q = p + rng.uniform(40, 160) * np.array([np.cos(a), np.sin(a)])
        cv2.line(img, tuple(int(v) for v in p * ppm), tuple(int(v) for v in q * ppm), line, 1, cv2.LINE_AA)
    for _ in range(8):
        p = rng.uniform([band, band], [BOARD_MM[0] - band, BOARD_MM[1] - band])
        steps = np.cumsum(rng.normal(0, 6, (25, 2)) + rng.normal(0, 5, 2), axis=0)
        cv2.polylines(img, [_pts(p + steps, ppm)], False, _c(np.asarray(look.paper_bgr) * 0.8),
                      1, cv2.LINE_AA, _SHIFT)
    # Decorations: a few gray sketches (an airship, a ship, a car) and the route-points table.
    for _ in range(6):
        c = rng.uniform([band + 30, band + 30], [BOARD_MM[0] - band - 30, BOARD_MM[1] - band - 30])
        axes = (int(rng.uniform(6, 18) * ppm), int(rng.uniform(3, 8) * ppm))
        cv2.ellipse(img, tuple(int(v) for v in c * ppm), axes, float(rng.uniform(0, 180)), 0, 360,
                    _c(np.asarray(look.paper_bgr) * 0.6), max(1, int(ppm * 0.3)), cv2.LINE_AA)
    _route_table(img, look, ppm, band, rng)

    # The score track: red-brown band, one framed cell per score, numbers, corner medallions.
    border = np.zeros((h, w), np.uint8)
    cv2.rectangle(border, (0, 0), (w - 1, h - 1), 255, -1)
    cv2.rectangle(border, inner[:2], inner[2:], 0, -1)
    band_tex = (np.asarray(look.border_bgr, np.float32)[None, None, :]
                * (1 + 0.12 * relief[..., None]))
    img = np.where(border[..., None] > 0, np.clip(band_tex, 0, 255).astype(np.uint8), img)
    _score_cells(img, model, look, ppm, bands)
    cv2.rectangle(img, inner[:2], inner[2:],
                  _c(np.asarray(look.border_bgr) * 0.6), max(1, int(ppm * 0.8)), cv2.LINE_AA)

    # City names, then dots over them.
    if city_names:
        for name, (x, y) in model.cities.items():
            off = rng.choice([-1, 1]) * rng.uniform(8, 11)
            _text(img, name.upper(), ((x + rng.uniform(-6, 6)) * ppm, (y + off) * ppm), look.letter_mm * ppm,
                  look.letter_bgr, look.font, max(1, int(round(ppm * look.letter_mm * 0.12))))

    # Printed spaces.
    for quads, color in zip(model.spaces, model.track_colors):
        base = np.asarray(look.space_bgr[color])
        for q in quads:
            fill = np.clip(base * rng.uniform(0.96, 1.04) + rng.normal(0, 2, 3), 0, 255)
            cv2.fillConvexPoly(img, _pts(q, ppm), _c(fill), cv2.LINE_AA, _SHIFT)
            c, u, length, width = _space_frame(q)
            # The printed frame: a grayish band just inside a thin dark line.
            inner = c + (q - c) * (1 - 2 * look.frame_mm / max(width, 1.0))
            frame = np.clip(fill * 0.55 + look.frame_gray * 0.45, 0, 255)
            cv2.polylines(img, [_pts(inner, ppm)], True, _c(frame),
                          max(1, int(round(look.frame_mm * ppm))), cv2.LINE_AA, _SHIFT)
            cv2.polylines(img, [_pts(q, ppm)], True, _c(look.outline_bgr),
                          max(1, int(round(look.outline_mm * ppm))), cv2.LINE_AA, _SHIFT)
            # The small emblem in the middle (a locomotive on the real board).
            mark = _c(np.clip(fill * (0.75 if fill.mean() > 90 else 1.6), 0, 255))
            cv2.ellipse(img, tuple(int(t) for t in c * ppm * _ONE),
                        (int(2.0 * ppm * _ONE), int(1.4 * ppm * _ONE)),
                        float(np.degrees(np.arctan2(u[1], u[0]))), 0, 360, mark, 1, cv2.LINE_AA, _SHIFT)
            cv2.line(img, tuple(int(t) for t in (c - 3 * u) * ppm * _ONE),
                     tuple(int(t) for t in (c + 3 * u) * ppm * _ONE), mark, 1, cv2.LINE_AA, _SHIFT)

    # City dots: copper-coloured domes with a dark ring and a highlight.
    r = 4.0 * ppm
    for name, (x, y) in model.cities.items():
        ctr = (int(x * ppm * _ONE), int(y * ppm * _ONE))
        cv2.circle(img, ctr, int(r * 1.15 * _ONE), _c(look.outline_bgr), -1, cv2.LINE_AA, _SHIFT)
        cv2.circle(img, ctr, int(r * _ONE), _c(look.dot_bgr * 0.75), -1, cv2.LINE_AA, _SHIFT)
        cv2.circle(img, (ctr[0] - int(0.2 * r * _ONE), ctr[1] - int(0.2 * r * _ONE)), int(r * 0.7 * _ONE),
                   _c(look.dot_bgr), -1, cv2.LINE_AA, _SHIFT)
        cv2.circle(img, (ctr[0] - int(0.35 * r * _ONE), ctr[1] - int(0.35 * r * _ONE)), int(r * 0.25 * _ONE),
                   _c(np.clip(look.dot_bgr + 90, 0, 255)), -1, cv2.LINE_AA, _SHIFT)

    # Fold lines of the folding board (thirds across, half down): a worn light crease by a dark one.
    crease = float(rng.uniform(0.0, 0.12))
    k = max(1, int(round(0.4 * ppm)))
    out = img.astype(np.float32)
    for x in (BOARD_MM[0] / 3, 2 * BOARD_MM[0] / 3):
        j = int(round(x * ppm))
        out[:, j - k:j] *= 1 - crease
        out[:, j:j + k] = out[:, j:j + k] * (1 - crease) + 255 * crease
    i = int(round(BOARD_MM[1] / 2 * ppm))
    out[i - k:i] *= 1 - crease
    out[i:i + k] = out[i:i + k] * (1 - crease) + 255 * crease
    return np.clip(out, 0, 255).astype(np.uint8)


def _route_table(img, look, ppm, band, rng):
    """The route-points table in the lower right: white box, rows of tiny gray cars."""
    x0 = BOARD_MM[0] - band - rng.uniform(150, 170)
    y0 = BOARD_MM[1] - band - rng.uniform(50, 58)
    cv2.rectangle(img, (int(x0 * ppm), int(y0 * ppm)), (int((x0 + 90) * ppm), int((y0 + 36) * ppm)),
                  _c(np.clip(look.paper_bgr * 1.12, 0, 255)), -1)
    for row in range(6):
        for k in range(row + 1):
            xa, ya = x0 + 8 + k * 6.5, y0 + 3 + row * 5.5
            cv2.rectangle(img, (int(xa * ppm), int(ya * ppm)), (int((xa + 5.5) * ppm), int((ya + 3.5) * ppm)),
                          _c(look.space_bgr["gray"] * 0.8), -1)
        _text(img, str(row + 1), ((x0 + 4) * ppm, (y0 + 5 + row * 5.5) * ppm), 2.2 * ppm,
              look.letter_bgr, cv2.FONT_HERSHEY_SIMPLEX)


def _score_cells(img, model, look, ppm, bands):
    cells = model.score_cells
    n = len(cells)
    for i, (x, y) in enumerate(cells):
        band = (bands[0] if i < 20 else bands[1] if i < 50 else bands[2] if i < 70 else bands[3])
        on_corner = i in (0, 20, 50, 70)
        if on_corner:
            band = min(band, bands[1] if i in (20, 50) else bands[3])
            cv2.circle(img, (int(x * ppm), int(y * ppm)), int(band * 0.42 * ppm),
                       _c(np.clip(look.paper_bgr * 1.05, 0, 255)), -1, cv2.LINE_AA)
            cv2.circle(img, (int(x * ppm), int(y * ppm)), int(band * 0.42 * ppm),
                       _c(look.cell_line_bgr), max(1, int(ppm * 0.5)), cv2.LINE_AA)
            _text(img, "100" if i == 0 else str(i), (x * ppm, y * ppm), band * 0.25 * ppm,
                  look.border_bgr, cv2.FONT_HERSHEY_COMPLEX, 1)
            continue
        # Cell extent: half-way to its neighbours along the band.
        prev, nxt = cells[(i - 1) % n], cells[(i + 1) % n]
        along = max(abs(nxt[0] - prev[0]), abs(nxt[1] - prev[1])) / 2
        horizontal = abs(nxt[0] - prev[0]) > abs(nxt[1] - prev[1])
        hw, hh = (along / 2 - 0.6, band / 2 - 1.4) if horizontal else (band / 2 - 1.4, along / 2 - 0.6)
        p0 = (int((x - hw) * ppm), int((y - hh) * ppm))
        p1 = (int((x + hw) * ppm), int((y + hh) * ppm))
        cv2.rectangle(img, p0, p1, _c(look.border_bgr * 0.85), -1)
        cv2.rectangle(img, p0, p1, _c(look.cell_line_bgr * 0.8), max(1, int(ppm * 0.35)), cv2.LINE_AA)
        color = look.cell_line_bgr * 1.1 if i % 5 == 0 else look.number_bgr
        _text(img, str(i), (x * ppm, y * ppm), min(hw, hh) * 0.9 * ppm, np.clip(color, 0, 255),
              cv2.FONT_HERSHEY_COMPLEX, max(1, int(ppm * 0.5)), angle180=71 <= i <= 99)


@lru_cache(maxsize=80)  # N_LOOKS x all scales: at most ~0.6 GB
def board_image(look_id: int, px_per_mm: float, model_key: int = 0) -> np.ndarray:
    """The empty board of print run `look_id` at `px_per_mm` (cached; treat as read-only)."""
    model = _MODELS[model_key]
    img = draw_board(model, make_look(look_id, model.printed_bgr), px_per_mm)
    img.setflags(write=False)
    return img


_MODELS: dict[int, BoardModel] = {}


def register_model(model: BoardModel) -> int:
    """A key for `board_image`'s cache under which `model` is drawn."""
    for k, m in _MODELS.items():
        if m is model:
            return k
    k = len(_MODELS)
    _MODELS[k] = model
    return k
