"""Annotators: draw a reading (or a longest path) on the flattened board, for people to check.

Drawing is kept apart from reading: these take a flattened board (BGR uint8, template frame) and
return a new annotated image; they change nothing else.
"""
from __future__ import annotations

import cv2
import numpy as np

from calibration.template import load_template
from scoring.board import load_board
from vision.palette import DOUBT_BGR, OUTLINE_BGR, OWNER_BGR  # the one palette of ttr's drawings
from vision.reading import Reading


def _track_quads_px(px_per_mm: float):
    t = load_template()
    return [tr.spaces * px_per_mm for tr in t.tracks], {k: v * px_per_mm for k, v in t.cities.items()}


def draw_reading(flattened: np.ndarray, reading: Reading, thickness: int = 3) -> np.ndarray:
    """Each claimed track outlined in its owner's colour, doubtful tracks marked with a magenta '?'."""
    out = flattened.copy()
    quads, _ = _track_quads_px(reading.px_per_mm)
    if reading.space_quads_px is not None:  # where the reader found the spaces on this board
        bounds = np.cumsum([0] + [t.length for t in load_template().tracks])
        quads = [reading.space_quads_px[bounds[i]:bounds[i + 1]] for i in range(len(bounds) - 1)]
    for t in reading.tracks:
        q = quads[t.track_id]
        if t.owner:
            colour = OWNER_BGR.get(t.owner, (128, 128, 128))
            outline = OUTLINE_BGR.get(t.owner, (255, 255, 255))
            for s in q:
                pts = np.round(s).astype(np.int32).reshape(-1, 1, 2)
                cv2.polylines(out, [pts], True, outline, thickness + 2, cv2.LINE_AA)
                cv2.polylines(out, [pts], True, colour, thickness, cv2.LINE_AA)
        if t.doubtful:
            c = q.reshape(-1, 2).mean(axis=0)
            for s in q:
                cv2.polylines(out, [np.round(s).astype(np.int32).reshape(-1, 1, 2)], True, DOUBT_BGR, 1,
                              cv2.LINE_AA)
            org = (int(c[0]) - 8, int(c[1]) + 10)
            cv2.putText(out, "?", org, cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 5, cv2.LINE_AA)
            cv2.putText(out, "?", org, cv2.FONT_HERSHEY_SIMPLEX, 1.0, DOUBT_BGR, 2, cv2.LINE_AA)
    return out


def draw_path(flattened: np.ndarray, path, colour=(0, 0, 255), px_per_mm: float | None = None,
              thickness: int = 6) -> np.ndarray:
    """A route drawn as a thick line through its tracks' spaces.

    `path`: a sequence of city names (consecutive cities joined by a track) or of track ids.
    `px_per_mm` defaults to the image width / 795 mm.
    """
    board = load_board()
    px_per_mm = px_per_mm or flattened.shape[1] / board.board_mm[0]
    quads, cities = _track_quads_px(px_per_mm)
    path = list(path)
    if path and isinstance(path[0], str):
        ids = []
        for a, b in zip(path, path[1:]):
            between = board.tracks_between(a, b)
            if not between:
                raise ValueError(f"no track between {a} and {b}")
            ids.append(between[0].id)
    else:
        ids = [int(i) for i in path]
    out = flattened.copy()
    for tid in ids:
        t = board.tracks[tid]
        pts = [cities[t.a]] + [s.mean(axis=0) for s in quads[tid]] + [cities[t.b]]
        pts = np.round(np.array(pts)).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(out, [pts], False, (0, 0, 0), thickness + 4, cv2.LINE_AA)
        cv2.polylines(out, [pts], False, tuple(int(c) for c in colour), thickness, cv2.LINE_AA)
    return out


