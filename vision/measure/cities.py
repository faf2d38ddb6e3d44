"""Find the city dots on a flattened empty board (circle fit near the board facts' places, then
the copper's centre as the locator's dot detector sees it)."""
from __future__ import annotations

import cv2
import numpy as np

from scoring.board import Board
from vision.locate.config import DotConfig
from vision.locate.dots import find_dots, paper_gain
from vision.measure.spaces import PX_PER_MM


# ----------------------------------------------------------------------------------------------
def find_cities(board_bgr: np.ndarray, board: Board) -> dict[str, np.ndarray]:
    """Centre (mm) of each city dot, found near the city's place in the board facts."""
    s = PX_PER_MM
    W, H = board.board_mm
    gray = cv2.cvtColor(board_bgr, cv2.COLOR_BGR2GRAY)
    gray = cv2.GaussianBlur(gray, (5, 5), 1.5)
    out = {}
    win = int(14 * s)
    for name, c in board.cities.items():
        guess = np.array([c.x * W, c.y * H])
        cx, cy = (guess * s).astype(int)
        x0, y0 = max(cx - win, 0), max(cy - win, 0)
        roi = gray[y0:cy + win, x0:cx + win]
        circles = cv2.HoughCircles(roi, cv2.HOUGH_GRADIENT, dp=1, minDist=int(3 * s), param1=80, param2=12,
                                   minRadius=int(3.2 * s), maxRadius=int(6.0 * s))
        if circles is None:
            out[name] = guess
            continue
        cand = circles[0, :, :2] + [x0, y0]
        d = np.hypot(*(cand / s - guess).T)
        best = int(d.argmin())
        out[name] = cand[best] / s if d[best] < 9.0 else guess
    return out


def dot_centres(board_bgr: np.ndarray, cities: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each city's dot centre (mm) as the board locator's own dot detector (`vision.locate.dots`)
    sees it, within 5 mm of `cities`: the template's city centres, so that the outline check, the
    renderer's dots and the template agree on where a dot is. (The circle fit above, which the
    tracks are found from, sits ~1.3 mm off the copper's centre.)"""
    s = PX_PER_MM
    names = list(cities)
    near = np.array([cities[n] for n in names], np.float64)
    to_img = np.array([[s, 0, -0.5], [0, s, -0.5], [0, 0, 1.0]])  # board mm -> pixels (centres at +0.5)
    found, peak = find_dots(board_bgr, to_img, DotConfig().px_per_mm, near, 5.0, gain=paper_gain(board_bgr, to_img))
    ok = peak > DotConfig().min_response
    return {n: (found[i] if ok[i] else near[i]) for i, n in enumerate(names)}
