"""Annotators for the page: the board with each track in its owner's colour, and longest paths.

Drawing only, apart from computing (the reader and the scorer decide; these show). Each function
takes a BGR uint8 scene in the template frame (a flattened photo, or `board_canvas()`) and returns
a new BGR image; track geometry comes from `calibration.template` scaled to the scene's size.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from calibration.template import Template, load_template
from scoring.board import load_board
from vision.draw import draw_path
from vision.palette import DOUBT_BGR, OUTLINE_BGR, OWNER_BGR, PAPER_BGR, PRINT_BGR, SELECT_BGR

PAPER_RGB = tuple(reversed(PAPER_BGR))


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


def draw_tracks(scene: np.ndarray, owners: Mapping[int, str | None], to_check: Iterable[int] = (),
                selected: int | None = None, fill: float = 0.72) -> np.ndarray:
    """Each owned track's spaces in its owner's colour: filled at opacity `fill` (low on a photo,
    so the cars stay visible to compare) inside a bold outline of that colour; the tracks to check
    (doubtful, or set aside by the rules) ringed in magenta with one "?" mark each, beside the
    track away from its twin on a double so two marks never overlap; the selected track left
    unpainted (what is on it is what is being checked), ringed in cyan. Unowned spaces get a faint
    outline so they can be found and tapped."""
    tpl = _template_for(scene)
    thick = max(1, round(scene.shape[1] / 600))
    tinted = scene.copy()
    painted = [t for t in tpl.tracks if owners.get(t.id) and t.id != selected]
    for track in painted:
        for quad in track.spaces:
            cv2.fillPoly(tinted, [_px(quad)], OWNER_BGR[owners[track.id]], cv2.LINE_AA)
    out = cv2.addWeighted(tinted, fill, scene, 1 - fill, 0)
    for track in tpl.tracks:
        owner = owners.get(track.id)
        for quad in track.spaces:
            if owner and track.id != selected:
                cv2.polylines(out, [_px(quad)], True, OUTLINE_BGR[owner], 2 * thick + 2, cv2.LINE_AA)
                cv2.polylines(out, [_px(quad)], True, OWNER_BGR[owner], 2 * thick, cv2.LINE_AA)
            elif track.id != selected:
                cv2.polylines(out, [_px(quad)], True, (235, 235, 235), 1, cv2.LINE_AA)
    marked = set(to_check) - {selected}  # (the selected track's cars stay in sight: its reason is beside it)
    for tid in marked:
        _ring(out, tpl.tracks[tid].spaces, DOUBT_BGR, 2 * thick + 1)
    if selected is not None:  # a thin ring clear of the cars, which overhang their spaces a little
        mm = scene.shape[1] / tpl.board_mm[0]
        ring, gap = max(2, round(1.2 * mm)), round(3 * mm)
        _ring(out, tpl.tracks[selected].spaces, (0, 0, 0), ring + 2, gap=gap - 1)
        _ring(out, tpl.tracks[selected].spaces, SELECT_BGR, ring, gap=gap)
    for tid in marked:
        _badge(out, "?", mark_position(tid, scene.shape[1], scene.shape[0]), scene.shape[1])
    return out


def mark_position(track_id: int, width: int, height: int) -> np.ndarray:
    """Where a track's "?" goes on a `width` x `height` board: its middle space, pushed away from
    its twin on a double (where two marks would lie on top of each other)."""
    tpl = load_template().for_image(width, height)
    board = load_board()
    centers = tpl.tracks[track_id].centers()
    at = centers[len(centers) // 2]
    twin = board.double_of(board.tracks[track_id])
    if twin is not None:
        away = centers.mean(axis=0) - tpl.tracks[twin.id].centers().mean(axis=0)
        at = at + away / max(np.linalg.norm(away), 1e-6) * _badge_radius(width) * 1.1
    return at


def track_window(track_id: int, aspect: float = 4 / 3, least_mm: float = 200.0) -> tuple[float, ...]:
    """A view of the board around a track, in mm (x0, y0, x1, y1): the track with a margin, at
    least `least_mm` wide, `aspect` wide to high, kept on the board."""
    tpl = load_template()
    corners = tpl.tracks[track_id].spaces.reshape(-1, 2)
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    w = max(least_mm, (x1 - x0) + 40, ((y1 - y0) + 40) * aspect)
    h = w / aspect
    board_w, board_h = tpl.board_mm
    w, h = min(w, board_w), min(h, board_h)
    cx = min(max((x0 + x1) / 2, w / 2), board_w - w / 2)
    cy = min(max((y0 + y1) / 2, h / 2), board_h - h / 2)
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def track_photo_window(track_id: int, margin_mm: float = 12.0) -> tuple[float, ...]:
    """The track alone, with a margin, in mm (x0, y0, x1, y1): what the page shows of the photo
    as taken beside the reading."""
    tpl = load_template()
    corners = tpl.tracks[track_id].spaces.reshape(-1, 2)
    (x0, y0), (x1, y1) = corners.min(axis=0) - margin_mm, corners.max(axis=0) + margin_mm
    board_w, board_h = tpl.board_mm
    return (max(0.0, x0), max(0.0, y0), min(board_w, x1), min(board_h, y1))


def cut(scene: np.ndarray, window_mm: Sequence[float]) -> np.ndarray:
    """The part of a flattened board (any size, the template frame) inside a window in mm."""
    board_w, board_h = load_template().board_mm
    sx, sy = scene.shape[1] / board_w, scene.shape[0] / board_h
    x0, y0, x1, y1 = window_mm
    return scene[round(y0 * sy):round(y1 * sy), round(x0 * sx):round(x1 * sx)]


def draw_paths(scene: np.ndarray, paths: Mapping[str, Sequence[int]]) -> np.ndarray:
    """Each player's path (track ids in travel order, from the score sheet) drawn by
    `vision.draw.draw_path` in the player's colour over a faded board, so the paths stand out."""

    out = cv2.addWeighted(scene, 0.55, np.full_like(scene, 255), 0.45, 0)
    thick = max(4, round(scene.shape[1] / 170))
    for color, track_ids in paths.items():
        out = draw_path(out, track_ids, OWNER_BGR[color], thickness=thick)
    return out