def draw_legend(image: np.ndarray, reading: Reading) -> np.ndarray:
    """A legend where it covers the least of the map (`legend_place`; in one column or two,
    whichever fits better): each player's colour with tracks and trains read, and the doubtful
    mark, so an overlay explains itself."""
    board = load_board()
    claims = reading.claims()
    rows = [(OWNER_BGR.get(c, (128, 128, 128)), OUTLINE_BGR.get(c, (255, 255, 255)),
             f"{c}: {len(ids)} tracks, {sum(board.tracks[i].length for i in ids)} trains")
            for c, ids in sorted(claims.items(), key=lambda kv: list(OWNER_BGR).index(kv[0])
                                 if kv[0] in OWNER_BGR else 9)]
    n_doubt = len(reading.doubtful)
    rows.append((None, None, f"doubtful: {n_doubt} track{'s' if n_doubt != 1 else ''}, check them"))
    out = image.copy()
    scale = max(0.5, image.shape[1] / 2200)
    font, thick = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(2 * scale))
    line, pad = round(34 * scale), round(14 * scale)
    column = max(cv2.getTextSize(text, font, scale, thick)[0][0] for _, _, text in rows) + round(60 * scale)
    layouts = [(n, -(-len(rows) // n)) for n in (1, 2)]  # (columns, rows in each)
    n, (x0, y0) = legend_place(image.shape[1], image.shape[0],
                               [(column * cols, line * per + pad) for cols, per in layouts])
    cols, per = layouts[n]
    panel = out[y0:y0 + line * per + pad, x0:x0 + column * cols]
    panel[:] = (0.25 * panel + 0.75 * 255).astype(np.uint8)  # a pale box, the board faint behind
    for k, (fill, edge, text) in enumerate(rows):
        cy = y0 + round(8 * scale) + (k % per) * line + line // 2
        sx = x0 + (k // per) * column + round(10 * scale)
        if fill is None:
            cv2.putText(out, "?", (sx, cy + round(10 * scale)), font, 1.1 * scale, (0, 0, 0), thick + 3, cv2.LINE_AA)
            cv2.putText(out, "?", (sx, cy + round(10 * scale)), font, 1.1 * scale, DOUBT_BGR, thick, cv2.LINE_AA)
        else:
            s = round(11 * scale)
            cv2.rectangle(out, (sx - 1, cy - s - 1), (sx + 2 * s + 1, cy + s + 1), edge, -1)
            cv2.rectangle(out, (sx, cy - s), (sx + 2 * s, cy + s), fill, -1)
        cv2.putText(out, text, (sx + round(36 * scale), cy + round(8 * scale)), font, scale, (20, 20, 20),
                    thick, cv2.LINE_AA)
    return out


def legend_place(width: int, height: int, boxes: list[tuple[int, int]],
                 step_mm: float = 2.0) -> tuple[int, tuple[int, int]]:
    """Which of `boxes` (width, height in pixels of a `width` x `height` flattened board) covers
    the least of the map, and where: track spaces, city dots and score cells, each with a
    margin. Returns (the box's index, its top-left corner); among equals the smaller box, then
    the place nearest the board's top-left."""
    tpl = load_template()
    mm_w, mm_h = tpl.board_mm
    cols, rows = int(np.ceil(mm_w / step_mm)), int(np.ceil(mm_h / step_mm))
    taken = np.zeros((rows, cols), np.uint8)
    margin = 3.0 / step_mm  # mm around what is printed, in cells
    for quad in tpl.all_spaces().quads / step_mm:
        centre = quad.mean(axis=0)
        out = quad - centre
        grown = centre + out * (1 + margin / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-6))
        cv2.fillPoly(taken, [np.round(grown).astype(np.int32)], 1)
    for xy in list(tpl.cities.values()) + list(tpl.score_cells):
        cv2.circle(taken, tuple(int(v) for v in np.round(np.asarray(xy) / step_mm)), round(12 / step_mm), 1, -1)
    summed = cv2.integral(taken)  # (rows + 1, cols + 1)
    sx, sy = width / mm_w * step_mm, height / mm_h * step_mm  # pixels per cell
    best = None
    for n, (w, h) in enumerate(boxes):
        bw, bh = min(cols, int(np.ceil(w / sx))), min(rows, int(np.ceil(h / sy)))
        covered = summed[bh:, bw:] - summed[:-bh, bw:] - summed[bh:, :-bw] + summed[:-bh, :-bw]
        ys, xs = np.mgrid[0:covered.shape[0], 0:covered.shape[1]]
        at = np.lexsort(((xs + ys).ravel(), covered.ravel()))[0]
        y, x = np.unravel_index(at, covered.shape)
        key = (int(covered[y, x]), w * h)
        if best is None or key < best[0]:
            best = (key, n, (min(round(x * sx), max(0, width - w)), min(round(y * sy), max(0, height - h))))
    return best[1], best[2]
