"""Find the score track's cells along the board's red border band."""
from __future__ import annotations

import cv2
import numpy as np

from scoring.board import Board
from vision.measure.spaces import PX_PER_MM


# ----------------------------------------------------------------------------------------------
def find_score_cells(board_bgr: np.ndarray, board: Board) -> tuple[np.ndarray, list[str]]:
    """Centres (100, 2) mm of score cells 0..99. 0 is the round bottom-left corner, 20 top-left,
    50 top-right, 70 bottom-right; 19, 29, 19 and 29 numbered red cells run between them.

    The red cells make a band along each edge: its middle line (from how red each distance from
    the edge is) gives the corners where two bands cross; along each band the cells repeat at one
    pitch, found as the comb of that many teeth that best lands on red and between cells on the
    darker gaps."""
    s = PX_PER_MM
    W, H = (float(v) for v in board.board_mm)
    lab = cv2.cvtColor(cv2.GaussianBlur(board_bgr, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    red = np.clip(lab[..., 1] - 136.0, 0, 20)
    notes: list[str] = []

    def sample(points_mm):
        p = np.round(np.asarray(points_mm) * s).astype(int)
        return red[np.clip(p[..., 1], 0, red.shape[0] - 1), np.clip(p[..., 0], 0, red.shape[1] - 1)]

    depth = np.arange(0.0, 30.0, 0.25)
    # Band middle lines: distance from the left, top, right and bottom edge.
    def band_depth(edge_point, inward, along, length):
        t = np.linspace(0.15 * length, 0.85 * length, 200)
        pts = edge_point + t[:, None, None] * along + depth[None, :, None] * inward
        prof = sample(pts).mean(axis=0)
        half = prof >= prof.max() / 2
        return float((depth[half] * prof[half]).sum() / prof[half].sum())

    left = band_depth(np.array([0, 0]), np.array([1, 0]), np.array([0, 1]), H)
    top = band_depth(np.array([0, 0]), np.array([0, 1]), np.array([1, 0]), W)
    right = band_depth(np.array([W, 0]), np.array([-1, 0]), np.array([0, 1]), H)
    bottom = band_depth(np.array([0, H]), np.array([0, -1]), np.array([1, 0]), W)
    cells = np.full((100, 2), np.nan)
    cells[0] = (left, H - bottom)
    cells[20] = (left, top)
    cells[50] = (W - right, top)
    cells[70] = (W - right, H - bottom)
    for first, count, c0, c1 in ((1, 19, 0, 20), (21, 29, 20, 50), (51, 19, 50, 70), (71, 29, 70, 0)):
        a, z = cells[c0], cells[c1]
        span = float(np.hypot(*(z - a)))
        u = (z - a) / span
        nrm = np.array([-u[1], u[0]])
        t = np.arange(0, span, 0.25)
        prof = np.mean([sample(a + t[:, None] * u + off * nrm) for off in np.linspace(-4, 4, 9)], axis=0)
        prof = np.convolve(prof, np.ones(9) / 9, mode="same")
        best = None
        pitch0 = span / (count + 1.6)
        for pitch in np.arange(0.85 * pitch0, 1.15 * pitch0, 0.05):
            lo, hi = 0.6 * pitch, span - 0.6 * pitch - (count - 1) * pitch
            for t0 in np.arange(lo, hi, 0.25):
                teeth = t0 + pitch * np.arange(count)
                gaps = teeth[:-1] + pitch / 2
                score = np.interp(teeth, t, prof).mean() - np.interp(gaps, t, prof).mean()
                if best is None or score > best[0]:
                    best = (score, t0, pitch)
        if best is None:
            notes.append(f"score cells {first}..{first + count - 1}: no fit, spaced evenly between the corners")
            teeth = span * np.arange(1, count + 1) / (count + 1)
        else:
            teeth = best[1] + best[2] * np.arange(count)
        cells[first:first + count] = a + teeth[:, None] * u
    return cells, notes