def draw_results(board: np.ndarray, rows: Sequence[tuple[str, str, str]], title: str) -> np.ndarray:
    """The results picture to share: a band with `title` and the ranking (`rows`: colour, the
    place and name, the total; from `app.state.share_rows`) above `board` (the board as drawn for
    the results: each player's network, the longest paths). BGR, as wide as `board`."""
    width = board.shape[1]
    size = max(18, round(width / 48))
    line = round(size * 1.6)
    band = Image.new("RGB", (width, line * (len(rows) + 1) + size), PAPER_RGB)
    pen = ImageDraw.Draw(band)
    bold, plain = _font(size, bold=True), _font(size)
    pen.text((size, size // 2), title, font=bold, fill=(40, 40, 40))
    for n, (color, name, total) in enumerate(rows, 1):
        y = size // 2 + n * line
        r = size // 2
        pen.ellipse((size, y + size // 2 - r + 2, size + 2 * r, y + size // 2 + r + 2),
                    fill=tuple(reversed(OWNER_BGR[color])), outline=(90, 90, 90))
        pen.text((size + 3 * r, y), name, font=plain, fill=(30, 30, 30))
        pen.text((width - size, y), total, font=bold, fill=(30, 30, 30), anchor="ra")
    return np.vstack([np.asarray(band)[:, :, ::-1], board])


FONTS = ("DejaVuSans{}.ttf", "Arial{}.ttf", "LiberationSans-{}.ttf", "Helvetica.ttc", "segoeui{}.ttf")


def _font(size: int, bold: bool = False):
    """A system font that has the accents of players' names (the first found), else Pillow's own."""
    for name in FONTS:
        for style in (("-Bold", " Bold", "Bold", "b") if bold else ("", "-Regular", "")):
            try:
                return ImageFont.truetype(name.format(style), size)
            except OSError:
                continue
    return ImageFont.load_default(size)


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


def _ring(out: np.ndarray, spaces: np.ndarray, color, thick: int, gap: int = 0) -> None:
    """One outline around a track's spaces, `gap` pixels clear of them all round (so it never
    crosses a car, nor runs between two of them)."""
    reach = gap + (thick + 1) // 2 + 1
    x0, y0 = np.floor(spaces.reshape(-1, 2).min(axis=0)).astype(int) - reach - thick
    x1, y1 = np.ceil(spaces.reshape(-1, 2).max(axis=0)).astype(int) + reach + thick
    h, w = out.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for quad in spaces:
        cv2.fillPoly(mask, [_px(quad - (x0, y0))], 255)
    grown = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1)))
    contours, _ = cv2.findContours(grown, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(out[y0:y1, x0:x1], contours, -1, color, thick, cv2.LINE_AA)


def _badge_radius(width: int) -> int:
    return max(7, round(width / 85))


def _badge(out: np.ndarray, text: str, center: np.ndarray, width: int) -> None:
    """A magenta disc with white text: a track to check."""
    r = _badge_radius(width)
    c = tuple(_px(center))
    cv2.circle(out, c, r + 2, (255, 255, 255), -1, cv2.LINE_AA)
    cv2.circle(out, c, r, DOUBT_BGR, -1, cv2.LINE_AA)
    scale = r / 14
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 2)
    cv2.putText(out, text, (c[0] - tw // 2, c[1] + th // 2), cv2.FONT_HERSHEY_DUPLEX, scale,
                (255, 255, 255), 2, cv2.LINE_AA)
