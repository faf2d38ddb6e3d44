"""Another home's world: another copy of the board, another light, another camera, other cars.

The renderer's default draws one copy of the board (the development board's print, measured) under
a phone's corrected light. Players own other copies, printed in other runs, yellowed or faded,
under their own lamp, flash or window, photographed by their own phones with their own cars.
`random_world(rng)` draws one such world (`World`, recorded in the truth file by `to_dict`);
`ttr render --world varied` renders in it and `benchmarks/relight.py` re-lights and re-colours
real photos with it, so both kinds of data move along the same ranges.

The ranges are anchored on the development photos, measured after the reader's own light
normalisation (`python3 benchmarks/measure_colours.py ../shared/real/dev`; CIE L*, C*, hue in
degrees; per class the median of the photos' medians and their range over 20-25 photos of the one
copy in its few lights):

    print red    L* 39 [34, 55]  C* 51 [33, 59]  h  38 [27, 45]
    print orange L* 54 [51, 58]  C* 58 [37, 61]  h  63 [58, 65]
    print yellow L* 79 [77, 82]  C* 65 [40, 74]  h  97 [95, 100]
    print green  L* 56 [46, 69]  C* 54 [46, 59]  h 110 [104, 114]
    print blue   L* 42 [36, 47]  C* 48 [37, 53]  h 278 [271, 282]
    print pink   L* 50 [42, 51]  C* 31 [30, 32]  h 357 [354, 366]
    print gray / white / black   L* 68 / 83 / 24, C* <= 4
    car red      L* 39 [36, 43]  C* 50 [42, 56]  h  36 [30, 41]
    car blue     L* 35 [32, 39]  C* 29 [24, 38]  h 268 [263, 275]
    car green    L* 31 [28, 39]  C* 22 [17, 30]  h 154 [147, 163]
    car yellow   L* 66 [58, 76]  C* 57 [52, 72]  h  97 [93, 98]
    car black    L* 14 [10, 21]  C*  3 [1, 5]
    paper, under the phone's white balance: L* 78-83, a* ~1, b* 7-8 (cream); -4 in a cool light

The renderer's default print and plastic sit on these (its renders measure the same within a few
units). One copy in one home's few lights already moves a print colour by about +-9 degrees of hue
and +-13 of chroma; a copy of another print run, another paper and other plastic move it again by
as much (`INK_*`, `PAPERS`, `PLASTIC_LCH` below), never so far that a person could no longer tell
the five car colours apart or an empty track from a claimed one (`MIN_INK_DE`, `MIN_PLASTIC_DE`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

import cv2
import numpy as np

from vision.light import paper_light_map

# -- the board's copy -------------------------------------------------------------------------------
# How far a print run moves each printed colour, in CIE L*C*h: hue (degrees), lightness (L*) and a
# chroma factor. Hue: about the spread one copy already shows between lights, again; green further
# towards blue-green than towards yellow (real green print runs from yellow-green to grass green,
# and at +16 it is still 30 degrees from the yellow print), yellow least (it turns orange or green).
INK_HUE_DEG = {"red": (-8.0, 8.0), "orange": (-8.0, 8.0), "yellow": (-6.0, 6.0), "green": (-8.0, 16.0),
               "blue": (-10.0, 10.0), "pink": (-10.0, 10.0)}
INK_LIGHTNESS = 7.0  # +- L*: the measured copy's colours span about +-8 between its photos
INK_CHROMA = (0.75, 1.2)  # a weaker or stronger ink; fading (below) takes the weakest further
NEUTRAL_TINT = 3.0  # +- a*, b* of the gray, white and black print (measured C* <= 4) ...
NEUTRAL_LIGHTNESS = 4.0  # ... and +- L* (gray measures L* 63-72 between photos)
NEUTRAL_INKS = ("gray", "white", "black")
# Every two print colours of one copy stay this far apart (CIE76), or at 80 % of how far apart the
# measured copy has them where that is less (gray and white); red and orange measure ~29 apart.
MIN_INK_DE = 20.0
# The paper under white light: (L* change, a* range, b* range, ink fade range): each ink mixed
# that far towards the paper. The measured copy is cream (b* 7-8 under the phone's balance).
PAPERS = {
    "white": (3.0, (-1.0, 1.0), (0.0, 4.0), (0.0, 0.05)),  # bright, neutral
    "cream": (0.0, (0.0, 2.5), (6.0, 12.0), (0.0, 0.08)),
    "yellowed": (-4.0, (1.0, 4.0), (14.0, 24.0), (0.0, 0.12)),  # aged paper and varnish
    "faded": (4.0, (0.0, 2.0), (2.0, 8.0), (0.12, 0.3)),  # washed out: inks lighter and weaker
}
PAPER_P = (0.25, 0.3, 0.25, 0.2)


@dataclass(frozen=True)
class Ink:
    """How one printed colour of this copy differs from the measured copy's."""

    hue_deg: float = 0.0
    lightness: float = 0.0  # L* added
    chroma: float = 1.0  # chroma factor
    tint: tuple[float, float] = (0.0, 0.0)  # a*, b* added (the neutral inks)


