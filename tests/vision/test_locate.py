"""Board locating and flattening on synthetic photos drawn here (no real photos needed).

A simple stand-in board (795 x 525 mm: red-brown score-track band with lighter cells, light corner
medallions, a pale map with coloured bars and copper city dots at the real cities' places) is
warped into a photo by a random but seeded homography over wood, dark floor or cloth.
"""
from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ttr_testing import corner_error_pct

from scoring.board import load_board
from vision.locate import BoardCutOff, BoardNotFound, locate_board, scale_location
from vision.locate.outline import BAND_MM
from vision.rectify import (
    BOARD_MM,
    board_to_photo_homography,
    flatten,
    flattened_size,
    flattened_to_photo_homography,
    to_board,
    to_photo,
)

PPM = 1.0  # the stand-in board is drawn at 1 px/mm


def draw_board(rng: np.random.Generator) -> np.ndarray:
    """The stand-in board, BGR, (525, 795) at 1 px/mm, board's own top-left at (0, 0)."""
    w, h = int(BOARD_MM[0] * PPM), int(BOARD_MM[1] * PPM)
    b = int(round(load_board().score_track_mm * PPM))  # the score-track band
    board = np.empty((h, w, 3), np.float32)
    board[:] = (200, 196, 188)  # pale grey-blue map
    ring = np.zeros((h, w), bool)
    ring[:b, :] = ring[-b:, :] = True
    ring[:, :b] = ring[:, -b:] = True
    board[ring] = (38, 48, 112)  # red-brown
    board = np.clip(board + rng.normal(0, 7, board.shape), 0, 255).astype(np.uint8)
    for _ in range(9000):  # relief hatching: fine detail, as printed
        p = rng.uniform([b, b], [w - b, h - b]).astype(int)
        cv2.line(board, (int(p[0]), int(p[1])), (int(p[0]) + 3, int(p[1]) + 1), (165, 165, 160), 1)
    for _ in range(40):  # map lines (borders, rivers)
        p = rng.uniform([30, 30], [w - 30, h - 30], (2, 2)).astype(int)
        cv2.line(board, tuple(map(int, p[0])), tuple(map(int, p[1])), (150, 150, 150), 1)
    colours = [(40, 40, 200), (200, 90, 30), (60, 160, 60), (40, 200, 230), (40, 40, 40), (160, 160, 160)]
    for _ in range(60):  # coloured track bars / cars
        c = rng.uniform([60, 60], [w - 60, h - 60])
        box = cv2.boxPoints(((float(c[0]), float(c[1])), (float(rng.uniform(40, 140)), 9.0), float(rng.uniform(0, 180))))
        col = colours[rng.integers(len(colours))]
        cv2.fillPoly(board, [box.astype(np.int32)], tuple(int(v) for v in col))
    for x in np.arange(b, w - b, 26 * PPM):  # score cells: thin gold separators and pale numbers
        x = int(x)
        for y0, y1 in ((0, b), (h - b, h)):
            cv2.line(board, (x, y0), (x, y1 - 1), (60, 150, 190), 1)
            cv2.putText(board, str(int(rng.integers(10, 99))), (x + 4, y0 + b - 7), cv2.FONT_HERSHEY_PLAIN,
                        0.8, (215, 225, 230), 1)
    for y in np.arange(b, h - b, 26 * PPM):
        y = int(y)
        for x0, x1 in ((0, b), (w - b, w)):
            cv2.line(board, (x0, y), (x1 - 1, y), (60, 150, 190), 1)
    for cx, cy in ((b // 2, b // 2), (w - b // 2 - 1, b // 2), (w - b // 2 - 1, h - b // 2 - 1), (b // 2, h - b // 2 - 1)):
        cv2.circle(board, (cx, cy), int(b * 0.48), (215, 205, 190), -1)  # light corner medallions
    for city in load_board().cities.values():
        c = (int(round(city.x * w)), int(round(city.y * h)))
        cv2.circle(board, c, int(round(3.2 * PPM)), (40, 40, 70), -1)
        cv2.circle(board, c, int(round(2.4 * PPM)), (50, 95, 205), -1)  # copper dot
    return board


def background(rng: np.random.Generator, size_wh, kind: str) -> np.ndarray:
    w, h = size_wh
    if kind == "wood":
        base = np.array((130, 175, 215), np.float32)
        stripes = np.sin(np.linspace(0, rng.uniform(20, 60), h))[:, None, None] * 12
        img = base + stripes + rng.normal(0, 5, (h, w, 3))
    elif kind == "cherry":  # as red-brown as the score track itself
        base = np.array((45, 60, 125), np.float32)
        stripes = np.sin(np.linspace(0, rng.uniform(20, 60), h))[:, None, None] * 10
        img = base + stripes + rng.normal(0, 6, (h, w, 3))
    elif kind == "dark":
        img = np.array((30, 32, 34), np.float32) + rng.normal(0, 8, (h, w, 3))
    else:  # cloth
        img = np.array((120, 130, 90), np.float32) + rng.normal(0, 12, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def board_corners_in_photo(rng, size_wh, turn_deg: float, fill: float, keystone: float) -> np.ndarray:
    """Photo positions of the board's TL, TR, BR, BL: turned, scaled, with some perspective."""
    w, h = size_wh
    rect = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float) * np.array(BOARD_MM) / 2
    a = np.radians(turn_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    pts = rect @ rot.T
    ext = pts.max(0) - pts.min(0)
    s = fill * min(w / ext[0], h / ext[1])
    pts = pts * s
    pts += rng.normal(0, keystone * s * BOARD_MM[1], pts.shape)  # perspective-like corner moves
    lo, hi = pts.min(0), pts.max(0)
    centre = np.array([w / 2, h / 2]) + rng.uniform(-1, 1, 2) * np.maximum(0, (np.array([w, h]) - (hi - lo)) / 2 - 10)
    return pts - (lo + hi) / 2 + centre


def synthetic_photo(seed: int, size_wh=(1200, 900), turn_deg=None, fill=None, kind=None, keystone=0.04,
                    corners=None):
    """(photo BGR, true corners TL, TR, BR, BL)."""
    rng = np.random.default_rng(seed)
    board = draw_board(rng)
    kind = kind or ["wood", "dark", "cloth"][seed % 3]
    bg = background(rng, size_wh, kind)
    if corners is None:
        turn = rng.uniform(0, 360) if turn_deg is None else turn_deg
        corners = board_corners_in_photo(rng, size_wh, turn, fill or rng.uniform(0.55, 0.9), keystone)
    H = flattened_to_photo_homography(corners, PPM)
    warped = cv2.warpPerspective(board, H, size_wh, flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full(board.shape[:2], 255, np.uint8), H, size_wh, flags=cv2.INTER_LINEAR)
    alpha = (mask.astype(np.float32) / 255)[:, :, None]
    photo = warped * alpha + bg * (1 - alpha)
    photo = cv2.GaussianBlur(photo, (0, 0), 0.7) + rng.normal(0, 2.5, photo.shape)
    return np.clip(photo, 0, 255).astype(np.uint8), np.asarray(corners, float)


@pytest.mark.parametrize("seed", range(8))
def test_finds_corners_in_board_order(seed):
    photo, truth = synthetic_photo(seed)
    loc = locate_board(photo)
    assert loc.corners_xy.shape == (4, 2)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    # The board's own top-left comes first, whatever the turn.
    assert np.argmin(np.linalg.norm(truth - loc.corners_xy[0], axis=1)) == 0
    assert 0 <= loc.confidence <= 1


@pytest.mark.parametrize("turn,expected", [(0, 0), (90, 90), (180, 180), (270, 270), (12, 0), (-100, 270)])
def test_orientation_is_the_nearest_quarter_turn(turn, expected):
    photo, truth = synthetic_photo(100 + turn % 360, turn_deg=turn, keystone=0.02)
    loc = locate_board(photo)
    assert loc.orientation == expected
    assert corner_error_pct(loc.corners_xy, truth) < 0.5


def test_portrait_photo_and_strong_perspective():
    photo, truth = synthetic_photo(7, size_wh=(900, 1200), turn_deg=90, keystone=0.07, kind="wood")
    loc = locate_board(photo)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    assert loc.orientation == 90


def test_large_photo_gives_corners_in_its_own_pixels():
    photo, truth = synthetic_photo(3, size_wh=(1200, 900), turn_deg=5)
    big = cv2.resize(photo, (3600, 2700), interpolation=cv2.INTER_LINEAR)
    truth_big = (truth + 0.5) * 3 - 0.5
    loc = locate_board(big)
    assert corner_error_pct(loc.corners_xy, truth_big) < 0.5
    # And scale_location maps a location found on a reduced decode back to the photo.
    small_loc = locate_board(photo)
    assert np.allclose(scale_location(small_loc, 3).corners_xy, (small_loc.corners_xy + 0.5) * 3 - 0.5)


def test_photo_cropped_to_the_board():
    rng = np.random.default_rng(5)
    board = cv2.resize(draw_board(rng), (1500, 990), interpolation=cv2.INTER_LINEAR)
    loc = locate_board(board)
    truth = np.array([[0, 0], [1499, 0], [1499, 989], [0, 989]], float)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    assert loc.orientation == 0


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_board_on_a_table_as_red_brown_as_its_band(seed):
    photo, truth = synthetic_photo(seed, kind="cherry")
    loc = locate_board(photo)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    assert np.argmin(np.linalg.norm(truth - loc.corners_xy[0], axis=1)) == 0


@pytest.mark.parametrize("seed,kind", [(21, "cherry"), (3, "wood"), (5, "cloth")])
def test_the_map_cut_from_the_table_and_stepped_out_is_the_board(seed, kind):
    """`outline.cut_map_quads`: the map parted from the table by the photo's own colours, a band's
    width added all round, is the board (any corner first, either way round), before any refitting;
    `outline.refine_from_map` then fits it on the photo's pixels."""
    from vision.locate import LocateConfig, outline
    from vision.rectify import shrink

    photo, truth = synthetic_photo(seed, kind=kind)
    small, scale = shrink(photo, LocateConfig().work_side)
    quads = [(q + 0.5) / scale - 0.5 for q in outline.cut_map_quads(small)]

    def off(q):
        return min(corner_error_pct(np.roll(c, k, axis=0), truth) for c in (q, q[::-1]) for k in range(4))

    assert quads and min(off(q) for q in quads) < 0.5
    best = min(quads, key=off)
    assert off(outline.refine_from_map(photo, best)) < 0.25


def test_the_map_cut_is_the_same_whatever_was_read_before():
    """GrabCut starts from OpenCV's shared random state, which any earlier call may have moved: the
    same photo must be cut the same way however many photos the process read before it."""
    from vision.locate import LocateConfig, outline
    from vision.rectify import shrink

    photo, _ = synthetic_photo(5, kind="cloth")  # one whose cut the random start does move
    small, _ = shrink(photo, LocateConfig().work_side)
    first = outline.cut_map_quads(small)
    for seed in range(8):
        cv2.setRNGSeed(seed)  # what another photo's reading may leave behind
        again = outline.cut_map_quads(small)
        assert len(again) == len(first) and all(np.array_equal(a, b) for a, b in zip(again, first))


def _with_a_blob_on_the_right_side(photo, truth):
    """`photo` with a disc of the band's own colour (taken half a band in from the middle of the
    board's right side) laid against that side outside the board: glare or a patch of light, a
    red-brown box or cloth touching the board."""
    mid, left = 0.5 * (truth[1] + truth[2]), 0.5 * (truth[0] + truth[3])
    inward = (left - mid) / np.linalg.norm(left - mid)
    width = np.linalg.norm(truth[1] - truth[0])
    at = mid + inward * 0.5 * BAND_MM / BOARD_MM[0] * width
    colour = photo[int(at[1]), int(at[0])].tolist()
    out = photo.copy()
    cv2.circle(out, tuple(int(v) for v in mid - inward * 0.12 * width), int(0.14 * width), colour, -1, cv2.LINE_AA)
    return out


@pytest.mark.parametrize("seed,kind", [(1, "dark"), (2, "cloth")])
def test_a_blob_of_the_bands_colour_touching_the_board_leaves_its_sides_found(seed, kind):
    """`outline.supported_quads`: a blob touching the board grows the band's past the board, yet
    the board's four sides are still followed along their length, so a quad of theirs is the
    board's (any corner first, either way round); and the locator finds it."""
    from vision.locate import LocateConfig, outline
    from vision.rectify import shrink

    photo, truth = synthetic_photo(seed, kind=kind)
    blob = _with_a_blob_on_the_right_side(photo, truth)
    small, scale = shrink(blob, LocateConfig().work_side)
    quads = [(q + 0.5) / scale - 0.5 for q in outline.supported_quads(small)]

    def off(q):
        return min(corner_error_pct(np.roll(c, k, axis=0), truth) for c in (q, q[::-1]) for k in range(4))

    assert quads and min(off(q) for q in quads) < 0.5
    assert corner_error_pct(locate_board(blob).corners_xy, truth) < 0.5


def test_the_layout_takes_a_quad_of_followed_sides_only_where_nothing_before_is_confirmed():
    """Where the dots cannot see the board, the tracks' coarse layout confirms an outline, and its
    score says little of how fine one is (here 0.3 % off scores above the truth, 0.6 % off a little
    below): a quad of followed sides would be taken as readily as a finer outline found before,
    so those found before are asked first, and the quads only where none of them is confirmed."""
    from vision.locate import LocateConfig, _by_layout, _check
    from vision.rectify import photo_px_per_mm, shrink
    from vision.synth.render import render_photo

    cfg = LocateConfig()
    p = render_photo(np.random.default_rng(8), {"red": [0, 5, 9, 40], "blue": [12, 60, 77]}, size_wh=(640, 480))
    truth = np.asarray(p.corners_xy, float)
    assert photo_px_per_mm(truth) < cfg.min_px_per_mm  # too small for the dots
    small, scale = shrink(p.image_bgr, cfg.work_side)
    diag = np.linalg.norm(truth[2] - truth[0])
    off = truth + np.array([[1, 0], [0, 1], [-1, 0], [0, -1]]) * 0.006 * diag
    found = [_check(small, scale, off, "colour", cfg), _check(small, scale, truth, "sides followed", cfg)]
    assert _by_layout(p.image_bgr, found, cfg) is found[1]  # by score alone: the later one
    assert _by_layout(p.image_bgr, found, cfg, last_resort=1) is found[0]
    turned = _check(small, scale, np.roll(off, 2, axis=0), "colour", cfg)  # one the layout refuses
    assert _by_layout(p.image_bgr, [turned, found[1]], cfg, last_resort=1) is found[1]


def test_a_table_alone_gives_no_quad_of_followed_sides():
    """A blob that fills the frame is followed along the photo's edge only: that is the crop, not
    a board's side, so no quad of it comes back."""
    from vision.locate import LocateConfig, outline
    from vision.rectify import shrink

    for kind in ("wood", "dark", "cloth", "cherry"):
        small, _ = shrink(background(np.random.default_rng(1), (1000, 750), kind), LocateConfig().work_side)
        assert outline.supported_quads(small) == [], kind


@pytest.mark.parametrize("kind", ["wood", "dark", "cloth", "cherry"])
def test_no_board_raises_board_not_found(kind):
    bg = background(np.random.default_rng(1), (1000, 750), kind)
    with pytest.raises(BoardNotFound, match="no Ticket to Ride board found in the photo: .*closer") as e:
        locate_board(bg)
    assert "\n" not in str(e.value)  # one line, what to do included


def test_red_brown_rug_is_not_a_board():
    rng = np.random.default_rng(2)
    rug = np.clip(np.array((38, 48, 112), np.float32) + rng.normal(0, 12, (750, 1000, 3)), 0, 255).astype(np.uint8)
    with pytest.raises(BoardNotFound):
        locate_board(rug)


def test_tiny_or_odd_images_raise_board_not_found():
    with pytest.raises(BoardNotFound):
        locate_board(np.zeros((10, 10, 3), np.uint8))
    with pytest.raises(BoardNotFound):
        locate_board(np.full((300, 400), 128, np.uint8))


def test_board_cut_off_by_the_frame_raises():
    w, h = 1200, 900
    # The board's right third is outside the frame.
    corners = np.array([[300, 150], [300 + 1150, 150], [300 + 1150, 150 + 760], [300, 150 + 760]], float)
    photo, _ = synthetic_photo(11, size_wh=(w, h), corners=corners, kind="dark")
    with pytest.raises(BoardCutOff, match="cut off"):
        locate_board(photo)


def test_corner_just_outside_the_frame_is_a_warning():
    w, h = 1200, 900
    corners = np.array([[-6, 80], [1100, 60], [1120, 790], [40, 800]], float)
    photo, truth = synthetic_photo(12, size_wh=(w, h), corners=corners, kind="wood")
    loc = locate_board(photo)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    assert any("outside the photo" in m for m in loc.warnings)


# ---------------------------------------------------------------- rectify

def test_flatten_size_and_content():
    photo, truth = synthetic_photo(4, turn_deg=180, keystone=0.03)
    flat = flatten(photo, truth, px_per_mm=2.0)
    assert flat.shape == (round(525 * 2.0), round(795 * 2.0), 3)
    assert flattened_size(1.5) == (round(795 * 1.5), round(525 * 1.5))
    # The band is red-brown all round and the middle is pale map.
    lab = cv2.cvtColor(flat, cv2.COLOR_BGR2LAB).astype(int)
    assert lab[300:700, 15:35, 1].mean() > 135  # left band: red (a* above neutral 128)
    assert lab[400:600, 600:1000, 0].mean() > 150  # map: light


def test_homographies_round_trip():
    corners = np.array([[100.0, 120.0], [900.0, 80.0], [950.0, 640.0], [60.0, 600.0]])
    mm = np.array([[0, 0], [795, 0], [795, 525], [0, 525], [397.5, 262.5]])
    px = to_photo(mm, corners)
    assert np.allclose(px[:4], corners, atol=1e-6)
    assert np.allclose(to_board(px, corners), mm, atol=1e-6)
    H = board_to_photo_homography(corners)
    Hf = flattened_to_photo_homography(corners, 2.0)
    # flattened pixel (u, v) shows board mm ((u + 0.5) / 2, (v + 0.5) / 2)
    u = np.array([10.0, 20.0, 1.0])
    assert np.allclose(Hf @ u / (Hf @ u)[2], H @ np.array([5.25, 10.25, 1.0]) / (H @ np.array([5.25, 10.25, 1.0]))[2])
    with pytest.raises(ValueError):
        board_to_photo_homography(np.zeros((4, 2)))


# ---------------------------------------------------------------- quality warnings

def test_quality_warnings():
    from vision.quality import MSG_BLUR, MSG_DARK, MSG_SMALL, photo_warnings
    from vision.reading import BoardLocation

    photo, truth = synthetic_photo(6, turn_deg=0, fill=0.85, kind="wood")
    loc = BoardLocation(truth, 0, 1.0)
    assert photo_warnings(photo, loc) == []
    dark = (photo.astype(np.float32) * 0.2).astype(np.uint8)
    assert MSG_DARK in photo_warnings(dark, loc)
    blurred = cv2.GaussianBlur(photo, (0, 0), 4.0)
    assert MSG_BLUR in photo_warnings(blurred, loc)
    small_photo, small_truth = synthetic_photo(6, turn_deg=0, fill=0.35, kind="wood")
    assert MSG_SMALL in photo_warnings(small_photo, BoardLocation(small_truth, 0, 1.0))


@given(w=st.integers(32, 9000), h=st.integers(32, 9000), ppm=st.floats(0.1, 2.0))
def test_the_search_looks_for_a_board_of_the_smallest_scale_in_any_photo(w, h, ppm):
    """`outline.for_photo`: the shares the board and its band's blobs must cover are lowered, in
    proportion, exactly where a board seen at `ppm` covers less than the usual quad share."""
    from vision.locate.config import OutlineConfig
    from vision.locate.outline import for_photo

    cfg = OutlineConfig()
    got = for_photo(cfg, (h, w, 3), ppm).quads
    board_share = BOARD_MM[0] * BOARD_MM[1] * ppm ** 2 / (w * h)
    assert got.min_quad_share == pytest.approx(min(cfg.quads.min_quad_share, board_share))
    r = got.min_quad_share / cfg.quads.min_quad_share
    assert got.min_seed_share == pytest.approx(cfg.quads.min_seed_share * r)
    assert got.min_blob_share == pytest.approx(cfg.quads.min_blob_share * r)
    assert dataclasses.replace(got, min_quad_share=0, min_seed_share=0, min_blob_share=0) == dataclasses.replace(
        cfg.quads, min_quad_share=0, min_seed_share=0, min_blob_share=0)


@settings(max_examples=25, deadline=None)
@given(warm=st.tuples(*[st.floats(0.6, 1.4)] * 3), cool=st.tuples(*[st.floats(0.6, 1.4)] * 3),
       grey=st.integers(60, 180))
def test_even_cast_turns_a_cast_that_varies_across_the_photo_grey(warm, cool, grey):
    """A grey photo lit by two colours, one on each side, comes out grey throughout, as bright as it was."""
    from vision.locate.outline import even_cast

    w, h = 320, 240
    share = np.linspace(0.0, 1.0, w, dtype=np.float32)[None, :, None]  # the cool light's share, left to right
    gain = (1 - share) * np.array(warm, np.float32) + share * np.array(cool, np.float32)
    lit = np.clip(grey * np.broadcast_to(gain, (h, w, 3)), 0, 255).astype(np.uint8)
    evened = even_cast(lit, 1 / 16).astype(float)
    inner = evened[20:-20, 20:-20]  # the borders' local mean leans on the side beyond them
    assert np.abs(inner - inner.mean(axis=2, keepdims=True)).max() <= 4
    assert abs(evened.mean() - lit.astype(float).mean()) <= 3


def test_even_cast_leaves_a_grey_photo_as_it_is():
    from vision.locate.outline import even_cast

    img = np.random.default_rng(0).integers(0, 256, (90, 120, 1), dtype=np.uint8).repeat(3, axis=2)
    assert np.abs(even_cast(img, 1 / 16).astype(int) - img).max() <= 1


def test_a_photo_pale_only_at_its_edge_gives_no_map_to_cut():
    """The map cut seeds the map with the photo's pale part, minus the frame it counts as table; where
    nothing pale is left, there is nothing to cut (OpenCV's GrabCut raised on it)."""
    from vision.locate.outline import cut_map_quads

    img = np.full((300, 400, 3), 40, np.uint8)
    img[:2] = 230
    assert cut_map_quads(img) == []
    with pytest.raises(BoardNotFound):
        locate_board(img)


@settings(max_examples=20, deadline=None)
@given(spot=st.floats(1.2, 3.0), grey=st.integers(40, 100))
def test_even_cast_with_brightness_flattens_a_hot_spot(spot, grey):
    """A grey photo under a flash's hot spot comes out nearly even with `brightness`: most of the
    spot gone, the mean kept."""
    from vision.locate.outline import even_cast

    h, w = 240, 320
    yy, xx = np.mgrid[0:h, 0:w]
    gain = 1 + (spot - 1) * np.exp(-((xx - 200) ** 2 + (yy - 100) ** 2) / (2 * 50.0 ** 2))
    lit = np.clip(grey * gain[..., None].repeat(3, axis=2), 0, 255).astype(np.uint8)
    evened = even_cast(lit, 1 / 16, brightness=True).astype(float)
    inner, lit_inner = evened[20:-20, 20:-20], lit[20:-20, 20:-20].astype(float)
    # Two grey levels for the rounding to 8 bits, of the photo and of the evened photo.
    assert inner.max() - inner.min() <= 0.3 * (lit_inner.max() - lit_inner.min()) + 2
    assert abs(evened.mean() - lit.astype(float).mean()) <= 0.05 * lit.mean()
