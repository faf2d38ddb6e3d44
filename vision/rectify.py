"""Flatten the board: warp the photo so the board fills the template frame.

Board frame: millimetres from the board's own top-left outer corner, x right, y down, the board
being `BOARD_MM` = 795 x 525 mm (the board facts' `Board.board_mm`). The flattened image at `px_per_mm` has size
(round(525 * px_per_mm), round(795 * px_per_mm)); its pixel (u, v) (integer = pixel centre) shows
the board point ((u + 0.5) / px_per_mm, (v + 0.5) / px_per_mm) mm.

In: a photo (BGR uint8) and the board's outer corners in it, board order TL, TR, BR, BL (as
`vision.locate.locate_board` gives them). Out: arrays; no state.
"""
from __future__ import annotations

import cv2
import numpy as np

from calibration import template
from calibration.template import FLAT_PX_PER_MM
from scoring.board import load_board

BOARD_MM: tuple[float, float] = load_board().board_mm  # width, height of the whole board, score track included


def board_corners_mm() -> np.ndarray:
    """The board's outer corners in board millimetres, order TL, TR, BR, BL."""
    w, h = BOARD_MM
    return np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])


def board_to_photo_homography(corners_xy) -> np.ndarray:
    """3x3 homography taking board millimetres (x, y, 1) to photo pixels."""
    c = np.asarray(corners_xy, dtype=np.float64).reshape(4, 2)
    return _homography(board_corners_mm(), c)


def flattened_to_photo_homography(corners_xy, px_per_mm: float) -> np.ndarray:
    """3x3 homography taking flattened-image pixels (u, v, 1) at `px_per_mm` to photo pixels."""
    s = 1.0 / float(px_per_mm)
    px_to_mm = np.array([[s, 0.0, 0.5 * s], [0.0, s, 0.5 * s], [0.0, 0.0, 1.0]])
    return board_to_photo_homography(corners_xy) @ px_to_mm


def flattened_size(px_per_mm: float) -> tuple[int, int]:
    """(width, height) in pixels of the flattened board at `px_per_mm`."""
    return template.flattened_size(BOARD_MM, px_per_mm)


def photo_px_per_mm(corners_xy) -> float:
    """The photo's mean scale over the board (pixels per board millimetre), from its edge lengths."""
    c = np.asarray(corners_xy, dtype=np.float64).reshape(4, 2)
    d = np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)
    return float((d[0] + d[2]) / (2 * BOARD_MM[0]) * 0.5 + (d[1] + d[3]) / (2 * BOARD_MM[1]) * 0.5)


def flatten(image_bgr: np.ndarray, corners_xy, px_per_mm: float = FLAT_PX_PER_MM) -> np.ndarray:
    """The board warped to the template frame: (round(525*ppm), round(795*ppm), channels) uint8.

    When the photo shows the board at more than twice the wanted scale it is first halved (pyrDown,
    repeatedly) so the warp does not alias and reads fewer pixels; corners scale with it.
    """
    img = np.asarray(image_bgr)
    c = np.asarray(corners_xy, dtype=np.float64).reshape(4, 2)
    if not np.all(np.isfinite(c)):
        raise ValueError("corners_xy must be finite")
    # Halve while the board still has more than 2x the output's pixels per mm.
    while photo_px_per_mm(c) > 2.0 * px_per_mm and min(img.shape[:2]) > 64:
        img = cv2.pyrDown(img)
        c = (c + 0.5) / 2.0 - 0.5  # pixel-centre coordinates after halving
    w, h = flattened_size(px_per_mm)
    H = flattened_to_photo_homography(c, px_per_mm)
    return cv2.warpPerspective(img, H, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)


def shrink(image: np.ndarray, max_side: int = 1000) -> tuple[np.ndarray, float]:
    """Halve the image (area-averaged, exact factor 2: fast) until its long side is under
    1.5 x `max_side`. Returns (smaller image, scale); a point maps as x_small = (x + 0.5) * scale - 0.5.
    """
    small, scale = image, 1.0
    while max(small.shape[:2]) > 1.5 * max_side:
        h2, w2 = small.shape[0] // 2, small.shape[1] // 2
        # An odd last row/column is dropped so the factor stays exactly 1/2.
        small = cv2.resize(small[: 2 * h2, : 2 * w2], (w2, h2), interpolation=cv2.INTER_AREA)
        scale *= 0.5
    return small, scale


def to_photo(points_mm, corners_xy) -> np.ndarray:
    """Board millimetres (n, 2) -> photo pixels (n, 2)."""
    p = np.asarray(points_mm, dtype=np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(p, board_to_photo_homography(corners_xy)).reshape(-1, 2)


def to_board(points_xy, corners_xy) -> np.ndarray:
    """Photo pixels (n, 2) -> board millimetres (n, 2)."""
    p = np.asarray(points_xy, dtype=np.float64).reshape(-1, 1, 2)
    H = np.linalg.inv(board_to_photo_homography(corners_xy))
    return cv2.perspectiveTransform(p, H).reshape(-1, 2)


# A phone's main camera: about 65 degrees across the long side of the frame (26 mm equivalent).
PHONE_FOCAL_PER_LONG_SIDE = 0.78


def camera_position(corners_xy, image_wh, focal_per_long_side: float = PHONE_FOCAL_PER_LONG_SIDE) -> np.ndarray:
    """Where the camera stood, in board millimetres: (x, y, height above the board), from the
    board's corners in the photo.

    Why: cars are ~6 mm tall, so in a photo taken from ~70 cm their tops lean away from the point
    under the camera by several millimetres at the board's edges (half a lane). Knowing the camera
    lets the reader look where the cars are. Assumes a phone's focal length and the principal point
    in the middle of the frame (a single homography cannot give both reliably); an error of 20 % in
    the focal length moves the estimate by about a millimetre of parallax, not more.
    """
    w, h = float(image_wh[0]), float(image_wh[1])
    f = focal_per_long_side * max(w, h)
    K_inv = np.linalg.inv(np.array([[f, 0.0, w / 2], [0.0, f, h / 2], [0.0, 0.0, 1.0]]))
    m = K_inv @ board_to_photo_homography(corners_xy)
    m = m * (2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1])))
    if m[2, 2] < 0:  # the board lies in front of the camera
        m = -m
    u, _, vt = np.linalg.svd(np.column_stack([m[:, 0], m[:, 1], np.cross(m[:, 0], m[:, 1])]))
    centre = -(u @ vt).T @ m[:, 2]
    return np.array([centre[0], centre[1], abs(centre[2])])


def parallax_mm(points_mm, camera_mm, height_mm: float) -> np.ndarray:
    """(n, 2) shift, in the board plane, of what stands `height_mm` above each board point when seen
    from `camera_mm` (x, y, height) and flattened onto the board: away from the point under the camera."""
    p = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
    cam = np.asarray(camera_mm, dtype=np.float64)
    return (p - cam[:2]) * height_mm / max(cam[2] - height_mm, 1.0)


def _homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Exact 4-point homography solved in float64 (sub-pixel on large photos)."""
    A, b = [], []
    for (x, y), (u, v) in zip(src, dst):
        A.append([x, y, 1, 0, 0, 0, -u * x, -u * y]); b.append(u)
        A.append([0, 0, 0, x, y, 1, -v * x, -v * y]); b.append(v)
    try:
        h = np.linalg.solve(np.array(A, dtype=np.float64), np.array(b, dtype=np.float64))
    except np.linalg.LinAlgError:
        raise ValueError("the four corners do not form a quadrilateral") from None
    return np.append(h, 1.0).reshape(3, 3)
