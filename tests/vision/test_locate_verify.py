"""The locator's check: the 36 city dots confirm the right outline, refuse a wrong one, and put a
near miss right; photos with no board are refused. Images from the project's renderer, plus the
real development photos where they are present (skipped without them)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from ttr_testing import chessboard_image, corner_error_pct

from vision.locate import (
    BoardMirrored,
    BoardNotFound,
    LocateConfig,
    _confidence,  # the stage's own scoring, tested as it is used
    locate_board,
)
from vision.locate.config import DotConfig
from vision.locate.dots import (
    _nearest_strong_peak,
    check_outline,
    city_dots_mm,
    dot_peaks,
    dot_windows,
    find_dots,
    local_paper_gains,
    verified,
)
from vision.rectify import BOARD_MM, shrink
from vision.synth import camera as cam
from vision.synth.render import render_photo

DEV = Path(__file__).resolve().parents[3] / "shared" / "real" / "dev"
CFG = LocateConfig()


@pytest.fixture(scope="module")
def photos():
    """Three rendered end-of-game photos (a few tracks claimed), 1600 x 1200, usual tables."""
    out = []
    for seed in (7, 8, 9):
        rng = np.random.default_rng(seed)
        claims = {"red": [0, 5, 9, 40], "blue": [12, 60, 77], "yellow": [20, 33]}
        out.append(render_photo(rng, claims, size_wh=(1600, 1200)))
    return out


def test_the_dots_confirm_the_true_outline_and_no_other_turn(photos):
    for p in photos:
        truth = np.asarray(p.corners_xy, float)
        right = check_outline(p.image_bgr, truth, city_dots_mm(), CFG.dots)
        assert verified(right, CFG.dots), right
        assert right.correction_mm < CFG.consistent_mm
        for k in (1, 2, 3):  # the same outline, another corner taken as the board's top-left
            turned = check_outline(p.image_bgr, np.roll(truth, k, axis=0), city_dots_mm(), CFG.dots)
            assert not verified(turned, CFG.dots), (k, turned)


def test_the_dots_confirm_a_board_under_two_lights_of_different_colours(photos):
    """Daylight from one side, a warm lamp on the other: each dot's own paper balances its colours
    (`local_paper_gains`), so every board is confirmed where the map's one balance may leave half
    the dots out of copper's hues (it does on one of these), and no other turn is."""
    one_balance = dataclasses.replace(CFG.dots, local_paper_mm=0.0)
    lost = 0
    for p in photos:
        img = p.image_bgr.astype(np.float32)
        w = img.shape[1]
        ramp = np.clip((np.arange(w) - 0.4 * w) / (0.2 * w), 0, 1)[None, :, None]
        gain = np.array([1.6, 1.0, 0.5]) * (1 - ramp) + np.array([0.5, 0.9, 1.6]) * ramp  # BGR: cool to warm
        two = np.clip(img * gain, 0, 255).astype(np.uint8)
        truth = np.asarray(p.corners_xy, float)
        right = check_outline(two, truth, city_dots_mm(), CFG.dots)
        assert verified(right, CFG.dots) and right.correction_mm < CFG.consistent_mm, right
        lost += not verified(check_outline(two, truth, city_dots_mm(), one_balance), one_balance)
        for k in (1, 2, 3):
            assert not verified(check_outline(two, np.roll(truth, k, axis=0), city_dots_mm(), CFG.dots), CFG.dots)
    assert lost >= 1  # the photos do test the local balance


