"""Photo-quality warnings: things that make a reading less sure, but do not stop it.

In: the photo (BGR uint8) and where the board is in it (`BoardLocation`).
Out: `photo_warnings(...) -> list[str]`, one short sentence each, saying what to do better:
too dark, blurred, glare on the board, board small in the frame. Empty when the photo looks fine.
(`MSG_FLASH`, the flash fired, comes from the file's EXIF: `vision.read.Reader.view_path`.)

Scale-aware: brightness and glare are measured on the map flattened at 1 px/mm; sharpness on a
window of the map taken at the photo's own resolution and then area-averaged to 1 px/mm, so a
large sharp photo and a small sharp photo score alike and blur is judged in board millimetres.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.config import CORNERS, WORK_SIDE, QualityConfig
from vision.reading import BoardLocation
from vision.rectify import BOARD_MM, flatten, flattened_to_photo_homography, photo_px_per_mm, shrink

MSG_DARK = "the photo is dark: more light (or no shadow over the board) reads better"
MSG_BLUR = "the photo looks blurred: hold still and let the camera focus on the board"
MSG_GLARE = "there is glare on the board: tilt the phone or move the light to avoid reflections"
MSG_SMALL = "the board is small in the photo: come closer so it fills most of the frame"
# Under a phone's flash half the tracks read wrong are not marked doubtful (docs/ablation.md,
# flash9700): the photo's own record that the flash fired is the surest sign of it.
MSG_FLASH = ("the flash fired: its glare hides cars and washes out their colours, and not every misread "
             "is marked; switch the flash off and take the photo again")


def photo_warnings(image_bgr: np.ndarray, location: BoardLocation, cfg: QualityConfig = QualityConfig()) -> list[str]:
    """Warnings about the photo's quality over the board area (empty list when it looks fine)."""
    img = np.asarray(image_bgr)
    small, scale = shrink(img, WORK_SIDE)
    return board_warnings(img, location.corners_xy, small, scale, cfg)


def board_warnings(image_bgr: np.ndarray, corners_xy, small: np.ndarray, scale: float,
                   cfg: QualityConfig = QualityConfig()) -> list[str]:
    """`photo_warnings` given a shrunken copy already made (`small`, `scale` from `rectify.shrink`)."""
    img = np.asarray(image_bgr)
    corners = np.asarray(corners_xy, dtype=np.float64).reshape(CORNERS, 2)
    out: list[str] = []
    flat = flatten(small, (corners + 0.5) * scale - 0.5, px_per_mm=1.0)
    m = int(cfg.map_inset_mm)
    inner = flat[m:-m, m:-m]
    gray = cv2.cvtColor(inner, cv2.COLOR_BGR2GRAY)
    if float(np.median(gray)) < cfg.dark_median:
        out.append(MSG_DARK)
    if blurred(img, corners, cfg):
        out.append(MSG_BLUR)
    hsv = cv2.cvtColor(inner, cv2.COLOR_BGR2HSV)
    blown = (hsv[:, :, 2] >= cfg.glare_min_value) & (hsv[:, :, 1] <= cfg.glare_max_sat)
    if float(blown.mean()) > cfg.glare_fraction:
        out.append(MSG_GLARE)
    h, w = img.shape[:2]
    area = abs(cv2.contourArea(corners.astype(np.float32)))
    if area < cfg.small_fraction * w * h:
        out.append(MSG_SMALL)
    return out


def blurred(image_bgr: np.ndarray, corners_xy, cfg: QualityConfig = QualityConfig()) -> bool:
    """Whether the map looks blurred (`sharpness` at 1 px/mm under `cfg.blur_var`)."""
    return sharpness(image_bgr, corners_xy, cfg=cfg) < cfg.blur_var


def sharpness(image_bgr: np.ndarray, corners_xy, px_per_mm: float = 1.0, cfg: QualityConfig = QualityConfig()) -> float:
    """Variance of the Laplacian over the middle of the map, seen at `px_per_mm`.

    A window in the map's middle (`cfg.sharp_window_mm`) is warped at the photo's own scale (no
    aliasing), then area-averaged to `px_per_mm`, so the figure is about the board, not the photo's size.
    """
    corners = np.asarray(corners_xy, dtype=np.float64).reshape(CORNERS, 2)
    native = float(np.clip(photo_px_per_mm(corners), cfg.sharp_min_px_per_mm, cfg.sharp_oversample * px_per_mm))
    win_mm = np.array(cfg.sharp_window_mm)
    x0, y0 = (np.array(BOARD_MM) - win_mm) / 2
    size = np.maximum(np.round(win_mm * native).astype(int), cfg.sharp_min_px)
    # flattened pixel (u, v) at `native` shows board mm ((u+0.5)/native, ...); shift to the window.
    shift = np.array([[1, 0, x0 * native], [0, 1, y0 * native], [0, 0, 1]])
    H = flattened_to_photo_homography(corners, native) @ shift
    win = cv2.warpPerspective(image_bgr, H, (int(size[0]), int(size[1])),
                              flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    gray = cv2.cvtColor(win, cv2.COLOR_BGR2GRAY)
    target = np.round(win_mm * px_per_mm).astype(int)
    interp = cv2.INTER_AREA if native > px_per_mm else cv2.INTER_LINEAR
    gray = cv2.resize(gray, (int(target[0]), int(target[1])), interpolation=interp)
    return float(cv2.Laplacian(gray, cv2.CV_32F).var())
