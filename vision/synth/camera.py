"""The phone camera: where it stands over the table, what lies under the board, and what the
lens, the light and the JPEG encoder do to the picture.

`random_camera(rng, size_wh)` -> `Camera` (a board-mm -> photo-px homography and the camera's
position over the board); `table(rng, size_wh)` -> a background; `photograph(...)` lays the flat
board into the photo and applies light, blur, noise; `jpeg(rng, img)` encodes it and
`with_flash_tag` writes in it, as a phone does, whether the flash fired.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import ExifTags, Image

from vision.synth.board_art import BOARD_MM, fractal_noise
from vision.synth.world import World, light_photo, meter, phone_finish

CORNERS_MM = np.array([[0, 0], [BOARD_MM[0], 0], [BOARD_MM[0], BOARD_MM[1]], [0, BOARD_MM[1]]], float)


@dataclass(frozen=True)
class Camera:
    H_mm: np.ndarray  # (3, 3) board millimetres -> photo pixels
    position_mm: np.ndarray  # (3,) camera centre: x, y over the board (mm), height above it (mm)
    size_wh: tuple[int, int]
    tilt_deg: float
    turn_deg: float  # clockwise turn of the board in the photo

    def project(self, pts_mm: np.ndarray) -> np.ndarray:
        """Board points (n, 2) mm -> photo pixels (n, 2)."""
        p = np.asarray(pts_mm, float).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(p, self.H_mm).reshape(-1, 2)

    @property
    def corners_xy(self) -> np.ndarray:
        """The board's outer corners in the photo, board order TL, TR, BR, BL."""
        return self.project(CORNERS_MM)


# Hostile backgrounds (`--backgrounds hostile`): what fools a board locator that looks for the
# red-brown score band against the table. Drawn only on request; "usual" keeps its old draws.
HOSTILE_KINDS = ("checked", "stone", "redwood", "table_edge", "tiles")
HOSTILE_P = (0.3, 0.2, 0.2, 0.2, 0.1)
BACKGROUNDS = ("usual", "hostile") + HOSTILE_KINDS
REACH_MM = 26.0  # clutter over the board stays this close to its outer edge: the score band, 1-3 mm of map
SHADOW_REACH_MM = REACH_MM + 10.0  # ... and so does its shadow
_PROBE_INSET_MM = 45.0  # auto-exposure reads the board inside this margin (clutter never reaches it)


@dataclass(frozen=True)
class Scene:
    """What the board lies on and what lies around it in one photo."""

    kind: str  # the table: wood, cloth, floor, pale (usual) or one of HOSTILE_KINDS
    clutter: tuple[str, ...] = ()  # "cards", "fan", "box", "hand", "card_over" (what was drawn)
    over_mask: np.ndarray | None = None  # (h, w) uint8, 255 where clutter or its shadow covers the photo
    # after the board was laid (hostile only); the board's own pixels are everywhere else


