"""The phone camera: where it stands over the table, what lies under the board, and what the
lens, the light and the JPEG encoder do to the picture.

`random_camera(rng, size_wh)` -> `Camera` (a board-mm -> photo-px homography and the camera's
position over the board); `table(rng, size_wh)` -> a background; `photograph(...)` lays the flat
board into the photo and applies light, blur, noise; `jpeg(rng, img)` encodes it.
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.synth.board_art import BOARD_MM, fractal_noise

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
    return np.clip(img, 0, 255)


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


def photograph(rng: np.random.Generator, flat: np.ndarray, px_per_mm: float, camera: Camera) -> np.ndarray:
    """The flat board seen by `camera` on a table, with light, lens and sensor effects (BGR uint8)."""
    w, h = camera.size_wh
    bg = table(rng, (w, h))
    quad = camera.corners_xy
    # The board's soft shadow on the table.
    shadow = np.zeros((h, w), np.uint8)
    off = rng.normal(0, 0.006, 2) * max(w, h)
    cv2.fillConvexPoly(shadow, np.round((quad + off) * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
    shadow = cv2.GaussianBlur(shadow, (0, 0), max(1.0, 0.008 * max(w, h)))
    bg *= (1 - 0.45 * shadow.astype(np.float32) / 255)[..., None]
    bg = bg.astype(np.uint8)
    if rng.random() < 0.5:  # cards and the box lid left on the table
        _table_clutter(rng, bg, camera)

    S = np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0])
    H = camera.H_mm @ S
    # Downscaling more than ~1.3x aliases: pre-blur the flat board to the photo's scale.
    scale = np.sqrt(abs(np.linalg.det(H[:2, :2] / H[2, 2])))
    src = flat
    if scale < 0.75:
        src = cv2.GaussianBlur(flat, (0, 0), 0.45 / scale)
    img = cv2.warpPerspective(src, H, (w, h), dst=bg, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
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
    exposure = rng.uniform(0.7, 1.1)
    warm = rng.uniform(-1, 1)  # -1 daylight-blue .. +1 warm lamp
    wb = np.array([1 - 0.16 * warm, 1 + rng.normal(0, 0.02), 1 + 0.12 * warm], np.float32) * exposure
    img *= gain[..., None]
    img *= wb[None, None, :]
    if rng.random() < 0.35:  # glare off the glossy board
        g = np.zeros((gh, gw), np.float32)
        cv2.ellipse(g, (int(rng.uniform(0, gw)), int(rng.uniform(0, gh))),
                    (int(rng.uniform(0.03, 0.15) * gw) + 1, int(rng.uniform(0.03, 0.12) * gh) + 1),
                    float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), rng.uniform(1, 3))
        g = cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)
        img += (g * rng.uniform(60, 200))[..., None]

    # Auto-exposure as phones do it: the board's bright end (90th percentile) lands near the top.
    gx, gy = np.meshgrid(np.linspace(5, BOARD_MM[0] - 5, 48), np.linspace(5, BOARD_MM[1] - 5, 32))
    probe = np.round(camera.project(np.stack([gx.ravel(), gy.ravel()], axis=1))).astype(int)
    probe = probe[(probe[:, 0] >= 0) & (probe[:, 0] < w) & (probe[:, 1] >= 0) & (probe[:, 1] < h)]
    bright = np.percentile(img[probe[:, 1], probe[:, 0]].mean(axis=1), 90)
    img *= rng.uniform(175, 235) / max(bright, 1.0)

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
    return np.clip(img, 0, 255).astype(np.uint8)


def jpeg(rng: np.random.Generator, img: np.ndarray, quality: int | None = None) -> bytes:
    """JPEG bytes at a phone-to-upload quality (50-95)."""
    q = int(rng.integers(50, 96)) if quality is None else int(quality)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes()
