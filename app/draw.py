"""Annotators for the page: the board with each track in its owner's colour, and longest paths.

Drawing only, apart from computing (the reader and the scorer decide; these show). Each function
takes a BGR uint8 scene in the template frame (a flattened photo, or `board_canvas()`) and returns
a new BGR image; track geometry comes from `calibration.template` scaled to the scene's size.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import cv2
import numpy as np

from calibration.template import Template, load_template
from vision.draw import draw_path
from vision.palette import DOUBT_BGR, OUTLINE_BGR, OWNER_BGR, PAPER_BGR, PRINT_BGR, SELECT_BGR


def _template_for(scene: np.ndarray) -> Template:
    h, w = scene.shape[:2]
    return load_template().for_image(w, h)


def _px(a: np.ndarray) -> np.ndarray:
    return np.round(a).astype(np.int32)


def board_canvas(width: int = 1200) -> np.ndarray:
    """A plain drawing of the board (printed spaces, cities) for a game entered without a photo."""
    tpl_mm = load_template()
    height = round(width * tpl_mm.board_mm[1] / tpl_mm.board_mm[0])
    scene = np.full((height, width, 3), PAPER_BGR, np.uint8)
    tpl = tpl_mm.for_image(width, height)
    border = max(2, width // 60)
    cv2.rectangle(scene, (0, 0), (width - 1, height - 1), (60, 75, 140), border)
    background = np.array(PAPER_BGR, float)
    for track in tpl.tracks:
        # Printed colours faded, so that the player colours drawn later stand out.
        pale = tuple(int(v) for v in 0.45 * np.array(PRINT_BGR[track.color]) + 0.55 * background)
        for quad in track.spaces:
            cv2.fillPoly(scene, [_px(quad)], pale, cv2.LINE_AA)
            cv2.polylines(scene, [_px(quad)], True, (120, 120, 120), 1, cv2.LINE_AA)
    radius = max(3, width // 150)
    scale = width / 2400
    for name, xy in tpl.cities.items():
        c = tuple(_px(xy))
        cv2.circle(scene, c, radius, (40, 40, 150), -1, cv2.LINE_AA)
        cv2.circle(scene, c, radius, (255, 255, 255), 1, cv2.LINE_AA)
        cv2.putText(scene, name, (c[0] + radius + 2, c[1] - radius), cv2.FONT_HERSHEY_SIMPLEX,
                    scale, (30, 30, 30), max(1, round(2 * scale)), cv2.LINE_AA)
    return scene


def draw_tracks(scene: np.ndarray, owners: Mapping[int, str | None], doubtful: Iterable[int] = (),
                selected: int | None = None, fill: float = 0.72, set_aside: Iterable[int] = ()) -> np.ndarray:
    """Each owned track's spaces in its owner's colour: filled at opacity `fill` (low on a photo,
    so the cars stay visible to compare) inside a bold outline of that colour; doubtful tracks
    ringed in magenta and marked "?", tracks the rules set aside marked "!"; the selected track
    ringed in cyan. Unowned spaces get a faint outline so they can be found and tapped."""
    tpl = _template_for(scene)
    thick = max(1, round(scene.shape[1] / 600))
    tinted = scene.copy()
    for track in tpl.tracks:
        owner = owners.get(track.id)
        for quad in track.spaces:
            if owner:
                cv2.fillPoly(tinted, [_px(quad)], OWNER_BGR[owner], cv2.LINE_AA)
    out = cv2.addWeighted(tinted, fill, scene, 1 - fill, 0)
    for track in tpl.tracks:
        owner = owners.get(track.id)
        for quad in track.spaces:
            if owner:
                cv2.polylines(out, [_px(quad)], True, OUTLINE_BGR[owner], 2 * thick + 2, cv2.LINE_AA)
                cv2.polylines(out, [_px(quad)], True, OWNER_BGR[owner], 2 * thick, cv2.LINE_AA)
            else:
                cv2.polylines(out, [_px(quad)], True, (235, 235, 235), 1, cv2.LINE_AA)
    aside = set(set_aside)
    for tid in set(doubtful) | aside:
        _ring(out, tpl.tracks[tid].spaces, DOUBT_BGR, 2 * thick + 1)
        _badge(out, "!" if tid in aside else "?", tpl.tracks[tid].spaces.mean(axis=(0, 1)), scene.shape[1])
    if selected is not None:
        spaces = tpl.tracks[selected].spaces
        _ring(out, spaces, (0, 0, 0), 6 * thick + 3)
        _ring(out, spaces, SELECT_BGR, 4 * thick + 1)
        owner = owners.get(selected)
        for quad in spaces:  # the ring must not hide whose track it is
            cv2.fillPoly(out, [_px(quad)], OWNER_BGR[owner] if owner else (235, 235, 235), cv2.LINE_AA)
            cv2.polylines(out, [_px(quad)], True, (0, 0, 0), 1, cv2.LINE_AA)
    return out


def draw_paths(scene: np.ndarray, paths: Mapping[str, Sequence[int]]) -> np.ndarray:
    """Each player's path (track ids in travel order, from the score sheet) drawn by
    `vision.draw.draw_path` in the player's colour over a faded board, so the paths stand out."""

    out = cv2.addWeighted(scene, 0.55, np.full_like(scene, 255), 0.45, 0)
    thick = max(4, round(scene.shape[1] / 170))
    for color, track_ids in paths.items():
        out = draw_path(out, track_ids, OWNER_BGR[color], thickness=thick)
    return out


def nearest_track(x: float, y: float, width: int, height: int, max_mm: float = 15.0) -> int | None:
    """The track of the space a point of a `width` x `height` flattened board falls in, or lies
    nearest (None when no space is within `max_mm`). Where spaces touch, the one the point lies
    deepest inside wins."""
    tpl = load_template()
    p = (float(x * tpl.board_mm[0] / width), float(y * tpl.board_mm[1] / height))
    quads, track_ids, _ = tpl.all_spaces()
    # signed distance in mm: positive inside a space, negative outside
    depth = np.array([cv2.pointPolygonTest(q.astype(np.float32), p, True) for q in quads])
    i = int(np.argmax(depth))
    return int(track_ids[i]) if depth[i] >= -max_mm else None


def _ring(out: np.ndarray, spaces: np.ndarray, color, thick: int) -> None:
    """Outline each space from outside, so the fill (the owner's colour) stays visible."""
    for quad in spaces:
        c = quad.mean(axis=0)
        d = quad - c
        grown = c + d * (1 + thick / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1))
        cv2.polylines(out, [_px(grown)], True, color, thick, cv2.LINE_AA)


def _badge(out: np.ndarray, text: str, center: np.ndarray, width: int) -> None:
    """A magenta disc with white text, for a doubtful track."""
    r = max(7, round(width / 85))
    c = tuple(_px(center))
    cv2.circle(out, c, r + 2, (255, 255, 255), -1, cv2.LINE_AA)
    cv2.circle(out, c, r, DOUBT_BGR, -1, cv2.LINE_AA)
    scale = r / 14
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 2)
    cv2.putText(out, text, (c[0] - tw // 2, c[1] + th // 2), cv2.FONT_HERSHEY_DUPLEX, scale,
                (255, 255, 255), 2, cv2.LINE_AA)
