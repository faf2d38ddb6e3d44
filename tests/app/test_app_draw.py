"""The page's pictures (`app.draw`): the track being checked left as photographed, one mark per
track to check that never covers its twin's, views cut where they say."""
from __future__ import annotations

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from app.draw import _badge_radius, board_canvas, cut, draw_tracks, mark_position, track_photo_window, track_window
from calibration.template import load_template
from scoring.board import load_board

BOARD = load_board()
TPL = load_template()
DOUBLES = [(t.id, BOARD.double_of(t).id) for t in BOARD.tracks if BOARD.double_of(t) and t.id < BOARD.double_of(t).id]


def inside(track_id: int, width: int, height: int) -> np.ndarray:
    """The pixels well inside a track's spaces (a few pixels in from their edges)."""
    mask = np.zeros((height, width), np.uint8)
    for quad in TPL.for_image(width, height).tracks[track_id].spaces:
        cv2.fillPoly(mask, [np.round(quad).astype(np.int32)], 1)
    return cv2.erode(mask, np.ones((5, 5), np.uint8)).astype(bool)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(range(len(BOARD.tracks))), st.sampled_from(["red", "blue", "yellow", None]))
def test_the_track_being_checked_is_left_as_photographed(track_id, owner):
    rng = np.random.default_rng(track_id)
    scene = rng.integers(0, 256, (700, 1060, 3), dtype=np.uint8)  # a "photo": noise, so any paint shows
    twin = BOARD.double_of(BOARD.tracks[track_id])
    # (owners away from it: a neighbour's outline may reach a pixel or two into it)
    owners = {track_id: owner} | {t.id: "green" for t in BOARD.tracks if t.id % 3 == 0 and t.id != track_id
                                  and not {t.a, t.b} & {BOARD.tracks[track_id].a, BOARD.tracks[track_id].b}}
    drawn = draw_tracks(scene, owners, to_check=[track_id], selected=track_id, fill=0.5)
    middle = inside(track_id, 1060, 700)
    assert np.array_equal(drawn[middle], scene[middle])
    # ... while the same track, not selected, is painted (as its twin is, when it is to check)
    drawn = draw_tracks(scene, owners | ({twin.id: "red"} if twin else {}), to_check=[track_id] + (
        [twin.id] if twin else []))
    if owner:
        assert not np.array_equal(drawn[middle], scene[middle])
    if twin:
        assert not np.array_equal(drawn[inside(twin.id, 1060, 700)], scene[inside(twin.id, 1060, 700)])


def test_the_marks_of_a_doubles_two_tracks_lie_apart():
    width, height = 1400, 924
    r = _badge_radius(width)
    for a, b in DOUBLES:
        pa, pb = mark_position(a, width, height), mark_position(b, width, height)
        assert np.linalg.norm(pa - pb) >= 2 * r, (BOARD.tracks[a], np.linalg.norm(pa - pb))


def test_a_view_holds_its_track_and_a_cut_is_that_part_of_the_board():
    scene = board_canvas(1590)
    for t in TPL.tracks:
        x0, y0, x1, y1 = track_window(t.id)
        corners = t.spaces.reshape(-1, 2)
        assert x0 <= corners[:, 0].min() and corners[:, 0].max() <= x1
        assert y0 <= corners[:, 1].min() and corners[:, 1].max() <= y1
        assert abs((x1 - x0) / (y1 - y0) - 4 / 3) < 1e-6 and x1 - x0 > 200 - 1e-6
        px0, py0, px1, py1 = track_photo_window(t.id)
        part = cut(scene, (px0, py0, px1, py1))
        sx = scene.shape[1] / TPL.board_mm[0]
        assert abs(part.shape[1] - (px1 - px0) * sx) <= 1 and abs(part.shape[0] - (py1 - py0) * sx) <= 1
        assert np.array_equal(part, scene[round(py0 * sx):round(py1 * sx), round(px0 * sx):round(px1 * sx)])
