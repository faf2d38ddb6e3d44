"""Photo-quality warnings: things that make a reading less sure, but do not stop it.

In: the photo (BGR uint8) and where the board is in it (`BoardLocation`).
Out: `photo_warnings(...) -> list[str]`, one short sentence each, saying what to do better:
too dark, blurred, glare on the board, board small in the frame. Empty when the photo looks fine.

Scale-aware: brightness and glare are measured on the map flattened at 1 px/mm; sharpness on a
window of the map taken at the photo's own resolution and then area-averaged to 1 px/mm, so a
large sharp photo and a small sharp photo score alike and blur is judged in board millimetres.
"""
from __future__ import annotations

import cv2
import numpy as np

from vision.reading import BoardLocation
from vision.rectify import BOARD_MM, flatten, flattened_to_photo_homography, photo_px_per_mm, shrink

DARK_MEDIAN = 60  # median grey (0..255) of the map below this: too dark
# Variance of the Laplacian of the map seen at 1 px/mm below this: blurred. On the real dev
# photos a sharp photo gives 700-5000, a Gaussian blur of 1 mm 75-165, of 2 mm 15-23; cars
# (8 x 22 mm) stay readable to about 1.5 mm.
BLUR_VAR = 50.0
GLARE_FRACTION = 0.03  # share of the map's pixels blown out (near white, no colour)
SMALL_FRACTION = 0.25  # board area below this share of the frame: small
MAP_INSET_MM = 30.0  # the map only: the score track is dark by design

MSG_DARK = "the photo is dark: more light (or no shadow over the board) reads better"
MSG_BLUR = "the photo looks blurred: hold still and let the camera focus on the board"
MSG_GLARE = "there is glare on the board: tilt the phone or move the light to avoid reflections"
MSG_SMALL = "the board is small in the photo: come closer so it fills most of the frame"


def photo_warnings(image_bgr: np.ndarray, location: BoardLocation) -> list[str]:
    """Warnings about the photo's quality over the board area (empty list when it looks fine)."""
    img = np.asarray(image_bgr)
    small, scale = shrink(img, 1000)
    return board_warnings(img, location.corners_xy, small, scale)


def board_warnings(image_bgr: np.ndarray, corners_xy, small: np.ndarray, scale: float) -> list[str]:
    """`photo_warnings` given a shrunken copy already made (`small`, `scale` from `rectify.shrink`)."""
    img = np.asarray(image_bgr)
    corners = np.asarray(corners_xy, dtype=np.float64).reshape(4, 2)
    out: list[str] = []
    flat = flatten(small, (corners + 0.5) * scale - 0.5, px_per_mm=1.0)
    m = int(MAP_INSET_MM)
    inner = flat[m:-m, m:-m]
    gray = cv2.cvtColor(inner, cv2.COLOR_BGR2GRAY)
    if float(np.median(gray)) < DARK_MEDIAN:
        out.append(MSG_DARK)
    if sharpness(img, corners) < BLUR_VAR:
        out.append(MSG_BLUR)
    hsv = cv2.cvtColor(inner, cv2.COLOR_BGR2HSV)
    blown = (hsv[:, :, 2] >= 250) & (hsv[:, :, 1] <= 30)
    if float(blown.mean()) > GLARE_FRACTION:
        out.append(MSG_GLARE)
    h, w = img.shape[:2]
    area = abs(cv2.contourArea(corners.astype(np.float32)))
    if area < SMALL_FRACTION * w * h:
        out.append(MSG_SMALL)
    return out


def sharpness(image_bgr: np.ndarray, corners_xy, px_per_mm: float = 1.0) -> float:
    """Variance of the Laplacian over the middle of the map, seen at `px_per_mm`.

    A 240 x 140 mm window in the map's middle is warped at the photo's own scale (no aliasing),
    then area-averaged to `px_per_mm`, so the figure is about the board, not the photo's size.
    """
    corners = np.asarray(corners_xy, dtype=np.float64).reshape(4, 2)
    native = float(np.clip(photo_px_per_mm(corners), 0.25, 4 * px_per_mm))
    win_mm = np.array([240.0, 140.0])
    x0, y0 = (np.array(BOARD_MM) - win_mm) / 2
    size = np.maximum(np.round(win_mm * native).astype(int), 8)
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
