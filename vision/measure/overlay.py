"""Check a template against a photo's printed rectangles, and draw a template or a measurement."""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.template import Template
from vision.measure import MeasuredTemplate
from vision.measure.placement import _quad
from vision.measure.spaces import _board_image, find_space_candidates
from vision.palette import TEMPLATE_BGR


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Alignment:
    """How far each template space lies from a printed rectangle detected in a photo."""

    offset_mm: np.ndarray  # (309,) centre distance to the matched detection, NaN where none matched
    turn_deg: np.ndarray  # (309,) angle between the two long axes, NaN where none matched
    track_ids: np.ndarray  # (309,)

    def summary(self) -> str:
        ok = ~np.isnan(self.offset_mm)
        if not ok.any():
            return "no template space matched a detected printed rectangle"
        o, t = self.offset_mm[ok], self.turn_deg[ok]
        return (f"{ok.sum()} of {len(ok)} spaces matched a detected printed rectangle: centre offset "
                f"median {np.median(o):.2f} mm, 95th percentile {np.percentile(o, 95):.2f} mm, "
                f"max {o.max():.2f} mm; angle median {np.median(t):.1f} deg, max {t.max():.1f} deg")


def check_alignment(image: np.ndarray, template: Template, match_mm: float = 6.0) -> Alignment:
    """Compare a template with the printed rectangles detected in a flattened photo (spaces under
    trains are not detected and stay unmatched). A detection matches a space when its centre is
    within `match_mm` and its long axis within 15 degrees; among the detectors, one that finds the
    whole coloured face is preferred, else the nearest."""
    img = _board_image(image)
    cand = find_space_candidates(img)
    quads, track_ids, _ = template.all_spaces()
    centers = quads.mean(axis=1)
    axes = quads[:, 1] - quads[:, 0]
    axes = axes / np.hypot(axes[:, 0], axes[:, 1])[:, None]
    offset = np.full(len(quads), np.nan)
    turn = np.full(len(quads), np.nan)
    for i, (c, u) in enumerate(zip(centers, axes)):
        d = np.hypot(*(cand.centers - c).T)
        cos = np.abs(cand.axes @ u)
        ok = (d <= match_mm) & (cos >= np.cos(np.deg2rad(15)))
        if not ok.any():
            continue
        pick = np.nonzero(ok & cand.by_colour)[0] if (ok & cand.by_colour).any() else np.nonzero(ok)[0]
        j = pick[np.argmin(d[pick])]
        offset[i] = d[j]
        turn[i] = np.degrees(np.arccos(np.clip(cos[j], -1, 1)))
    return Alignment(offset, turn, track_ids)


def draw_template(image: np.ndarray, template: Template, labels: bool = True) -> np.ndarray:
    """A copy of `image` (a flattened board) with every space outline, city dot and score cell drawn."""
    h, w = image.shape[:2]
    t = template.for_image(w, h)
    out = image.copy()
    shift = 4  # sub-pixel drawing
    f = 1 << shift
    for track in t.tracks:
        colour = TEMPLATE_BGR[track.color]
        for quad in track.spaces:
            pts = np.round(quad * f).astype(np.int32)
            cv2.polylines(out, [pts], True, (0, 0, 0), 2, cv2.LINE_AA, shift)
            cv2.polylines(out, [pts], True, colour, 1, cv2.LINE_AA, shift)
        if labels:
            c = track.centers()[len(track.spaces) // 2]
            org = (int(c[0]) - 6, int(c[1]) + 4)
            cv2.putText(out, str(track.id), org, cv2.FONT_HERSHEY_SIMPLEX, 0.35, (255, 255, 255), 2, cv2.LINE_AA)
            cv2.putText(out, str(track.id), org, cv2.FONT_HERSHEY_SIMPLEX, 0.35, (0, 0, 160), 1, cv2.LINE_AA)
    r = max(2, int(round(4.5 * t.scale_xy[0])))
    for c in t.cities.values():
        cv2.circle(out, (int(round(c[0] * f)), int(round(c[1] * f))), r * f, (255, 0, 255), 1, cv2.LINE_AA, shift)
    for i, c in enumerate(t.score_cells):
        cv2.drawMarker(out, (int(round(c[0])), int(round(c[1]))), (0, 255, 255), cv2.MARKER_CROSS, 7, 1)
        if labels and i % 5 == 0:
            cv2.putText(out, str(i), (int(c[0]) + 3, int(c[1]) - 3), cv2.FONT_HERSHEY_SIMPLEX, 0.3,
                        (0, 255, 255), 1, cv2.LINE_AA)
    return out


def draw_measurement(image: np.ndarray, result: MeasuredTemplate) -> np.ndarray:
    """The template over the photo, plus every candidate rectangle (thin cyan) and placed spaces (red)."""
    out = draw_template(image, result.template)
    h, w = image.shape[:2]
    sx, sy = w / result.template.board_mm[0], h / result.template.board_mm[1]
    sc = np.array([sx, sy])
    for c, u, (lo, sh) in zip(result.candidates.centers, result.candidates.axes, result.candidates.sizes):
        q = _quad(c, u, lo, sh) * sc
        cv2.polylines(out, [np.round(q).astype(np.int32)], True, (255, 255, 0), 1)
    for tid, k in result.guessed:
        q = result.template.tracks[tid].spaces[k] * sc
        cv2.polylines(out, [np.round(q).astype(np.int32)], True, (0, 0, 255), 2)
    return out