@given(left=st.tuples(*[st.integers(90, 250)] * 3), right=st.tuples(*[st.integers(90, 250)] * 3))
@settings(max_examples=25, deadline=None)
def test_each_dots_white_is_the_paper_round_it(left, right):
    """`local_paper_gains`: on a board seen straight, its left half paper of one colour and its right
    half another, a point well inside either half gets the gains that make that half's paper
    `paper_grey`."""
    cfg = CFG.dots
    ppm = 0.5
    w, h = int(BOARD_MM[0] * ppm), int(BOARD_MM[1] * ppm)
    img = np.empty((h, w, 3), np.uint8)
    img[:, : w // 2], img[:, w // 2:] = left, right
    to_image = np.diag([ppm, ppm, 1.0])  # board mm -> pixels, the board filling the image
    at = np.array([[0.2 * BOARD_MM[0], 0.5 * BOARD_MM[1]], [0.8 * BOARD_MM[0], 0.5 * BOARD_MM[1]]])
    gains = local_paper_gains(img, to_image, at, cfg)
    for g, paper in zip(gains, (left, right)):
        np.testing.assert_allclose(g * np.array(paper), cfg.paper_grey, rtol=0.02)


def test_the_dots_refuse_a_mirrored_board(photos):
    for p in photos:
        w = p.image_bgr.shape[1]
        mirrored = np.ascontiguousarray(p.image_bgr[:, ::-1])
        c = np.asarray(p.corners_xy, float).copy()
        c[:, 0] = w - 1 - c[:, 0]
        # The mirrored outline, clockwise on screen again, from each corner.
        q = c[[1, 0, 3, 2]]
        for k in range(4):
            assert not verified(check_outline(mirrored, np.roll(q, k, axis=0), city_dots_mm(), CFG.dots), CFG.dots)
        with pytest.raises(BoardNotFound):
            locate_board(mirrored)


def test_the_dots_put_an_outline_a_centimetre_off_right(photos):
    """What the locator promises of a correction: checked afresh, the outline the dots put right
    stands (the dots would hardly move it again) with full confidence, which means within
    `good_mm` (0.5 % of the diagonal) of the truth; and it is much nearer than the outline was.
    (Not a library's last decimal: OpenCV 5.0 and 5.1 land 0.03-0.36 % off here.)"""
    rng = np.random.default_rng(3)
    diag_mm = float(np.hypot(*BOARD_MM))
    for p in photos:
        truth = np.asarray(p.corners_xy, float)
        diag = np.linalg.norm(truth[0] - truth[2])
        off = truth + rng.normal(0, 0.01 * diag, truth.shape)
        chk = check_outline(p.image_bgr, off, city_dots_mm(), CFG.dots)
        assert corner_error_pct(off, truth) > 0.5
        assert chk.correction_mm > CFG.consistent_mm  # the check sees it is off ...
        assert _confidence(chk, CFG) < 0.5  # ... and scores it so
        again = check_outline(p.image_bgr, chk.corrected_xy, city_dots_mm(), CFG.dots)
        assert verified(again, CFG.dots) and again.correction_mm <= CFG.consistent_mm  # ... its correction stands
        assert _confidence(again, CFG) == 1.0
        err = corner_error_pct(chk.corrected_xy, truth)
        assert err < 100 * CFG.good_mm / diag_mm  # ... as near as full confidence says
        assert err < corner_error_pct(off, truth) / 2


def test_confidence_flags_every_outline_a_percent_off_and_no_right_one(photos):
    rng = np.random.default_rng(11)
    for p in photos:
        truth = np.asarray(p.corners_xy, float)
        assert _confidence(check_outline(p.image_bgr, truth, city_dots_mm(), CFG.dots), CFG) >= 0.5
        diag = np.linalg.norm(truth[0] - truth[2])
        for _ in range(3):
            d = rng.normal(0, 1, truth.shape)
            off = truth + d / np.linalg.norm(d, axis=1).mean() * 0.012 * diag  # 1.2 % mean corner error
            assert _confidence(check_outline(p.image_bgr, off, city_dots_mm(), CFG.dots), CFG) < 0.5


def test_located_on_hostile_tables_or_refused_never_wrong():
    """A fixed set of renders on checked cloth, stone, red-brown wood, a table edge with a chair,
    tiles, with boxes, cards and hands: every board found or refused, none wrong; the floor (most
    found, corners within 0.3 % on average) is what the locator does today, so a change that
    loses boards or precision fails here."""
    errors, refused = [], 0
    for seed in range(10):
        p = render_photo(np.random.default_rng(500 + seed), {"green": [3, 50], "black": [7, 70]},
                         size_wh=(1600, 1200), backgrounds="hostile")
        try:
            loc = locate_board(p.image_bgr)
        except BoardNotFound:
            refused += 1
            continue
        errors.append(corner_error_pct(loc.corners_xy, p.corners_xy))
    assert max(errors) < 1.0, errors  # never a wrong outline
    assert refused <= 2 and float(np.mean(errors)) <= 0.3, (refused, errors)


def _no_board_photos():
    rng = np.random.default_rng(0)
    yield "noise", rng.integers(0, 256, (1200, 1600, 3), dtype=np.uint8)
    yield "chessboard", chessboard_image()
    for seed in range(4):  # wood, cloth, floors as the renderer draws them, no board on them
        yield f"table {seed}", np.clip(cam.table(np.random.default_rng(seed), (1600, 1200)), 0, 255).astype(np.uint8)
    # A red-brown frame round a pale sheet with copper dots strewn at random: the board's colours
    # and shapes, but not its print.
    img = np.full((1200, 1600, 3), (120, 140, 150), np.uint8)
    cv2.rectangle(img, (200, 150), (1400, 1000), (38, 48, 112), -1)
    cv2.rectangle(img, (240, 190), (1360, 960), (205, 200, 195), -1)
    for _ in range(40):
        c = tuple(int(v) for v in rng.uniform((260, 210), (1340, 940)))
        cv2.circle(img, c, 7, (50, 95, 205), -1)
    yield "frame with dots", img


@pytest.mark.parametrize("name,image", list(_no_board_photos()), ids=lambda x: x if isinstance(x, str) else "")
def test_photos_with_no_board_are_refused(name, image):
    with pytest.raises(BoardNotFound):
        locate_board(image)


# ---------------------------------------------------------------- real photos, where present

def _dev(name):
    if not (DEV / name).exists():
        pytest.skip("the real development photos are not here")
    from vision.image_io import load_photo

    return load_photo(str(DEV / name)), np.asarray(json.loads((DEV / "gt" / (Path(name).stem + ".json")).read_text())["corners"])


@pytest.mark.parametrize("name", ["IMG_4146_small.jpg", "IMG_4150_small.jpg", "IMG_4132_small.jpg"])
def test_the_print_finds_the_board_on_a_checked_blanket_and_stone(name):
    from vision.locate.printed import match_board

    img, truth = _dev(name)
    small, scale = shrink(img, 1000)
    m = match_board(small)
    assert m is not None and m.inliers >= 40
    assert corner_error_pct((m.corners_xy + 0.5) / scale - 0.5, truth) < 0.5
    assert corner_error_pct(locate_board(img).corners_xy, truth) < 0.35


def test_a_mirrored_real_photo_is_refused_as_mirrored():
    img, _ = _dev("IMG_4134_small.jpg")
    with pytest.raises(BoardMirrored):
        locate_board(np.ascontiguousarray(img[:, ::-1]))


def _copper_scene(dot_bgr, car_bgr, car_off_mm: float = 10.0, ppm: float = 2.0):
    """A 100 mm square of paper at `ppm` px/mm with a city dot (10 mm across) in its middle and a
    copper-red car (25 x 8 mm) `car_off_mm` to its right; the homography board mm -> pixels."""
    img = np.full((int(100 * ppm), int(100 * ppm), 3), 200, np.uint8)
    c = int(50 * ppm)
    cv2.circle(img, (c, c), int(5 * ppm), dot_bgr, -1)
    x0 = int((50 + car_off_mm) * ppm)
    cv2.rectangle(img, (x0, int(46 * ppm)), (x0 + int(8 * ppm), int(58.5 * ppm)), car_bgr, -1)
    return img, np.diag([ppm, ppm, 1.0])


def test_a_dot_outshone_by_a_warm_lit_car_beside_it_is_still_found():
    img, to_px = _copper_scene(dot_bgr=(90, 120, 160), car_bgr=(30, 70, 235))
    where = np.array([[50.0, 50.0]])
    seen_strong, peak_strong = find_dots(img, to_px, 2.0, where, 14.0)
    nearest = dataclasses.replace(DotConfig(), strong_share=LocateConfig().nearest_share)
    seen, peak = find_dots(img, to_px, 2.0, where, 14.0, cfg=nearest)
    assert np.linalg.norm(seen_strong[0] - where[0]) > 5.0  # the car outshines the dot
    assert np.linalg.norm(seen[0] - where[0]) < 1.0 and 0 < peak[0] < peak_strong[0]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.floats(0.1, 1.0)), min_size=1, max_size=6),
       st.floats(0.2, 0.9))