def _rot(axis: str, a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def random_camera(rng: np.random.Generator, size_wh: tuple[int, int], fill: float | None = None,
                  tilt_deg: float | None = None, turn_deg: float | None = None) -> Camera:
    """A phone held over the table: any side of it, tilted up to ~35 degrees, the board filling
    40-95 % of the frame (the larger of its width and height fractions)."""
    w, h = size_wh
    # World: board plane z = 0, x right, y down, z into the table; the camera sits at negative z.
    hfov = np.radians(rng.uniform(55, 75))
    f = max(w, h) / 2 / np.tan(hfov / 2)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    if turn_deg is None:
        side = 90 * int(rng.choice(4, p=[0.4, 0.2, 0.2, 0.2]))
        if h > w:  # portrait frames mostly hold the board turned
            side = 90 * int(rng.choice(4, p=[0.1, 0.4, 0.1, 0.4]))
        turn_deg = side + rng.normal(0, 3)
    if tilt_deg is None:
        tilt_deg = float(rng.uniform(0, 35) ** 1.0)
    dir_ = rng.uniform(0, 2 * np.pi) if rng.random() < 0.3 else -np.pi / 2 + rng.normal(0, 0.3)
    # Tilt about an axis in the image plane; mostly the near edge at the bottom of the photo.
    R = (_rot("x", np.radians(tilt_deg) * np.sin(dir_))
         @ _rot("y", np.radians(tilt_deg) * np.cos(dir_))
         @ _rot("z", np.radians(turn_deg)))
    centre = np.array([BOARD_MM[0] / 2, BOARD_MM[1] / 2, 0.0])
    if fill is None:
        fill = float(rng.uniform(0.4, 0.95))
    dist = 1000.0
    for _ in range(4):
        C = centre - dist * (R.T @ np.array([0, 0, 1.0]))
        t = -R @ C
        H = K @ np.column_stack([R[:, 0], R[:, 1], t])
        pts = cv2.perspectiveTransform(CORNERS_MM.reshape(-1, 1, 2), H).reshape(-1, 2)
        span = max((pts[:, 0].max() - pts[:, 0].min()) / w, (pts[:, 1].max() - pts[:, 1].min()) / h)
        dist *= span / fill
    # Shift the picture so the board sits anywhere inside the frame (an off-centre crop).
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    room = np.array([w, h]) - (hi - lo)
    target = rng.uniform(0.1, 0.9, 2) * np.maximum(room, 0)
    shift = target - lo
    H = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ H
    H /= H[2, 2]
    position = np.array([C[0], C[1], -C[2]])
    return Camera(H, position, (w, h), float(tilt_deg), float(turn_deg % 360))


def table(rng: np.random.Generator, size_wh: tuple[int, int]) -> np.ndarray:
    """What the board lies on: wood, a patterned cloth, a dark speckled floor or a pale table (BGR float32)."""
    return _usual_table(rng, size_wh)[0]


def hostile_surround(rng: np.random.Generator, camera: Camera, kind: str = "hostile") -> tuple[np.ndarray, str]:
    """A hostile table (`kind`: one of `HOSTILE_KINDS`, or "hostile" for any) with what lies
    beside the board, for a board that `camera` sees, and the kind drawn: to lay another board
    picture (e.g. a real photo's board) onto."""
    hostile = _Hostile(rng, camera, kind)
    return hostile.under(), hostile.kind


def _usual_table(rng: np.random.Generator, size_wh: tuple[int, int]) -> tuple[np.ndarray, str]:
    """`table`, and which kind it drew (the draws are those `table` has always made)."""
    w, h = size_wh
    sw, sh = max(8, w // 4), max(8, h // 4)
    kind = rng.choice(["wood", "cloth", "floor", "pale"], p=[0.35, 0.25, 0.25, 0.15])
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    if kind == "wood":
        # Grain: noise stretched along the planks, planks of slightly different tone.
        n = max(sw, sh)
        streaks = rng.standard_normal((n, 6)).astype(np.float32)
        streaks = cv2.resize(streaks, (n, n), interpolation=cv2.INTER_CUBIC)
        fine = cv2.resize(rng.standard_normal((n // 2, 3)).astype(np.float32), (n, n),
                          interpolation=cv2.INTER_LINEAR)
        warp = fractal_noise(rng, (n, n), octaves=(2, 5)) * rng.uniform(3, 12)
        rows = (np.arange(n, dtype=np.float32)[:, None] + warp).clip(0, n - 1).astype(np.int32)
        grain = streaks[rows, np.arange(n)[None, :]] * 0.5 + fine * 0.5
        width = rng.uniform(25, 70)
        plank = np.floor(np.arange(n)[:, None] / width) * np.ones((1, n))
        seams = (np.abs((np.arange(n)[:, None] % width) - 0) < 1).astype(np.float32) * np.ones((1, n))
        tone = 1 + 0.1 * np.sin(plank * 12.9898) + rng.uniform(0.06, 0.14) * grain - 0.35 * seams
        if rng.random() < 0.5:
            tone = tone.T
        tone = tone[:sh, :sw]
        base = np.array([50, 90, 140]) * rng.uniform(0.5, 1.4) + rng.normal(0, 8, 3)
        img = base[None, None, :] * tone[..., None]
    elif kind == "cloth":
        gray = rng.uniform(60, 200)
        c1 = gray + (rng.uniform(30, 220, 3) - gray) * rng.uniform(0.2, 0.7)
        c2 = gray + (rng.uniform(30, 220, 3) - gray) * rng.uniform(0.2, 0.7)
        period = rng.uniform(6, 40)
        a = rng.uniform(0, np.pi)
        u = xx * np.cos(a) + yy * np.sin(a)
        v = -xx * np.sin(a) + yy * np.cos(a)
        pattern = rng.choice(["plaid", "stripes", "plain"])
        if pattern == "plaid":
            m = 0.5 * ((np.sin(u / period * np.pi) > 0.3).astype(np.float32)
                       + (np.sin(v / period * np.pi) > 0.3).astype(np.float32))
        elif pattern == "stripes":
            m = (np.sin(u / period * np.pi) > 0).astype(np.float32)
        else:
            m = np.zeros_like(u)
        m = cv2.GaussianBlur(m, (0, 0), 0.7)
        folds = fractal_noise(rng, (sh, sw), octaves=(3, 6)) * 0.15
        img = (c1[None, None, :] * (1 - m[..., None]) + c2[None, None, :] * m[..., None]) * (1 + folds[..., None])
    elif kind == "floor":
        base = rng.uniform(15, 60) + rng.normal(0, 4, 3)
        img = np.broadcast_to(base, (sh, sw, 3)).astype(np.float32) * (
            1 + 0.3 * fractal_noise(rng, (sh, sw), octaves=(4, 16))[..., None])
        specks = (rng.random((sh, sw)) < rng.uniform(0.001, 0.01)).astype(np.float32)
        specks *= rng.uniform(0.2, 1.0, (sh, sw)).astype(np.float32)
        img = img + specks[..., None] * rng.uniform(40, 120)
    else:
        base = rng.uniform(170, 235) + rng.normal(0, 6, 3)
        img = np.broadcast_to(base, (sh, sw, 3)).astype(np.float32) * (
            1 + 0.05 * fractal_noise(rng, (sh, sw), octaves=(3, 10))[..., None])
    img = cv2.resize(img.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    return np.clip(img, 0, 255), str(kind)


def _table_clutter(rng: np.random.Generator, bg: np.ndarray, camera: Camera) -> None:
    """Train cards (56 x 87 mm) and ticket cards lying around the board, drawn on `bg` in place."""
    q = camera.corners_xy
    px_per_mm = np.linalg.norm(q[1] - q[0]) / BOARD_MM[0]
    w, h = camera.size_wh
    for _ in range(int(rng.integers(1, 7))):
        c = rng.uniform([0, 0], [w, h])
        a = rng.uniform(0, np.pi)
        half = np.array([28, 43.5]) * px_per_mm * rng.uniform(0.9, 1.1)
        u, v = np.array([np.cos(a), np.sin(a)]), np.array([-np.sin(a), np.cos(a)])
        card = np.array([c - u * half[0] - v * half[1], c + u * half[0] - v * half[1],
                         c + u * half[0] + v * half[1], c - u * half[0] + v * half[1]])
        gray = rng.uniform(80, 200)
        face = gray + (rng.uniform(40, 230, 3) - gray) * rng.uniform(0.2, 0.8)
        edge = np.full(3, rng.uniform(200, 245))
        cv2.fillConvexPoly(bg, np.round(card * 16).astype(np.int32), tuple(float(x) for x in edge), cv2.LINE_AA, 4)
        inner = c + (card - c) * 0.85
        cv2.fillConvexPoly(bg, np.round(inner * 16).astype(np.int32), tuple(float(x) for x in face), cv2.LINE_AA, 4)


def _board_shadow(rng: np.random.Generator, bg: np.ndarray, camera: Camera) -> np.ndarray:
    """The board's soft shadow on the table (float `bg` darkened in place), returned as uint8."""
    w, h = camera.size_wh
    shadow = np.zeros((h, w), np.uint8)
    off = rng.normal(0, 0.006, 2) * max(w, h)
    cv2.fillConvexPoly(shadow, np.round((camera.corners_xy + off) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, 0.008 * max(w, h)))
    bg *= (1 - 0.45 * shadow.astype(np.float32) / 255)[..., None]
    return bg.astype(np.uint8)


def photograph(rng: np.random.Generator, flat: np.ndarray, px_per_mm: float, camera: Camera,
               backgrounds: str = "usual") -> np.ndarray:
    """The flat board seen by `camera` on a table, with light, lens and sensor effects (BGR uint8).
    `backgrounds`: "usual" (wood, cloth, floors), "hostile" or one of `HOSTILE_KINDS`."""
    return photograph_scene(rng, flat, px_per_mm, camera, backgrounds)[0]


def photograph_scene(rng: np.random.Generator, flat: np.ndarray, px_per_mm: float, camera: Camera,
                     backgrounds: str = "usual", world: World | None = None) -> tuple[np.ndarray, Scene]:
    """`photograph`, and what the board lies on and what lies around it (`Scene`). `world`: its
    light (`world.light_photo`) instead of the usual one's white balance and exposure, and its
    phone's lens and noise (`world.phone_finish`) after the usual ones."""
    w, h = camera.size_wh
    if backgrounds == "usual":  # the draws every committed render and figure was made with
        bg, kind = _usual_table(rng, (w, h))
        bg = _board_shadow(rng, bg, camera)
        clutter: tuple[str, ...] = ()
        if rng.random() < 0.5:  # cards and the box lid left on the table
            _table_clutter(rng, bg, camera)
            clutter = ("cards",)
        probe_inset = 5.0
        hostile = None
    else:
        hostile = _Hostile(rng, camera, backgrounds)
        bg = hostile.under()
        kind, probe_inset = hostile.kind, _PROBE_INSET_MM

    S = np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    H = camera.H_mm @ S
    # Downscaling more than ~1.3x aliases: pre-blur the flat board to the photo's scale.
    scale = np.sqrt(abs(np.linalg.det(H[:2, :2] / H[2, 2])))
    src = flat
    if scale < 0.75:
        src = cv2.GaussianBlur(flat, (0, 0), 0.45 / scale)
    img = cv2.warpPerspective(src, H, (w, h), dst=bg, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
    if hostile is not None:  # hands and cards reaching over the board's edge
        hostile.over(img)
        scene = Scene(kind, tuple(hostile.clutter), hostile.over_mask)
    else:
        scene = Scene(kind, clutter, None)
    img = img.astype(np.float32)

    # Light: a smooth uneven field, vignette, sometimes a cast shadow and glare; white balance.
    gw, gh = max(2, w // 16), max(2, h // 16)
    field = 1 + rng.uniform(0.05, 0.25) * fractal_noise(rng, (gh, gw), octaves=(2, 4))
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    r2 = ((xx / gw - 0.5) ** 2 + (yy / gh - 0.5) ** 2) * 2
    field *= 1 - rng.uniform(0, 0.35) * r2
    if rng.random() < 0.35:  # a hand, a phone or a person between the lamp and the table
        m = np.zeros((gh, gw), np.uint8)
        cx, cy = rng.uniform(0, gw), rng.uniform(0, gh)
        pts = np.array([[cx + rng.normal(0, gw * 0.3), cy + rng.normal(0, gh * 0.3)] for _ in range(6)])
        cv2.fillConvexPoly(m, cv2.convexHull(pts.astype(np.int32)), 255)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(1, 4)).astype(np.float32) / 255
        field *= 1 - rng.uniform(0.2, 0.5) * m
    gain = cv2.resize(field.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    img *= gain[..., None]
    if world is None:
        exposure = rng.uniform(0.7, 1.1)
        warm = rng.uniform(-1, 1)  # -1 daylight-blue .. +1 warm lamp
        wb = np.array([1 - 0.16 * warm, 1 + rng.normal(0, 0.02), 1 + 0.12 * warm], np.float32) * exposure
        img *= wb[None, None, :]
    else:
        img = light_photo(img, world.light, camera.H_mm, camera.position_mm, BOARD_MM)
    if rng.random() < 0.35:  # glare off the glossy board
        g = np.zeros((gh, gw), np.float32)
        cv2.ellipse(g, (int(rng.uniform(0, gw)), int(rng.uniform(0, gh))),
                    (int(rng.uniform(0.03, 0.15) * gw) + 1, int(rng.uniform(0.03, 0.12) * gh) + 1),
                    float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), rng.uniform(1, 3))
        g = cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)
        img += (g * rng.uniform(60, 200))[..., None]

    # Auto-exposure as phones do it: the board's bright end (90th percentile) lands near the top.
    gx, gy = np.meshgrid(np.linspace(probe_inset, BOARD_MM[0] - probe_inset, 48),
                         np.linspace(probe_inset, BOARD_MM[1] - probe_inset, 32))
    probe = np.round(camera.project(np.stack([gx.ravel(), gy.ravel()], axis=1))).astype(int)
    probe = probe[(probe[:, 0] >= 0) & (probe[:, 0] < w) & (probe[:, 1] >= 0) & (probe[:, 1] < h)]
    bright = np.percentile(img[probe[:, 1], probe[:, 0]].mean(axis=1), 90)
    img *= rng.uniform(175, 235) / max(bright, 1.0)
    if world is not None:
        img = meter(img, img[probe[:, 1], probe[:, 0]], world.light)

    # Lens: focus blur, sometimes shake.
    px = max(w, h) / 1600
    sigma = (rng.uniform(0.0, 0.6) if rng.random() < 0.7 else rng.uniform(0.6, 1.8)) * px
    if sigma > 0.1:
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    if rng.random() < 0.2:
        n = int(rng.uniform(3, 9) * px) | 1
        k = np.zeros((n, n), np.float32)
        a = rng.uniform(0, np.pi)
        c = n // 2
        cv2.line(k, (int(c - np.cos(a) * c), int(c - np.sin(a) * c)), (int(c + np.cos(a) * c), int(c + np.sin(a) * c)), 1.0)
        img = cv2.filter2D(img, -1, k / k.sum())
    # Sensor noise: luminance plus a little colour (OpenCV's generator, seeded from ours: fast).
    cv2.setRNGSeed(int(rng.integers(2**31)))
    noise = np.empty((h, w), np.float32)
    cv2.randn(noise, 0, float(rng.uniform(1, 6)))
    img += noise[..., None]
    if rng.random() < 0.5:
        chroma = np.empty((h, w, 3), np.float32)
        cv2.randn(chroma, (0, 0, 0), (2, 2, 2))
        img += chroma
    if world is not None:
        img = phone_finish(img, world.phone, world.light, rng)
    return np.clip(img, 0, 255).astype(np.uint8), scene


def jpeg(rng: np.random.Generator, img: np.ndarray, quality: int | None = None) -> bytes:
    """JPEG bytes at a phone-to-upload quality (50-95)."""
    q = int(rng.integers(50, 96)) if quality is None else int(quality)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()


# The EXIF Flash tag as a phone in auto mode writes it: fired, or not fired.
FLASH_FIRED, FLASH_NOT_FIRED = 0x19, 0x18


def with_flash_tag(data: bytes, fired: bool) -> bytes:
    """JPEG bytes `data` with an EXIF block that says whether the flash fired (the image data is
    kept as it is: the block is put in after the file's JFIF header)."""
    exif = Image.Exif()
    exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.Flash] = FLASH_FIRED if fired else FLASH_NOT_FIRED
    block = exif.tobytes()  # b"Exif\0\0" and the TIFF structure: an APP1 segment's payload
    segment = b"\xff\xe1" + (len(block) + 2).to_bytes(2, "big") + block
    if data[:2] != b"\xff\xd8":
        raise ValueError("not a JPEG")
    at = 2
    if data[2:4] == b"\xff\xe0":  # JFIF's APP0 stays first
        at = 4 + int.from_bytes(data[4:6], "big")
    return data[:at] + segment + data[at:]


# --- Hostile backgrounds --------------------------------------------------------------------------
# Everything lying on the table is drawn in table millimetres (the board's frame, the table being
# the board's plane) and seen through the camera, so checks, planks, tiles and table edges converge
# as they do in a photo.

_WORK_PX = 1400  # longest side the table textures are computed at (then resized to the photo)
_CARD_MM = (56.0, 87.0)
_CARD_BGR = ((60, 60, 190), (170, 110, 40), (60, 160, 70), (60, 200, 230), (40, 40, 40),
             (235, 235, 235), (50, 130, 230), (170, 120, 220), (150, 150, 150))
_SKIN_BGR = ((165, 190, 230), (120, 150, 205), (90, 125, 180), (60, 90, 140), (45, 65, 105))
_BOX_WORDS = ("RAILWAYS", "EXPRESS", "ADVENTURE", "ROUTES", "ACROSS THE MAP", "STATIONS", "GRAND TOUR")


def _plane_xy(camera: Camera, wh: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Table-plane mm (X, Y) at each pixel of a (ww, wh) working grid over the photo, and each
    pixel's footprint in mm (for anti-aliasing)."""
    w, h = camera.size_wh
    ww, wh_ = wh
    xs = ((np.arange(ww, dtype=np.float64) + 0.5) * (w / ww) - 0.5)[None, :]
    ys = ((np.arange(wh_, dtype=np.float64) + 0.5) * (h / wh_) - 0.5)[:, None]
    Hi = np.linalg.inv(camera.H_mm)
    z = Hi[2, 0] * xs + Hi[2, 1] * ys + Hi[2, 2]
    z = np.where(np.abs(z) < 1e-9, 1e-9, z)
    X = ((Hi[0, 0] * xs + Hi[0, 1] * ys + Hi[0, 2]) / z).astype(np.float32)
    Y = ((Hi[1, 0] * xs + Hi[1, 1] * ys + Hi[1, 2]) / z).astype(np.float32)
    fp = np.hypot(np.gradient(X, axis=1), np.gradient(Y, axis=1)).astype(np.float32)
    return X, Y, np.maximum(fp, 1e-3)


def _plane_noise(rng: np.random.Generator, A: np.ndarray, B: np.ndarray, cell_a: float,
                 cell_b: float | None = None, max_cells: int = 1024) -> np.ndarray:
    """Smooth noise (about unit variance) over plane coordinates A, B, one random value per
    cell_a x cell_b mm cell, cubic between them."""
    cell_b = cell_a if cell_b is None else cell_b
    a0, a1, b0, b1 = float(A.min()), float(A.max()), float(B.min()), float(B.max())
    ca = max(cell_a, (a1 - a0) / max_cells)
    cb = max(cell_b, (b1 - b0) / max_cells)
    grid = rng.standard_normal((int((b1 - b0) / cb) + 4, int((a1 - a0) / ca) + 4)).astype(np.float32) * 1.35
    return cv2.remap(grid, ((A - a0) / ca + 1).astype(np.float32), ((B - b0) / cb + 1).astype(np.float32),
                     cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT)


def _plane_fractal(rng, A, B, cells_mm=(600.0, 150.0, 40.0), falloff=0.6) -> np.ndarray:
    out = np.zeros(A.shape, np.float32)
    amp = total = 1.0
    total = 0.0
    for c in cells_mm:
        out += amp * _plane_noise(rng, A, B, c)
        total += amp
        amp *= falloff
    return out / total


def _square(u: np.ndarray, period: float, fp: np.ndarray) -> np.ndarray:
    """1 on one half of each period of u, 0 on the other, anti-aliased over the footprint fp."""
    tri = np.abs(np.mod(u, period) - period / 2) - period / 4  # signed distance to the nearest edge
    return np.clip(0.5 + tri / fp, 0, 1)


def _hash(v: np.ndarray) -> np.ndarray:
    """A repeatable pseudo-random 0..1 per integer-valued v (plank, tile and board ids)."""
    return np.mod(np.sin(v * 12.9898 + 78.233) * 43758.5453, 1.0).astype(np.float32)


def _checked(rng, X, Y, fp) -> np.ndarray:
    """Gingham, buffalo checks and checkerboards: black and white or coloured, any scale and angle."""
    style = rng.choice(["bw_checker", "bw_gingham", "gingham", "buffalo", "checker"], p=[0.25, 0.2, 0.25, 0.15, 0.15])
    period = float(rng.uniform(60, 180) if style == "buffalo" else rng.uniform(12, 100))
    ang = rng.normal(0, 0.1) if rng.random() < 0.5 else rng.uniform(0, np.pi / 2)
    wrinkle = rng.uniform(0.5, 6)
    Xw = X + _plane_fractal(rng, X, Y, (400, 120)) * wrinkle
    Yw = Y + _plane_fractal(rng, X, Y, (400, 120)) * wrinkle
    u = Xw * np.cos(ang) + Yw * np.sin(ang) + rng.uniform(0, period)
    v = -Xw * np.sin(ang) + Yw * np.cos(ang) + rng.uniform(0, period)
    a, b = _square(u, period, fp), _square(v, period, fp)
    white = rng.uniform(200, 245) + rng.normal(0, 5, 3)
    black = rng.uniform(8, 45) + rng.normal(0, 3, 3)
    colour = np.array(_CARD_BGR[int(rng.choice([0, 1, 2, 3, 6, 7]))], float) * rng.uniform(0.6, 1.0)
    if style == "buffalo" and rng.random() < 0.6:
        colour = np.array([40, 40, 160]) * rng.uniform(0.7, 1.1)  # red and black: near the band's colour
    light, dark = {"bw_checker": (white, black), "bw_gingham": (white, black), "gingham": (white, colour),
                   "buffalo": (colour, black), "checker": (white, colour)}[str(style)]
    a3, b3 = a[..., None], b[..., None]
    if style in ("bw_checker", "checker"):
        x = a3 + b3 - 2 * a3 * b3
        img = light * (1 - x) + dark * x
    else:  # woven: where two stripes cross the dark thread doubles
        mid = 0.5 * (light + dark)
        img = light * (1 - a3) * (1 - b3) + mid * (a3 * (1 - b3) + b3 * (1 - a3)) + dark * a3 * b3
    weave = 0.05 * _plane_noise(rng, X, Y, 1.2) + 0.12 * _plane_fractal(rng, X, Y, (500, 150))
    return img * (1 + weave[..., None])


def _stone(rng, X, Y, fp) -> np.ndarray:
    """Dark granite (speckled), dark marble (veined) or slate."""
    style = rng.choice(["granite", "marble", "slate"], p=[0.45, 0.35, 0.2])
    base = rng.uniform(18, 55) + rng.normal(0, 4, 3)
    tone = 1 + 0.22 * _plane_fractal(rng, X, Y, (700, 180, 45))
    img = base * tone[..., None]
    if style == "granite":
        grain = rng.uniform(1.2, 3.5)
        n1, n2 = _plane_noise(rng, X, Y, grain), _plane_noise(rng, X, Y, grain * 0.7)
        light = np.clip((n1 - 1.2) * 1.5, 0, 1)
        img = img + light[..., None] * (rng.uniform(60, 150) + rng.normal(0, 10, 3))
        img = img * (1 - 0.5 * np.clip((-n2 - 1.0) * 1.5, 0, 1))[..., None]
        if rng.random() < 0.5:  # reddish feldspar grains
            n3 = _plane_noise(rng, X, Y, grain * 1.3)
            img = img + np.clip(n3 - 1.6, 0, 1)[..., None] * np.array([20, 35, 90])
    elif style == "marble":
        veins = np.zeros(X.shape, np.float32)
        for _ in range(int(rng.integers(1, 3))):  # one or two vein systems
            # Perlin's marble: parallel bands bent by turbulence; a vein where each band turns.
            a, period = rng.uniform(0, np.pi), rng.uniform(200, 600)
            turb = _plane_fractal(rng, X, Y, (1500, 500, 150, 40), falloff=0.4) * rng.uniform(1.5, 3)
            f = np.sin((X * np.cos(a) + Y * np.sin(a)) / period * np.pi + turb)
            width = rng.uniform(0.03, 0.08)
            v = np.clip(1 - np.abs(f) / width, 0, 1) ** 1.5 + 0.35 * np.exp(-np.abs(f) / (4 * width))
            v *= np.clip(0.4 + _plane_fractal(rng, X, Y, (700, 200)), 0, 1) * rng.uniform(0.4, 1.0)
            veins = np.maximum(veins, v)
        img = img + veins[..., None] * (rng.uniform(80, 170) + rng.normal(0, 8, 3))
        img = img + np.clip(_plane_noise(rng, X, Y, 1.5) - 1.5, 0, 1)[..., None] * 40
    else:
        ang = rng.uniform(0, np.pi)
        A, B = X * np.cos(ang) + Y * np.sin(ang), -X * np.sin(ang) + Y * np.cos(ang)
        img = img * (1 + 0.05 * _plane_noise(rng, A, B, 150, 3) + 0.04 * _plane_noise(rng, X, Y, 2))[..., None]
    return img


def _wood_mm(rng, X, Y, fp, base) -> np.ndarray:
    """Planks in table mm: grain along them, butt joints, seams (strong straight lines)."""
    ang = float(rng.choice([0, np.pi / 2]) + rng.normal(0, 0.08))
    A, B = X * np.cos(ang) + Y * np.sin(ang), -X * np.sin(ang) + Y * np.cos(ang)
    plank_w = rng.uniform(70, 220)
    plank_len = rng.uniform(700, 2400)
    Bw = B + _plane_fractal(rng, A, B, (900, 250)) * rng.uniform(2, 10)
    # Grain: soft bands a few mm wide with thin darker lines, a broader figure, little fine noise.
    grain = _plane_noise(rng, A, Bw, rng.uniform(200, 500), rng.uniform(2.5, 6))
    lines = np.clip(np.abs(_plane_noise(rng, A, Bw, rng.uniform(300, 700), rng.uniform(4, 10))) < 0.12, 0, 1)
    figure = _plane_noise(rng, A, Bw, rng.uniform(300, 900), rng.uniform(15, 40))
    fine = _plane_noise(rng, A, Bw, 40, 0.6)
    plank = np.floor(B / plank_w)
    along = A + _hash(plank) * plank_len
    board_id = plank * 131 + np.floor(along / plank_len)
    ptone = 1 + 0.2 * (_hash(board_id) - 0.5)
    dB = np.abs(B / plank_w - np.round(B / plank_w)) * plank_w
    dA = np.abs(along / plank_len - np.round(along / plank_len)) * plank_len
    seam_w = rng.uniform(0.4, 1.5)
    seam = np.clip(0.5 + (seam_w - np.minimum(dA, dB)) / fp, 0, 1)
    tone = (ptone * (1 + rng.uniform(0.03, 0.07) * grain + rng.uniform(0.04, 0.08) * figure + 0.015 * fine)
            * (1 - rng.uniform(0.05, 0.15) * lines) * (1 - rng.uniform(0.3, 0.6) * seam))
    return np.asarray(base, np.float32)[None, None, :] * tone[..., None]


def _tiles(rng, X, Y, fp) -> np.ndarray:
    """Floor tiles with grout lines, dark, light or terracotta."""
    size = rng.uniform(200, 600)
    grout = rng.uniform(2, 8)
    ang = rng.normal(0, 0.1) if rng.random() < 0.7 else np.pi / 4 + rng.normal(0, 0.1)
    u = X * np.cos(ang) + Y * np.sin(ang) + rng.uniform(0, size)
    v = -X * np.sin(ang) + Y * np.cos(ang) + rng.uniform(0, size)
    style = rng.choice(["dark", "light", "terracotta"], p=[0.4, 0.35, 0.25])
    base = {"dark": rng.uniform(25, 60) + rng.normal(0, 4, 3), "light": rng.uniform(170, 230) + rng.normal(0, 5, 3),
            "terracotta": np.array([45, 75, 150]) * rng.uniform(0.7, 1.15)}[str(style)]
    gcol = rng.uniform(110, 180) if style != "light" else rng.uniform(60, 120)
    tile = np.floor(u / size) * 977 + np.floor(v / size)
    tone = 1 + 0.12 * (_hash(tile) - 0.5) + 0.08 * _plane_fractal(rng, X, Y, (300, 80, 20))
    d = np.minimum(np.abs(u / size - np.round(u / size)), np.abs(v / size - np.round(v / size))) * size
    g = np.clip(0.5 + (grout / 2 - d) / fp, 0, 1)[..., None]
    return (base * tone[..., None]) * (1 - g) + gcol * g


def _beyond_edge(rng, camera):
    """A table edge inside the frame, clear of the board: (unit normal n, offset c) with the
    table where n . p <= c, or None when the board leaves no room on any side."""
    w, h = camera.size_wh
    Hi = np.linalg.inv(camera.H_mm)
    frame = cv2.perspectiveTransform(np.array([[[0, 0]], [[w, 0]], [[w, h]], [[0, h]]], np.float64), Hi).reshape(-1, 2)
    options = []
    for side in range(4):
        a = side * np.pi / 2 + rng.normal(0, 0.06)
        n = np.array([np.cos(a), np.sin(a)])
        s_board = (CORNERS_MM @ n).max()
        room = (frame @ n).max() - s_board
        options.append((room, n, s_board))
    good = [o for o in options if o[0] > 90]
    if not good:
        room, n, s_board = max(options, key=lambda o: o[0])
        return n, s_board + 15.0
    room, n, s_board = good[int(rng.integers(len(good)))]
    return n, s_board + 15 + (min(room - 50, 300) - 15) * rng.random() ** 2  # mostly near the board


def _table_edge(rng, camera, X, Y, fp):
    """A pale or mid wood table whose edge crosses the frame, a dark floor and a chair beyond."""
    if rng.random() < 0.55:
        base = np.array([165, 195, 222]) * rng.uniform(0.85, 1.08) + rng.normal(0, 6, 3)
    else:
        base = np.array([70, 112, 160]) * rng.uniform(0.8, 1.2) + rng.normal(0, 6, 3)
    top = _wood_mm(rng, X, Y, fp, base)
    n, c = _beyond_edge(rng, camera)
    dist = X * n[0] + Y * n[1] - c  # mm beyond the edge (negative: on the table)
    t = -X * n[1] + Y * n[0]  # along the edge
    top *= (1 + 0.22 * np.exp(-((dist + 2.5) / 1.5) ** 2))[..., None]  # the rounded edge catches the light
    floor = (rng.uniform(10, 50) + rng.normal(0, 3, 3)) * (1 + 0.3 * _plane_fractal(rng, X, Y, (800, 200, 40)))[..., None]
    floor *= (0.55 + 0.45 * np.clip(dist / 400, 0, 1))[..., None]  # under the table's overhang
    # A chair pushed to the table: backrest rail, then the seat, dark wood or black.
    on = dist > 0
    if on.any():
        lo, hi = float(t[on].min()), float(t[on].max())
        t0 = rng.choice([lo, hi]) + rng.normal(0, 120) if rng.random() < 0.6 else rng.uniform(lo, hi)
        d0 = rng.uniform(20, 160)
        chair = rng.uniform(5, 35) + rng.normal(0, 3, 3) if rng.random() < 0.5 else np.array([25, 38, 58]) * rng.uniform(0.6, 1.3)

        def rounded(t_lo, t_hi, d_lo, d_hi, r):
            qt = np.maximum(np.abs(t - (t_lo + t_hi) / 2) - (t_hi - t_lo) / 2 + r, 0)
            qd = np.maximum(np.abs(dist - (d_lo + d_hi) / 2) - (d_hi - d_lo) / 2 + r, 0)
            return np.clip(0.5 + (r - np.hypot(qt, qd)) / (fp * 3), 0, 1)

        half = rng.uniform(190, 240)
        rail = rounded(t0 - half, t0 + half, d0, d0 + rng.uniform(35, 70), 15)
        seat = rounded(t0 - half + 10, t0 + half - 10, d0 + 90, d0 + 520, 40)
        shade = (1 + 0.25 * np.clip(1 - np.abs(dist - d0 - 20) / 25, 0, 1))[..., None]  # the rail's top
        floor = floor * (1 - seat[..., None]) + chair * 0.8 * seat[..., None]
        floor = floor * (1 - rail[..., None]) + chair * shade * rail[..., None]
    k = max(1.0, 3.0 * X.shape[1] / 1400)  # the floor lies ~75 cm under the table: out of focus
    floor = cv2.GaussianBlur(floor.astype(np.float32), (0, 0), k)
    m = np.clip(0.5 + dist / fp, 0, 1)[..., None]
    return top * (1 - m) + floor * m, (n, c)


class _Hostile:
    """One photo's hostile table and clutter, from draws of their own (so the board, the light and
    the lens draw the same whatever the table: only one draw of the photo's rng is taken)."""

    def __init__(self, rng: np.random.Generator, camera: Camera, backgrounds: str):
        if backgrounds not in ("hostile",) + HOSTILE_KINDS:
            raise ValueError(f"backgrounds must be one of {', '.join(BACKGROUNDS)}, not {backgrounds!r}")
        seeds = rng.integers(2**63, size=3)
        krng = np.random.default_rng(seeds[0])
        self.trng, self.crng = np.random.default_rng(seeds[1]), np.random.default_rng(seeds[2])
        self.kind = backgrounds if backgrounds != "hostile" else HOSTILE_KINDS[int(krng.choice(len(HOSTILE_KINDS), p=HOSTILE_P))]
        self.camera = camera
        self.clutter: list[str] = []
        self.table_half = None  # (n, c): the table where n . p <= c (table_edge only)
        w, h = camera.size_wh
        self.over_mask = np.zeros((h, w), np.uint8)
        q = camera.corners_xy
        self.px_per_mm = float(np.linalg.norm(q[1] - q[0]) / BOARD_MM[0])
        c = self.crng
        self.plan = {"box": c.random() < 0.45, "fan": c.random() < 0.45, "cards": c.random() < 0.45,
                     "hand": c.random() < 0.45, "card_over": c.random() < 0.25}
        if not any(self.plan.values()) and c.random() < 0.85:
            self.plan[str(c.choice(list(self.plan)))] = True

    # The table ------------------------------------------------------------------------------
    def table(self) -> np.ndarray:
        w, h = self.camera.size_wh
        s = min(1.0, _WORK_PX / max(w, h))
        X, Y, fp = _plane_xy(self.camera, (max(8, round(w * s)), max(8, round(h * s))))
        r = self.trng
        if self.kind == "checked":
            img = _checked(r, X, Y, fp)
        elif self.kind == "stone":
            img = _stone(r, X, Y, fp)
        elif self.kind == "redwood":  # red-brown wood, close to the score band's colour
            base = np.array([38, 52, 112]) * r.uniform(0.75, 1.3) + r.normal(0, 6, 3)
            img = _wood_mm(r, X, Y, fp, base)
        elif self.kind == "tiles":
            img = _tiles(r, X, Y, fp)
        else:
            img, self.table_half = _table_edge(r, self.camera, X, Y, fp)
        img = cv2.resize(img.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
        return np.clip(img, 0, 255)

    def under(self) -> np.ndarray:
        """The table with the board's shadow and what lies beside the board (uint8)."""
        bg = _board_shadow(self.crng, self.table(), self.camera)
        if self.plan["cards"]:
            _table_clutter(self.crng, bg, self.camera)
            self.clutter.append("cards")
        if self.plan["box"] and self._box(bg):
            self.clutter.append("box")
        if self.plan["fan"] and self._fan(bg):
            self.clutter.append("fan")
        return bg

    def over(self, img: np.ndarray) -> None:
        """What lies over the board's edge, drawn on the photo in place."""
        if self.plan["card_over"] and self._card_over(img):
            self.clutter.append("card_over")
        if self.plan["hand"] and self._hand(img):
            self.clutter.append("hand")

    # Geometry -------------------------------------------------------------------------------
    def _px(self, pts_mm) -> np.ndarray | None:
        """Table mm -> photo px, or None when a point is behind or near the camera's horizon."""
        p = np.asarray(pts_mm, float).reshape(-1, 2)
        z = p @ self.camera.H_mm[2, :2] + self.camera.H_mm[2, 2]
        if (z < 0.2).any():
            return None
        return self.camera.project(p)

    def _visible(self, px: np.ndarray) -> float:
        """Share of the convex polygon px (photo) inside the frame."""
        w, h = self.camera.size_wh
        hull = cv2.convexHull(px.astype(np.float32))
        area = cv2.contourArea(hull)
        if area < 1:
            return 0.0
        frame = np.float32([[0, 0], [w, 0], [w, h], [0, h]]).reshape(-1, 1, 2)
        inter, _ = cv2.intersectConvexConvex(hull, frame)
        return float(inter) / area

    def _on_table(self, pts_mm) -> bool:
        if self.table_half is None:
            return True
        n, c = self.table_half
        return bool((np.asarray(pts_mm) @ n <= c - 5).all())

    def _beside(self, half_extent_n: float, gap: float):
        """A random spot beside the board: (centre mm, inward unit normal, side index)."""
        side = int(self.crng.integers(4))
        inward = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]][side], float)
        if side in (0, 2):
            along = np.array([0.0, self.crng.uniform(0, BOARD_MM[1])])
            edge = np.array([0.0 if side == 0 else BOARD_MM[0], 0])
        else:
            along = np.array([self.crng.uniform(0, BOARD_MM[0]), 0.0])
            edge = np.array([0, 0.0 if side == 1 else BOARD_MM[1]])
        return edge + along - inward * (gap + half_extent_n), inward, side

    # Clutter beside the board ---------------------------------------------------------------
    def _box(self, bg: np.ndarray) -> bool:
        """The game box (or another), printed lid up, beside the board, seen in perspective."""
        r, cam = self.crng, self.camera
        cz = float(cam.position_mm[2])
        for _ in range(15):
            L, W, hb = r.uniform(240, 320), r.uniform(180, 300), r.uniform(45, 80)
            a = r.normal(0, 0.3)
            R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
            local = np.array([[-L, -W], [L, -W], [L, W], [-L, W]]) / 2 @ R.T
            centre, inward, _ = self._beside(0.0, r.uniform(5, 120))
            centre = centre - inward * (local @ inward).max()
            foot = centre + local
            if cz <= hb + 100 or not self._on_table(foot):
                continue
            nadir = cam.position_mm[:2]
            top = nadir + (foot - nadir) * cz / (cz - hb)  # the lid, hb above the table
            fp, tp = self._px(foot), self._px(top)
            if fp is None or tp is None or not 0.2 <= self._visible(np.vstack([fp, tp])) <= 0.98:
                continue
            break
        else:
            return False
        ppm = self.px_per_mm
        # Its shadow, then the sides that face the camera, then the printed lid.
        h, w = bg.shape[:2]
        sh = np.zeros((h, w), np.uint8)
        off = r.normal(0, 0.25, 2) * hb
        sp = self._px(foot + off)
        if sp is not None:
            cv2.fillConvexPoly(sh, np.round(cv2.convexHull(np.vstack([fp, sp]).astype(np.float32)).reshape(-1, 2) * 16)
                               .astype(np.int32), 255, cv2.LINE_AA, 4)
            sh = cv2.GaussianBlur(sh, (0, 0), max(1.0, 6 * ppm))
            bg[:] = (bg * (1 - 0.45 * sh.astype(np.float32)[..., None] / 255)).astype(np.uint8)
        art = self._box_art(L, W)
        side_bgr = art[2, 2].astype(float)
        for i in range(4):
            j = (i + 1) % 4
            mid = (foot[i] + foot[j]) / 2
            out = mid - centre
            if np.dot(cam.position_mm[:2] - mid, out) > 0:  # faces the camera
                quad = np.array([fp[i], fp[j], tp[j], tp[i]])
                col = side_bgr * r.uniform(0.5, 0.85)
                cv2.fillConvexPoly(bg, np.round(quad * 16).astype(np.int32), tuple(float(v) for v in col), cv2.LINE_AA, 4)
        ah, aw = art.shape[:2]
        Ht = cv2.getPerspectiveTransform(np.float32([[0, 0], [aw, 0], [aw, ah], [0, ah]]), np.float32(tp))
        cv2.warpPerspective(art, Ht, (w, h), dst=bg, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
        return True

    def _box_art(self, L: float, W: float) -> np.ndarray:
        """A printed lid at 2 px/mm: a border, a painted scene, a title banner."""
        r = self.crng
        ppm = 2
        w, h = int(L * ppm), int(W * ppm)
        sky = np.array([200, 160, 110]) * r.uniform(0.6, 1.1)
        land = np.array([60, 120, 140]) * r.uniform(0.5, 1.2)
        yy = np.linspace(0, 1, h, dtype=np.float32)[:, None, None]
        horizon = r.uniform(0.35, 0.65)
        hills = fractal_noise(r, (h, w), octaves=(3, 9, 30))[..., None]
        m = np.clip((yy - horizon + 0.12 * hills) * 12, 0, 1)
        art = sky * (1 - m) + land * m * (1 + 0.35 * fractal_noise(r, (h, w), octaves=(10, 40, 120))[..., None])
        art = np.clip(art, 0, 255).astype(np.uint8)
        # A train: a dark body with a few windows, across the scene.
        y0 = int(h * r.uniform(0.45, 0.7))
        x0, x1 = int(w * r.uniform(0.05, 0.3)), int(w * r.uniform(0.6, 0.95))
        body = tuple(float(v) for v in np.array(_CARD_BGR[int(r.integers(len(_CARD_BGR)))]) * 0.7)
        cv2.rectangle(art, (x0, y0), (x1, y0 + int(0.08 * h)), body, -1)
        for x in range(x0 + 10, x1 - 20, 40):
            cv2.rectangle(art, (x, y0 + 8), (x + 20, y0 + 22), (180, 220, 240), -1)
        border = np.array(_CARD_BGR[int(r.integers(len(_CARD_BGR)))], float) * r.uniform(0.5, 1.0)
        bw = int(r.uniform(6, 14) * ppm)
        art[:bw], art[-bw:], art[:, :bw], art[:, -bw:] = (np.clip(border, 0, 255).astype(np.uint8),) * 4
        by = int(h * r.uniform(0.08, 0.2))
        cv2.rectangle(art, (bw, by), (w - bw, by + int(h * 0.16)), tuple(float(v) for v in border * 0.6 + 60), -1)
        word = str(r.choice(_BOX_WORDS))
        scale = (w - 2 * bw) * 0.8 / max(1, cv2.getTextSize(word, cv2.FONT_HERSHEY_TRIPLEX, 1, 2)[0][0])
        scale = min(scale, h * 0.12 / 22)
        tw = cv2.getTextSize(word, cv2.FONT_HERSHEY_TRIPLEX, scale, 2)[0][0]
        org = (int((w - tw) / 2), int(by + h * 0.08 + 11 * scale))
        cv2.putText(art, word, org, cv2.FONT_HERSHEY_TRIPLEX, scale, (20, 20, 30), max(2, int(5 * scale)), cv2.LINE_AA)
        cv2.putText(art, word, org, cv2.FONT_HERSHEY_TRIPLEX, scale, (90, 230, 250), max(1, int(2 * scale)), cv2.LINE_AA)
        return art

    def _card_poly(self, centre, angle) -> np.ndarray:
        hw, hh = _CARD_MM[0] / 2, _CARD_MM[1] / 2
        R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        return centre + np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]) @ R.T

    def _draw_card(self, img, poly_mm, mask=None) -> bool:
        px = self._px(poly_mm)
        if px is None:
            return False
        r = self.crng
        edge = (float(r.uniform(215, 250)),) * 3
        face = tuple(float(v) for v in np.array(_CARD_BGR[int(r.integers(len(_CARD_BGR)))]) * r.uniform(0.75, 1.05))
        c = poly_mm.mean(axis=0)
        inner = self._px(c + (poly_mm - c) * 0.86)
        cv2.fillConvexPoly(img, np.round(px * 16).astype(np.int32), edge, cv2.LINE_AA, 4)
        cv2.polylines(img, [np.round(px * 16).astype(np.int32)], True, (90, 90, 90), 1, cv2.LINE_AA, 4)
        if inner is not None:
            cv2.fillConvexPoly(img, np.round(inner * 16).astype(np.int32), face, cv2.LINE_AA, 4)
            # A printed car across the card's middle.
            u, v = (poly_mm[1] - poly_mm[0]) / 2, (poly_mm[3] - poly_mm[0]) / 2
            car = self._px(np.array([c - 0.6 * u - 0.15 * v, c + 0.6 * u - 0.15 * v, c + 0.6 * u + 0.15 * v,
                                     c - 0.6 * u + 0.15 * v]))
            if car is not None:
                cv2.fillConvexPoly(img, np.round(car * 16).astype(np.int32), tuple(v * 0.55 for v in face), cv2.LINE_AA, 4)
        if mask is not None:
            cv2.fillConvexPoly(mask, np.round(px * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
        return True

    def _fan(self, bg: np.ndarray) -> bool:
        """A hand of train cards put down fanned out beside the board."""
        r = self.crng
        pivot, _, _ = self._beside(0.0, r.uniform(40, 220))
        if not self._on_table(pivot[None]):
            return False
        n = int(r.integers(3, 10))
        step = r.uniform(0.1, 0.25)
        a0 = r.uniform(0, 2 * np.pi)
        drawn = False
        for k in range(n):
            a = a0 + (k - n / 2) * step
            centre = pivot + np.array([np.sin(a), -np.cos(a)]) * _CARD_MM[1] * 0.35
            drawn |= self._draw_card(bg, self._card_poly(centre, a))
        return drawn

    # Clutter over the board's edge ----------------------------------------------------------
    def _reach_in(self, parts: list[np.ndarray], inward: np.ndarray, edge_pt: np.ndarray, depth: float):
        """Shift convex parts (mm) along `inward` so their deepest vertex lies `depth` mm inside the
        board's edge through `edge_pt` (each part convex: no point of it lies deeper)."""
        deepest = max(float(((p - edge_pt) @ inward).max()) for p in parts)
        return [p - inward * (deepest - depth) for p in parts]

    def _edge_spot(self):
        r = self.crng
        side = int(r.integers(4))
        inward = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]][side], float)
        t = r.uniform(0.12, 0.88)
        edge = {0: (0, t * BOARD_MM[1]), 1: (t * BOARD_MM[0], 0), 2: (BOARD_MM[0], t * BOARD_MM[1]),
                3: (t * BOARD_MM[0], BOARD_MM[1])}[side]
        return np.array(edge, float), inward

    def _card_over(self, img: np.ndarray) -> bool:
        """One or two cards left lying across the board's edge (over the score band only)."""
        r = self.crng
        edge, inward = self._edge_spot()
        a = np.arctan2(inward[1], inward[0]) + np.pi / 2 + r.normal(0, 0.5)
        polys = [self._card_poly(edge - inward * 30, a)]
        if r.random() < 0.5:
            polys.append(self._card_poly(edge - inward * 30 + r.normal(0, 12, 2), a + r.normal(0, 0.3)))
        polys = self._reach_in(polys, inward, edge, r.uniform(3, REACH_MM - 4))
        mask = np.zeros(img.shape[:2], np.uint8)
        ok = all(self._px(p) is not None for p in polys)
        if not ok:
            return False
        for p in polys:
            self._draw_card(img, p, mask)
        self.over_mask |= mask
        return True

    def _hand(self, img: np.ndarray) -> bool:
        """A hand and forearm reaching in from outside, fingertips on the score band."""
        r = self.crng
        edge, inward = self._edge_spot()
        s = r.uniform(0.85, 1.15)  # hand size
        theta = np.arctan2(inward[1], inward[0]) + np.clip(r.normal(0, 0.35), -0.75, 0.75)
        d = np.array([np.cos(theta), np.sin(theta)])  # the way the fingers point
        e = np.array([-d[1], d[0]])

        def at(x, y):  # hand frame: x across the hand, y back along the arm from the fingertips
            return edge + np.outer(np.atleast_1d(x), e) - np.outer(np.atleast_1d(y), d)

        def capsule(x0, y0, x1, y1, rad):
            p0, p1 = at(x0, y0)[0], at(x1, y1)[0]
            ang = np.arctan2(*(p1 - p0)[::-1])
            arc = np.linspace(-np.pi / 2, np.pi / 2, 9)
            c1 = p1 + rad * np.stack([np.cos(ang + arc), np.sin(ang + arc)], 1)
            c0 = p0 + rad * np.stack([np.cos(ang + np.pi + arc), np.sin(ang + np.pi + arc)], 1)
            return np.vstack([c1, c0])

        fist = r.random() < 0.3
        skin_parts = []
        palm_y = 0.0 if fist else 62 * s
        ang = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        skin_parts.append(at(44 * s * np.cos(ang), palm_y + 20 * s + 52 * s * np.sin(ang)))
        if not fist:
            spread = r.uniform(0.9, 1.3)
            for x, ln in zip((-24, -8, 8, 24), (58, 70, 66, 52)):
                y_tip = palm_y - ln * s + 22 * s + (70 - ln) * 0.3 * s
                skin_parts.append(capsule(x * spread * s, palm_y, x * spread * s * 1.15, y_tip, 8.5 * s))
        side = r.choice([-1, 1])
        skin_parts.append(capsule(side * 38 * s, palm_y + 55 * s, side * 62 * s, palm_y + 15 * s, 11 * s))
        wrist = palm_y + 70 * s
        sy = wrist + r.uniform(40, 200) if r.random() < 0.7 else None  # where a sleeve starts

        def arm(length):  # the forearm, and the sleeve over it
            far = wrist + length
            quad = np.vstack([at(-30 * s, wrist), at(30 * s, wrist), at(44 * s, far), at(-44 * s, far)])
            if sy is None:
                return [quad]
            return [quad, np.vstack([at(-40 * s, sy), at(40 * s, sy), at(54 * s, far), at(-54 * s, far)])]

        # Fingertips REACH_MM - 4 mm at most over the board; the arm points away from the board
        # (within 45 degrees of the edge's outward normal), so no part of it lies deeper.
        shift = self._reach_in(skin_parts + arm(300), inward, edge, r.uniform(4, REACH_MM - 4))[0][0] - skin_parts[0][0]
        skin_parts = [q + shift for q in skin_parts]
        w, h = self.camera.size_wh
        px = None
        for length in (400, 700, 1000, 1400, 1900, 2500):  # long enough to leave the frame
            cand = skin_parts + [q + shift for q in arm(length)]
            cpx = [self._px(q) for q in cand]
            if any(q is None for q in cpx):
                break
            px = cpx
            end = px[len(skin_parts)][2:].mean(axis=0)
            if not (0 <= end[0] <= w and 0 <= end[1] <= h):
                break
        if px is None:
            return False
        sleeve_on = sy is not None
        skin_px, sleeve_px = (px[:-1], px[-1]) if sleeve_on else (px, None)
        if self._visible(np.vstack(px)) <= 0:
            return False
        h, w = img.shape[:2]
        ppm = self.px_per_mm
        x0, y0 = np.floor(np.vstack(px).min(axis=0) - 20 * ppm - 4).astype(int)
        x1, y1 = np.ceil(np.vstack(px).max(axis=0) + 20 * ppm + 4).astype(int)
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return False
        o = np.array([x0, y0])
        crop = img[y0:y1, x0:x1].astype(np.float32)
        skin = np.zeros(crop.shape[:2], np.uint8)
        for p in skin_px:
            cv2.fillPoly(skin, [np.round((p - o) * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
        cloth = np.zeros_like(skin)
        if sleeve_px is not None:
            cv2.fillPoly(cloth, [np.round((sleeve_px - o) * 16).astype(np.int32)], 255, cv2.LINE_AA, 4)
        both = np.maximum(skin, cloth)
        # Shadow on what lies beneath: the hand is a few cm above it.
        shift = r.normal(0, 1, 2)
        shift = shift / max(np.linalg.norm(shift), 1e-6) * r.uniform(3, 7) * ppm
        M = np.float32([[1, 0, shift[0]], [0, 1, shift[1]]])
        shadow = cv2.warpAffine(both, M, (both.shape[1], both.shape[0]))
        shadow = cv2.GaussianBlur(shadow, (0, 0), max(0.8, 2.0 * ppm)).astype(np.float32) / 255
        crop *= (1 - 0.45 * shadow)[..., None]
        t = r.uniform(0, len(_SKIN_BGR) - 1)
        i = int(t)
        tone = np.array(_SKIN_BGR[i], float) * (1 - (t - i)) + np.array(_SKIN_BGR[min(i + 1, len(_SKIN_BGR) - 1)], float) * (t - i)
        round_ = cv2.distanceTransform((both > 127).astype(np.uint8), cv2.DIST_L2, 3) / max(1.0, 12 * ppm)
        shade = (0.72 + 0.3 * np.clip(round_, 0, 1))[..., None]
        cols = np.broadcast_to(tone, crop.shape).astype(np.float32)
        if sleeve_px is not None:
            sc = (r.uniform(15, 200) + r.normal(0, 25, 3)).clip(0, 255)
            cols = np.where((cloth > 127)[..., None], sc.astype(np.float32), cols)
        a = (both.astype(np.float32) / 255)[..., None]
        crop = crop * (1 - a) + cols * shade * a
        img[y0:y1, x0:x1] = np.clip(crop, 0, 255).astype(np.uint8)
        cover = np.maximum(both, (shadow > 0.03).astype(np.uint8) * 255)
        self.over_mask[y0:y1, x0:x1] |= cover
        return True