@dataclass(frozen=True)
class PrintRun:
    """This copy of the board: its inks, its paper and how faded it is."""

    inks: dict[str, Ink]
    paper: str  # one of PAPERS
    paper_lab: tuple[float, float, float]  # (L* change, a*, b*) of the paper under white light
    fade: float  # every ink mixed this far towards the paper
    grain: float = 0.0  # the paper's fibre: relative brightness of its speckle (0: smooth paper)


def move_ink(lab: np.ndarray, ink: Ink) -> np.ndarray:
    """CIE Lab (..., 3) float32 of printed pixels moved as `ink` says (a copy, same shape)."""
    out = np.array(lab, np.float32, copy=True)
    c, s = np.cos(np.radians(ink.hue_deg)), np.sin(np.radians(ink.hue_deg))
    a, b = lab[..., 1], lab[..., 2]
    out[..., 0] = lab[..., 0] + ink.lightness
    out[..., 1] = (a * c - b * s) * ink.chroma + ink.tint[0]
    out[..., 2] = (a * s + b * c) * ink.chroma + ink.tint[1]
    return out


def _distances(lab: np.ndarray) -> np.ndarray:
    """(n, n) CIE76 distances between n Lab colours, the diagonal infinite."""
    d = np.linalg.norm(lab[:, None] - lab[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    return d


def lab_to_lch(lab) -> np.ndarray:
    """CIE Lab (..., 3) -> L*, C*, hue in degrees 0-360."""
    lab = np.asarray(lab, float)
    return np.stack([lab[..., 0], np.hypot(lab[..., 1], lab[..., 2]),
                     np.degrees(np.arctan2(lab[..., 2], lab[..., 1])) % 360], axis=-1)


def lch_to_lab(lch) -> np.ndarray:
    """L*, C*, hue in degrees (..., 3) -> CIE Lab."""
    lch = np.asarray(lch, float)
    h = np.radians(lch[..., 2])
    return np.stack([lch[..., 0], lch[..., 1] * np.cos(h), lch[..., 1] * np.sin(h)], axis=-1)


def bgr_to_lab(bgr) -> np.ndarray:
    """BGR 0-255 (..., 3) -> CIE Lab float (L* 0-100; sRGB, D65, as OpenCV converts it)."""
    arr = np.asarray(bgr, np.float32)
    flat = arr.reshape(-1, 1, 3) / 255.0
    return cv2.cvtColor(flat, cv2.COLOR_BGR2Lab).reshape(arr.shape)


def lab_to_bgr(lab) -> np.ndarray:
    """CIE Lab float (..., 3) -> BGR 0-255 float (not clipped)."""
    arr = np.asarray(lab, np.float32)
    return cv2.cvtColor(arr.reshape(-1, 1, 3), cv2.COLOR_Lab2BGR).reshape(arr.shape) * 255.0


def random_print_run(rng: np.random.Generator, printed_bgr: dict[str, np.ndarray]) -> PrintRun:
    """A copy's inks (drawn again until every two print colours keep apart as `MIN_INK_DE` says,
    starting from `printed_bgr`, the measured copy's) and its paper."""
    names = list(printed_bgr)
    base = bgr_to_lab(np.array([printed_bgr[n] for n in names], np.float32))
    apart = _distances(base)
    need = np.minimum(MIN_INK_DE, 0.8 * apart)
    while True:
        inks = {}
        for name in names:
            if name in NEUTRAL_INKS:
                inks[name] = Ink(lightness=float(rng.uniform(-NEUTRAL_LIGHTNESS, NEUTRAL_LIGHTNESS)),
                                 tint=tuple(float(v) for v in rng.uniform(-NEUTRAL_TINT, NEUTRAL_TINT, 2)))
            else:
                inks[name] = Ink(hue_deg=float(rng.uniform(*INK_HUE_DEG[name])),
                                 lightness=float(rng.uniform(-INK_LIGHTNESS, INK_LIGHTNESS)),
                                 chroma=float(rng.uniform(*INK_CHROMA)))
        moved = np.array([move_ink(lab, inks[n]) for lab, n in zip(base, names)])
        if (_distances(moved) >= need).all():
            break
    paper = str(rng.choice(list(PAPERS), p=PAPER_P))
    dl, a_range, b_range, fade_range = PAPERS[paper]
    return PrintRun(inks, paper, (dl, float(rng.uniform(*a_range)), float(rng.uniform(*b_range))),
                    float(rng.uniform(*fade_range)))


def paper_of(board_bgr: np.ndarray, quads_px: np.ndarray, px_per_mm: float) -> np.ndarray:
    """The paper's BGR (the median over the board of the light map's cells, away from the spaces)."""
    grid = paper_light_map(board_bgr, quads_px, px_per_mm)
    return np.nanmedian(grid.reshape(-1, 3), axis=0).astype(np.float32)


def reprint(flat: np.ndarray, quads_mm: list[np.ndarray], colours: list[str], px_per_mm: float,
            print_run: PrintRun) -> np.ndarray:
    """The flat empty board (BGR uint8, template frame at `px_per_mm`) as this copy prints it:
    each printed colour's spaces (`quads_mm`, (n, 4, 2) per track, printed in `colours`) moved by
    its ink (their outline and its anti-aliasing with them), every ink faded towards the paper,
    then the paper toned (the whole board multiplied, as aged paper tints the ink on it too)."""
    names = list(print_run.inks)
    labels = np.zeros(flat.shape[:2], np.uint8)
    rim = max(1, int(round(1.2 * px_per_mm)))
    for quads, colour in zip(quads_mm, colours):
        for q in np.round(np.asarray(quads) * px_per_mm * 16).astype(np.int32):
            cv2.fillConvexPoly(labels, q, names.index(colour) + 1, cv2.LINE_8, 4)
            cv2.polylines(labels, [q], True, names.index(colour) + 1, rim, cv2.LINE_8, 4)
    paper = bgr_to_lab(paper_of(flat, np.concatenate(quads_mm) * px_per_mm - 0.5, px_per_mm))
    lab = bgr_to_lab(flat)
    for k, name in enumerate(names):
        sel = labels == k + 1
        lab[sel] = move_ink(lab[sel], print_run.inks[name])
    lab += print_run.fade * (paper - lab)
    toned = paper + np.array([print_run.paper_lab[0], 0, 0], np.float32)
    toned[1:] = print_run.paper_lab[1:]
    gain = lab_to_bgr(toned) / np.maximum(lab_to_bgr(paper), 1.0)
    return np.clip(lab_to_bgr(lab) * gain, 0, 255).astype(np.uint8)


# -- the cars --------------------------------------------------------------------------------------
# Each player's plastic (CIE L*, C*, hue), as the reader sees it after its light normalisation: the
# measured cars (module docstring) widened to the shades other boxes and lots show: deep to
# orange-ish red, navy to sky blue, dark to light green, mustard to lemon yellow, black to dark grey.
PLASTIC_LCH = {
    "red": ((30.0, 48.0), (42.0, 68.0), (24.0, 46.0)),
    "blue": ((22.0, 52.0), (24.0, 48.0), (250.0, 285.0)),
    "green": ((22.0, 52.0), (16.0, 45.0), (135.0, 165.0)),
    "yellow": ((58.0, 82.0), (48.0, 75.0), (82.0, 104.0)),
    "black": ((8.0, 28.0), (0.0, 6.0), (0.0, 360.0)),
}
# Every two players' plastic keep this CIE76 distance (a dark green and a grey-black closer than
# that are what a person squints at; the measured pair is ~26 apart).
MIN_PLASTIC_DE = 22.0
WORN_CHROMA = 0.3  # a fully worn car keeps 70 % of its chroma
PLASTIC_BGR_RANGE = (8.0, 250.0)  # the renderer's plastic stays off pure black and white (trains.player_colors)


@dataclass(frozen=True)
class Cars:
    """The players' plastic: a shade per player (CIE L*, C*, hue) and how worn the cars are."""

    lch: dict[str, tuple[float, float, float]]
    worn: float  # 0: new .. 1: worn (chroma lost, scuffs on the roofs)

    def plastic_bgr(self) -> dict[str, np.ndarray]:
        """Each player's plastic as the renderer paints it (BGR 0-255), wear included."""
        out = {}
        for player, (L, C, h) in self.lch.items():
            lab = lch_to_lab(np.array([L, C * (1 - WORN_CHROMA * self.worn), h], np.float32))
            out[player] = np.clip(lab_to_bgr(lab.astype(np.float32)), *PLASTIC_BGR_RANGE)
        return out


def random_cars(rng: np.random.Generator) -> Cars:
    """A shade for every player's plastic, drawn again until every two keep `MIN_PLASTIC_DE` apart
    and each is a colour a photo can show (inside `PLASTIC_BGR_RANGE`: a deep navy of high chroma is not)."""
    while True:
        lch = {p: tuple(float(rng.uniform(*r)) for r in ranges) for p, ranges in PLASTIC_LCH.items()}
        lab = lch_to_lab(np.array(list(lch.values())))
        bgr = lab_to_bgr(lab.astype(np.float32))
        in_range = PLASTIC_BGR_RANGE[0] <= bgr.min() and bgr.max() <= PLASTIC_BGR_RANGE[1]
        if in_range and _distances(lab).min() >= MIN_PLASTIC_DE:
            break
    worn = float(rng.uniform(0.3, 1.0)) if rng.random() < 0.5 else 0.0
    return Cars(lch, worn)


# -- the light -------------------------------------------------------------------------------------
LIGHTS = ("flash", "tungsten", "daylight", "shade", "mixed", "dim")
LIGHT_P = (0.25, 0.25, 0.12, 0.1, 0.16, 0.12)
PHONE_WB_K = 6500.0  # what a fully corrected photo's white is


@dataclass(frozen=True)
class Light:
    """The light on the table and what the phone's white balance leaves of its colour.

    kind: flash (the phone's flash over a lamp-lit room: a hot spot under the camera, falling off
    with distance, the room's warm light on the far side), tungsten, daylight, shade (a window's
    light), mixed (a window on one side, a lamp on the other) or dim (a dark room: noise)."""

    kind: str
    kelvin: float  # the main (ambient) light's colour temperature
    uncorrected: float  # share of its colour cast (log scale) the white balance leaves, 0..1
    exposure: float = 1.0  # < 1: a dim room, brightened by the phone (noise grows with it)
    flash: float = 0.0  # the flash's share of the light where it is strongest
    glare: float = 0.0  # the flash's specular peak off the glossy board (linear, 1 = white)
    gloss: float = 200.0  # the specular lobe's exponent: larger, a smaller spot
    lamp_kelvin: float = 0.0  # mixed: the lamp's colour temperature (kelvin is the window's)
    split_deg: float = 0.0  # mixed: the direction (board frame) from the window's side to the lamp's
    rendition_deg: float = 0.0  # hue turn of coloured things the white balance does not undo
    saturation: float = 1.0  # and their saturation (spectra under another light), neutrals kept

    @property
    def noise_gain(self) -> float:
        """How much a phone's brightening of a dim photo multiplies its sensor noise (shot noise:
        as the square root of the gain; its noise reduction holds the rest, see `phone_finish`)."""
        return float(self.exposure ** -0.5)

    @property
    def brightness(self) -> float:
        """What a phone leaves of a dim room's darkness once it has brightened the photo (a factor
        on the gamma-encoded photo after its exposure)."""
        return float(self.exposure ** 0.3)


def random_light(rng: np.random.Generator, kind: str | None = None) -> Light:
    """One of `LIGHTS` (`LIGHT_P`, or `kind` when given) with its colour, strength and rendition
    drawn."""
    drawn = str(rng.choice(LIGHTS, p=LIGHT_P))  # drawn even when told, so the draws after it stay
    kind = drawn if kind is None else kind
    if kind not in LIGHTS:
        raise ValueError(f"no light {kind!r}: one of {', '.join(LIGHTS)}")
    # A light's spectrum differs from daylight's most in a warm light: coloured things turn a few
    # degrees and lose or gain saturation where gray stays gray. A turn of 1 degree about linear
    # RGB's gray axis turns a saturated red or orange print by 3-4 degrees of CIE hue.
    rendition = dict(rendition_deg=float(rng.uniform(-1.5, 1.5)), saturation=float(rng.uniform(0.9, 1.05)))
    if kind == "tungsten":
        return Light(kind, float(rng.uniform(2700, 3300)), float(rng.uniform(0.15, 0.55)),
                     rendition_deg=float(rng.uniform(-2.5, 2.5)), saturation=float(rng.uniform(0.8, 1.05)))
    if kind == "daylight":
        return Light(kind, float(rng.uniform(5000, 6500)), float(rng.uniform(0.0, 0.3)), **rendition)
    if kind == "shade":
        return Light(kind, float(rng.uniform(7000, 10000)), float(rng.uniform(0.2, 0.5)), **rendition)
    if kind == "flash":
        # The white balance follows the flash (about 5500 K); the room's lamp stays warm.
        return Light(kind, float(rng.uniform(2700, 4500)), float(rng.uniform(0.6, 1.0)),
                     flash=float(rng.uniform(0.5, 0.95)), glare=float(rng.uniform(0.2, 1.0)),
                     gloss=float(rng.uniform(80, 600)), **rendition)
    if kind == "mixed":
        return Light(kind, float(rng.uniform(5500, 7500)), 1.0, lamp_kelvin=float(rng.uniform(2700, 3300)),
                     split_deg=float(rng.uniform(0, 360)), **rendition)
    return Light(kind, float(rng.uniform(2700, 4000)), float(rng.uniform(0.1, 0.4)),
                 exposure=float(rng.uniform(0.15, 0.35)), **rendition)


def planck_rgb(kelvin: float) -> np.ndarray:
    """Linear sRGB (r, g, b) of a black body at `kelvin` (1667-25000 K), green = 1: the Planckian
    locus in CIE xy by Kim et al.'s cubic fits, then XYZ -> linear sRGB."""
    t = float(np.clip(kelvin, 1667, 25000))
    if t <= 4000:
        x = -0.2661239e9 / t ** 3 - 0.2343589e6 / t ** 2 + 0.8776956e3 / t + 0.179910
    else:
        x = -3.0258469e9 / t ** 3 + 2.1070379e6 / t ** 2 + 0.2226347e3 / t + 0.240390
    if t <= 2222:
        y = -1.1063814 * x ** 3 - 1.34811020 * x ** 2 + 2.18555832 * x - 0.20219683
    elif t <= 4000:
        y = -0.9549476 * x ** 3 - 1.37418593 * x ** 2 + 2.09137015 * x - 0.16748867
    else:
        y = 3.0817580 * x ** 3 - 5.87338670 * x ** 2 + 3.75112997 * x - 0.37001483
    xyz = np.array([x / y, 1.0, (1 - x - y) / y])
    rgb = np.array([[3.2406, -1.5372, -0.4986], [-0.9689, 1.8758, 0.0415], [0.0557, -0.2040, 1.0570]]) @ xyz
    rgb = np.maximum(rgb, 1e-3)
    return rgb / rgb[1]


def cast_bgr(kelvin: float, balanced_for: float, uncorrected: float = 1.0) -> np.ndarray:
    """Linear BGR gains of a light at `kelvin` in a photo white-balanced for `balanced_for`, with
    `uncorrected` of the difference left (log scale); green = 1."""
    rgb = (planck_rgb(kelvin) / planck_rgb(balanced_for)) ** uncorrected
    return (rgb / rgb[1])[::-1].astype(np.float32)


def _mired_mean(k1: float, k2: float) -> float:
    return 2.0 / (1.0 / k1 + 1.0 / k2)


def rendition_matrix(turn_deg: float, saturation: float) -> np.ndarray:
    """3x3 on linear colour: a turn by `turn_deg` about the gray axis and a saturation factor
    (gray, (1, 1, 1), stays itself)."""
    n = np.ones(3) / np.sqrt(3)
    a = np.radians(turn_deg)
    k = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    rot = np.eye(3) + np.sin(a) * k + (1 - np.cos(a)) * (k @ k)
    gray = np.full((3, 3), 1 / 3)
    return (saturation * rot + (1 - saturation) * gray).astype(np.float32)


def light_gain(light: Light, board_xy: np.ndarray, camera_mm: np.ndarray,
               board_mm: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per point of the table plane (`board_xy`, (h, w, 2) board millimetres): the light's linear
    BGR gain (h, w, 3) and the flash's glare (h, w) added in linear light (0 where none).

    The flash sits at the camera (`camera_mm`: x, y, height): the board's light from it falls as
    cos(angle) / distance^2, so as (height / distance)^3 relative to the point under the camera, and
    its specular reflection reaches the camera around that point, as cos(angle)^gloss. A mixed
    light's window and lamp meet across the board along `split_deg` over a third of it."""
    xy = np.asarray(board_xy, np.float64)
    cam = np.asarray(camera_mm, np.float64)
    if light.kind == "flash":
        d = np.sqrt(((xy - cam[:2]) ** 2).sum(-1) + cam[2] ** 2)
        cos = cam[2] / d
        ambient = cast_bgr(light.kelvin, 5500.0, light.uncorrected) * (1 - light.flash)
        flash = light.flash * cos ** 3
        gain = ambient[None, None, :] + flash[..., None]
        glare = light.glare * cos ** light.gloss
    elif light.kind == "mixed":
        balanced = _mired_mean(light.kelvin, light.lamp_kelvin)
        u = np.array([np.cos(np.radians(light.split_deg)), np.sin(np.radians(light.split_deg))])
        s = ((xy - np.array(board_mm) / 2) @ u) / (max(board_mm) / 3)
        lamp = 1 / (1 + np.exp(-4 * s))
        gain = ((1 - lamp)[..., None] * cast_bgr(light.kelvin, balanced)
                + lamp[..., None] * cast_bgr(light.lamp_kelvin, balanced) * 0.8)
        glare = np.zeros(xy.shape[:2])
    else:
        gain = np.broadcast_to(cast_bgr(light.kelvin, PHONE_WB_K, light.uncorrected), xy.shape[:2] + (3,))
        glare = np.zeros(xy.shape[:2])
    return np.asarray(gain, np.float32), np.asarray(glare, np.float32)


def light_photo(img: np.ndarray, light: Light, H_mm: np.ndarray, camera_mm: np.ndarray,
                board_mm: tuple[float, float]) -> np.ndarray:
    """A photo (float32 BGR 0-255, gamma-encoded, the board's plane seen through `H_mm`: board mm ->
    photo px) as taken under `light`: its gain and glare in linear light over a 16x coarser grid,
    and its rendition. The board's median brightness is kept (the phone's exposure) but for the
    glare; a dim light's darkness (`Light.brightness`) is the caller's to apply after exposing."""
    h, w = img.shape[:2]
    gw, gh = max(2, w // 16), max(2, h // 16)
    xs = (np.arange(gw) + 0.5) * (w / gw) - 0.5
    ys = (np.arange(gh) + 0.5) * (h / gh) - 0.5
    pts = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 1, 2)
    xy = cv2.perspectiveTransform(pts, np.linalg.inv(H_mm)).reshape(gh, gw, 2)
    gain, glare = light_gain(light, xy, camera_mm, board_mm)
    on_board = ((xy[..., 0] >= 0) & (xy[..., 0] <= board_mm[0]) & (xy[..., 1] >= 0) & (xy[..., 1] <= board_mm[1]))
    level = np.median(gain[on_board].mean(-1)) if on_board.any() else float(gain.mean())
    gain = cv2.resize(gain / max(level, 1e-6), (w, h), interpolation=cv2.INTER_LINEAR)
    glare = cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR)
    lin = (np.maximum(img, 0) / 255.0) ** 2.2
    # The rendition acts on the scene's colours (the photo as balanced), then the light's cast.
    lin = cv2.transform(lin, rendition_matrix(light.rendition_deg, light.saturation)[::-1, ::-1])
    lin = np.maximum(lin, 0) * gain + glare[..., None]
    return (lin ** (1 / 2.2) * 255.0).astype(np.float32)


def meter(img: np.ndarray, board_px: np.ndarray, light: Light) -> np.ndarray:
    """`img` exposed as a phone meters it under `light`, given its board's pixels (n, 3): the
    channels it white-balances kept from clipping on the paper (the board's strongest channel at
    most 240 at its 90th percentile: a clipped channel would turn every print's hue once the reader
    evens the paper out), and a dim room brightened most, not all, of the way back."""
    top = np.percentile(np.asarray(board_px, np.float32).max(axis=1), 90)
    return img * np.float32(min(1.0, 240.0 / max(float(top), 1.0)) * light.brightness)


# -- the camera ------------------------------------------------------------------------------------
# Frames of phones and messaging apps: 16:9 (1600x900 as sent, 1920x1080, 12 MP cropped) and 4:3,
# landscape and portrait; weights roughly as often as each is sent. None smaller than the issue's
# 1600x900 or the development set's 1008x756: at 1280x720 a board turned across the frame has under
# a pixel a millimetre, and a person can hardly tell a car from its print there.
FRAMES = ((1600, 900), (1920, 1080), (4032, 2268), (4160, 2340), (900, 1600),
          (1600, 1200), (2016, 1512), (1008, 756), (4032, 3024), (4160, 3120), (1200, 1600))
FRAME_W = (4, 2, 1, 1, 1, 2, 1, 1, 1, 1, 0.5)


@dataclass(frozen=True)
class Phone:
    """The camera: its frame, sensor noise, lens softness and JPEG quality."""

    kind: str  # "phone" or "old phone" (small sensor, soft lens, strong JPEG)
    size_wh: tuple[int, int]
    noise: float  # sensor noise, 8-bit levels at full exposure
    chroma_noise: float  # colour noise, 8-bit levels
    blur: float  # lens softness, pixels at 1600 px across
    jpeg_quality: int
    sharpen: float = 0.0  # the phone's own sharpening: unsharp-mask amount (0: none)


def random_phone(rng: np.random.Generator) -> Phone:
    size = FRAMES[int(rng.choice(len(FRAMES), p=np.array(FRAME_W) / sum(FRAME_W)))]
    if rng.random() < 0.5:
        return Phone("old phone", size, float(rng.uniform(3, 8)), float(rng.uniform(2, 5)),
                      float(rng.uniform(0.6, 1.6)), int(rng.integers(35, 71)))
    return Phone("phone", size, float(rng.uniform(1, 3)), float(rng.uniform(0, 2)),
                  float(rng.uniform(0, 0.4)), int(rng.integers(60, 93)))


# The most noise a phone leaves after its noise reduction (8-bit levels: luminance, colour): more,
# and a person no longer makes out a car's outline on a small photo.
MAX_NOISE = (10.0, 6.0)


def phone_finish(img: np.ndarray, phone: Phone, light: Light, rng: np.random.Generator) -> np.ndarray:
    """`phone`'s lens softness and sensor noise (grown by a dim light's brightening, up to
    `MAX_NOISE`) on a photo (float32 BGR 0-255)."""
    h, w = img.shape[:2]
    px = max(w, h) / 1600
    if phone.blur * px > 0.1:
        img = cv2.GaussianBlur(img, (0, 0), phone.blur * px)
    gain = light.noise_gain
    cv2.setRNGSeed(int(rng.integers(2**31)))
    noise = np.empty((h, w), np.float32)
    cv2.randn(noise, 0, float(min(phone.noise * gain, MAX_NOISE[0])))
    chroma = np.empty((h, w, 3), np.float32)
    cv2.randn(chroma, (0, 0, 0), (float(min(phone.chroma_noise * gain, MAX_NOISE[1])),) * 3)
    return sharpen(img + noise[..., None] + chroma, phone.sharpen)


SHARPEN_SIGMA_PX = 1.0  # a phone sharpens its finest detail: edges a pixel or two wide, its noise with them


def sharpen(img: np.ndarray, amount: float) -> np.ndarray:
    """A phone's sharpening (unsharp mask, `amount` of the detail finer than SHARPEN_SIGMA_PX added
    again) on a float32 photo; the same photo where `amount` is 0."""
    if amount <= 0:
        return img
    return img + np.float32(amount) * (img - cv2.GaussianBlur(img, (0, 0), SHARPEN_SIGMA_PX))


# The paper's fibre: speckle this fine (mm), as a phone shows a board's paper at full size.
GRAIN_MM = 0.15


def paper_grain(shape_hw: tuple[int, int], px_per_mm: float, strength: float, seed: list[int]) -> np.ndarray:
    """(H, W, 1) float32 factors near 1 that give a flat board's paper (and print) its fibre:
    smoothed noise, `strength` its relative standard deviation, drawn from `seed` alone."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(shape_hw).astype(np.float32)
    sigma = GRAIN_MM * px_per_mm
    if sigma > 0.3:
        noise = cv2.GaussianBlur(noise, (0, 0), sigma)
        noise /= max(float(noise.std()), 1e-6)
    return (1.0 + np.float32(strength) * noise)[..., None]


# -- the world -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class World:
    """What one photo's home is like (see the module docstring)."""

    print_run: PrintRun
    light: Light
    phone: Phone
    cars: Cars
    seed: list[int] = field(default_factory=list)  # the generator's seed it was drawn from

    def to_dict(self) -> dict:
        """For the truth file: every drawn value, rounded."""
        def r(v):
            if isinstance(v, dict):
                return {k: r(x) for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [r(x) for x in v]
            if isinstance(v, (float, np.floating)):
                return round(float(v), 3)
            return v

        return r(asdict(self))


# Drawn apart from the rest of a world (from its seed and this), so that a seed's world is the same
# with fine detail as without, but for it.
FINE_DETAIL_STREAM = 7
SHARPEN_RANGE = (0.3, 1.5)  # phones' unsharp-mask amounts, from barely to plainly haloed edges
GRAIN_RANGE = (0.01, 0.05)  # the paper's fibre, relative brightness: smooth coated card to rough stock


def random_world(seed: list[int], printed_bgr: dict[str, np.ndarray], light: str | None = None,
                 fine_detail: bool = False) -> World:
    """A world drawn from `seed` alone (a list of ints; see `docs/data.md` for the seeds kept for
    testing): a copy of the board around `printed_bgr` (the measured copy's print), a light (of
    the kind `light` when given), a camera and the players' plastic. `fine_detail`: the paper's
    fibre and the phone's sharpening too (the detail a sharp phone photo shows a millimetre down),
    drawn apart: the rest of the world is the same."""
    rng = np.random.default_rng(seed)
    world = World(random_print_run(rng, printed_bgr), random_light(rng, light), random_phone(rng), random_cars(rng),
                  [int(s) for s in seed])
    if not fine_detail:
        return world
    fine = np.random.default_rng([*seed, FINE_DETAIL_STREAM])
    return replace(world, print_run=replace(world.print_run, grain=float(fine.uniform(*GRAIN_RANGE))),
                   phone=replace(world.phone, sharpen=float(fine.uniform(*SHARPEN_RANGE))))