@example(blobs=[(0, 20, 0.5622750100179529), (0, 21, 0.5622750100179529)], share=0.5)  # two blobs side by side
def test_the_dot_taken_is_the_nearest_strong_peak(blobs, share):
    resp = np.zeros((41, 41), np.float32)
    for y, x, h in blobs:
        resp[y, x] = max(resp[y, x], h)
    resp = cv2.GaussianBlur(resp, (0, 0), 1.0)
    y, x = _nearest_strong_peak(resp, 2, share)
    assert resp[y, x] >= share * resp.max() - 1e-6
    assert resp[y, x] >= resp[max(y - 2, 0):y + 3, max(x - 2, 0):x + 3].max() - 1e-6  # a peak
    mid = 20.0
    d = (y - mid) ** 2 + (x - mid) ** 2
    for yy, xx in np.argwhere(resp >= share * resp.max()):
        # A peak as the function defines it, exactly: of two blobs side by side the blur leaves one a
        # hair higher (a few 1e-8), and only it is the peak there.
        is_peak = resp[yy, xx] >= resp[max(yy - 2, 0):yy + 3, max(xx - 2, 0):xx + 3].max()
        assert not is_peak or (yy - mid) ** 2 + (xx - mid) ** 2 >= d  # none nearer the dot's place
    assert _nearest_strong_peak(resp, 2, 0.0) == tuple(int(v) for v in np.unravel_index(int(resp.argmax()), resp.shape))


