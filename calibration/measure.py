"""Measure the board template from a flattened photo of an empty board (work in progress).

In: a BGR image of the whole board warped to its outer corners. Out: a `Template` in millimetres.
"""
from __future__ import annotations

import numpy as np

from calibration.template import Template
from scoring.errors import TtrError

TRACK_BGR = {"red": (40, 40, 220), "blue": (220, 90, 20), "green": (40, 190, 80), "yellow": (0, 220, 240),
             "black": (40, 40, 40), "white": (250, 250, 250), "orange": (0, 140, 255),
             "pink": (200, 120, 240), "gray": (150, 150, 150)}


def measure_template(image: np.ndarray):
    raise TtrError("template measuring is not built yet")


def draw_measurement(image, result):
    raise TtrError("template measuring is not built yet")


def draw_template(image: np.ndarray, template: Template, labels: bool = True) -> np.ndarray:
    """A copy of `image` (a flattened board) with every space outline, city dot and score cell drawn."""
    import cv2

    h, w = image.shape[:2]
    t = template.for_image(w, h)
    out = image.copy()
    shift = 4  # sub-pixel drawing
    f = 1 << shift
    for track in t.tracks:
        colour = TRACK_BGR[track.color]
        for quad in track.spaces:
            pts = np.round(quad * f).astype(np.int32)
            cv2.polylines(out, [pts], True, (0, 0, 0), 3, cv2.LINE_AA, shift)
            cv2.polylines(out, [pts], True, colour, 1, cv2.LINE_AA, shift)
        if labels:
            c = track.centers()[len(track.spaces) // 2]
            cv2.putText(out, str(track.id), (int(c[0]) - 6, int(c[1]) + 4), cv2.FONT_HERSHEY_SIMPLEX,
                        0.35, (255, 255, 255), 2, cv2.LINE_AA)
            cv2.putText(out, str(track.id), (int(c[0]) - 6, int(c[1]) + 4), cv2.FONT_HERSHEY_SIMPLEX,
                        0.35, (0, 0, 160), 1, cv2.LINE_AA)
    r = max(2, int(round(4 * t.scale_xy[0])))
    for name, c in t.cities.items():
        cv2.circle(out, (int(round(c[0] * f)), int(round(c[1] * f))), r * f, (255, 0, 255), 1, cv2.LINE_AA, shift)
    for i, c in enumerate(t.score_cells):
        p = (int(round(c[0] * f)), int(round(c[1] * f)))
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), (0, 255, 255), cv2.MARKER_CROSS, 6, 1)
        if labels and i % 5 == 0:
            cv2.putText(out, str(i), (int(c[0]) + 3, int(c[1]) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                        (0, 255, 255), 1, cv2.LINE_AA)
        del p
    return out