@pytest.mark.parametrize("board_px, asked_again", [(1200, True), (500, False)])
def test_the_nearest_dots_are_asked_only_where_the_strongest_fail_and_the_dots_can_speak(
        monkeypatch, board_px, asked_again):
    import vision.locate as locate
    import vision.locate.dots as dots
    shares, responses = [], []

    def peaks_spy(windows, px_per_mm, share, cfg=DotConfig()):
        shares.append(share)
        return dot_peaks(windows, px_per_mm, share, cfg)

    def windows_spy(*args, **kwargs):
        responses.append(1)
        return dot_windows(*args, **kwargs)

    monkeypatch.setattr(dots, "dot_peaks", peaks_spy)
    monkeypatch.setattr(dots, "dot_windows", windows_spy)
    blank = np.full((900, 1600, 3), 200, np.uint8)  # no dots at all: the strongest never confirm
    h = board_px * BOARD_MM[1] / BOARD_MM[0]
    corners = np.array([[100, 100], [100 + board_px, 100], [100 + board_px, 100 + h], [100, 100 + h]], float)
    locate._check(blank, 1.0, corners, "test", LocateConfig())
    # Under the map's white, then (nothing confirmed) each dot's own white: the same peaks each time.
    per_white = [0.0] + ([LocateConfig().nearest_share] if asked_again else [])
    assert shares == per_white * 2
    assert len(responses) == 2  # the dots' responses are computed once a white, whichever peaks are taken
