"""The locator on boards too small or blurred for their city dots: the tracks' layout confirms the
right outline and no turned, mirrored or shifted one, such boards are found (not refused as "too
small"), and small photos with no board, or a mirrored board, are still refused. Images from the
project's renderer, shrunk the way a messaging app shrinks a photo."""
from __future__ import annotations

import cv2
import numpy as np
import pytest
from ttr_testing import chessboard_image, corner_error_pct

from vision.locate import BoardNotFound, LocateConfig, locate_board
from vision.locate.errors import BY_TRACKS_MESSAGE
from vision.locate.layout import check_layout, confirmed
from vision.rectify import BOARD_MM, photo_px_per_mm
from vision.synth import camera as cam
from vision.synth.render import render_photo

CFG = LocateConfig()
SHRINK = 0.3  # a 1600 x 1200 render becomes 480 x 360: the board ~300-450 pixels across


def _shrunk(image, corners, f=SHRINK):
    small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    ok, data = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])  # a messaging app's copy
    return cv2.imdecode(data, cv2.IMREAD_COLOR), (np.asarray(corners, float) + 0.5) * f - 0.5


@pytest.fixture(scope="module")
def small_photos():
    out = []
    for seed in (21, 22, 23):
        rng = np.random.default_rng(seed)
        claims = {"red": [0, 5, 9, 40, 61], "blue": [12, 60, 77], "yellow": [20, 33, 88], "green": [45, 70]}
        p = render_photo(rng, claims, size_wh=(1600, 1200))
        out.append(_shrunk(p.image_bgr, p.corners_xy))
    return out


def test_the_boards_are_too_small_for_the_dots(small_photos):
    for _, corners in small_photos:  # else this file would not test what it says
        assert photo_px_per_mm(corners) < CFG.min_px_per_mm


def test_the_layout_confirms_the_true_outline_and_no_turned_or_mirrored_one(small_photos):
    for img, truth in small_photos:
        assert confirmed(check_layout(img, truth, CFG.layout), CFG.layout)
        for order in ((2, 3, 0, 1), (1, 0, 3, 2), (3, 2, 1, 0), (1, 2, 3, 0)):
            assert not confirmed(check_layout(img, truth[list(order)], CFG.layout), CFG.layout), order


def test_the_layout_refuses_an_outline_three_percent_off(small_photos):
    rng = np.random.default_rng(5)
    for img, truth in small_photos:
        diag = np.linalg.norm(truth[0] - truth[2])
        for _ in range(3):
            d = rng.normal(0, 1, truth.shape)
            off = truth + d / np.linalg.norm(d, axis=1).mean() * 0.03 * diag
            assert not confirmed(check_layout(img, off, CFG.layout), CFG.layout)


def test_the_layout_puts_right_an_outline_whose_side_slipped(small_photos):
    """`layout.polish`: one side of the outline slipped inwards by 1 % of the diagonal (onto an inner
    edge), the tracks fall between the photo's ink; moved while the layout fits better, the corners
    come back more than half way and the layout scores it as a right outline."""
    from vision.locate.layout import polish

    for img, truth in small_photos:
        diag = np.linalg.norm(truth[0] - truth[2])
        off = truth.copy()
        inward = (truth[2] - truth[1]) / np.linalg.norm(truth[2] - truth[1])  # the top side moves down
        off[[0, 1]] += inward * 0.01 * diag
        slipped = check_layout(img, off, CFG.layout).score
        corners, chk = polish(img, off, CFG.layout)
        assert chk.score > slipped
        assert chk.score >= CFG.layout.right_score
        assert corner_error_pct(corners, truth) < 0.5 * corner_error_pct(off, truth)


def test_a_small_board_is_found_and_says_how_it_was_checked(small_photos):
    for img, truth in small_photos:
        loc = locate_board(img)
        assert corner_error_pct(loc.corners_xy, truth) < 0.5
        assert any("checked by its tracks alone" in w for w in loc.warnings), loc.warnings
        assert BY_TRACKS_MESSAGE.split("{why}")[1][:30] in " ".join(loc.warnings)


def test_a_small_mirrored_board_is_refused(small_photos):
    for img, _ in small_photos:
        with pytest.raises(BoardNotFound):
            locate_board(np.ascontiguousarray(img[:, ::-1]))


def _small_no_board_photos():
    rng = np.random.default_rng(0)
    yield "noise", rng.integers(0, 256, (360, 480, 3), dtype=np.uint8)
    yield "chessboard", cv2.resize(chessboard_image(), (480, 360), interpolation=cv2.INTER_AREA)
    for seed in range(3):
        t = np.clip(cam.table(np.random.default_rng(seed), (1600, 1200)), 0, 255).astype(np.uint8)
        yield f"table {seed}", cv2.resize(t, (480, 360), interpolation=cv2.INTER_AREA)
    # The board's frame and colours, with tracks drawn at random instead of its own: a red-brown
    # band round a pale sheet with coloured bars strewn over it.
    img = np.full((360, 480, 3), (120, 140, 150), np.uint8)
    x0, y0 = 60, 60
    w, h = int(BOARD_MM[0] * 0.36), int(BOARD_MM[1] * 0.36)
    cv2.rectangle(img, (x0, y0), (x0 + w, y0 + h), (38, 48, 112), -1)
    cv2.rectangle(img, (x0 + 9, y0 + 9), (x0 + w - 9, y0 + h - 9), (205, 200, 195), -1)
    for _ in range(120):
        c = rng.uniform((x0 + 12, y0 + 12), (x0 + w - 12, y0 + h - 12))
        a = rng.uniform(0, np.pi)
        d = 4 * np.array([np.cos(a), np.sin(a)])
        colour = tuple(int(v) for v in rng.integers(0, 200, 3))
        cv2.line(img, tuple(int(v) for v in c - d), tuple(int(v) for v in c + d), colour, 3)
    yield "frame with random bars", img


@pytest.mark.parametrize("name,image", list(_small_no_board_photos()), ids=lambda x: x if isinstance(x, str) else "")
def test_small_photos_with_no_board_are_refused(name, image):
    with pytest.raises(BoardNotFound):
        locate_board(image)


def test_a_board_too_small_for_the_dots_to_be_relied_on_is_checked_by_its_tracks(monkeypatch):
    # Between 0.6 and 0.8 px/mm the dots mostly confirm the right outline, but not always (8 of 71
    # true outlines of the benchmark sets); where they do not, the tracks may. The dots are held
    # here to the 16 of 36 they found on such a real board photographed again
    # (benchmarks/rephotograph.py), short of the 20 that confirm.
    import dataclasses

    from vision import locate

    rng = np.random.default_rng(31)
    p = render_photo(rng, {"red": [0, 5, 9, 40], "blue": [12, 60], "green": [45, 70]}, size_wh=(1600, 1200))
    img, truth = _shrunk(p.image_bgr, p.corners_xy, f=0.7 / photo_px_per_mm(p.corners_xy))
    assert 0.6 < photo_px_per_mm(truth) < CFG.min_px_per_mm
    check = locate._check

    def weak_dots(*args, **kwargs):
        f = check(*args, **kwargs)
        return dataclasses.replace(f, check=dataclasses.replace(f.check, found=min(f.check.found, 16)))

    monkeypatch.setattr(locate, "_check", weak_dots)
    loc = locate_board(img)
    assert corner_error_pct(loc.corners_xy, truth) < 0.5
    assert any("checked by its tracks alone" in w for w in loc.warnings), loc.warnings


def test_the_board_is_measured_by_the_outline_the_dots_agree_with_not_the_largest():
    from vision import locate
    from vision.locate.dots import DotCheck

    def found(corners, dots):
        c = np.asarray(corners, float)
        return locate._Found(c, "colour", DotCheck(dots, 36, 1.0, 3.0, c))

    table = found([[0, 0], [1000, 0], [1000, 750], [0, 750]], 0)  # an outline round the table
    board = found([[300, 300], [800, 300], [800, 630], [300, 630]], 16)
    assert locate._board_seen([table, board]) is board
    assert locate._board_seen([]) is None


def _full_size_no_board_photos():
    for seed in range(3):
        yield f"table {seed}", np.clip(cam.table(np.random.default_rng(seed), (1600, 1200)), 0, 255).astype(np.uint8)
    _, bars = list(_small_no_board_photos())[-1]
    yield "frame with random bars", cv2.resize(bars, (1600, 1200), interpolation=cv2.INTER_LINEAR)


@pytest.mark.parametrize("name,image", list(_full_size_no_board_photos()),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_full_size_photos_with_no_board_are_refused(name, image):
    # Where no outline shows enough city dots the tracks are asked, at any size: they must not
    # take a table or a frame of strewn bars for a board.
    with pytest.raises(BoardNotFound):
        locate_board(image)


def _flash_fall_off(image, corners, middle=1.3, edge=0.5):
    """The photo lit as by a phone's flash: bright in the board's middle, falling off to its edges."""
    h, w = image.shape[:2]
    c = np.asarray(corners, float)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot(xx - c[:, 0].mean(), yy - c[:, 1].mean()) / (np.linalg.norm(c[2] - c[0]) / 2)
    gain = edge + (middle - edge) * np.exp(-(r / 0.5) ** 2)
    return np.clip(image.astype(np.float32) * gain[..., None], 0, 255).astype(np.uint8)


def test_the_layout_confirms_a_board_under_a_flash():
    # The ink is judged against the paper around it, so light falling off from the middle of the
    # board moves paper and ink alike; judged against one paper colour for the whole map, the
    # dim edges read as ink and the bright middle as paper (score 0.17 on this photo).
    rng = np.random.default_rng(41)
    p = render_photo(rng, {"red": [0, 5, 9, 40], "blue": [12, 60], "black": [3, 30, 66]}, size_wh=(1600, 1200))
    img = _flash_fall_off(p.image_bgr, p.corners_xy)
    assert confirmed(check_layout(img, p.corners_xy, CFG.layout), CFG.layout)
    turned = np.asarray(p.corners_xy)[[2, 3, 0, 1]]
    assert not confirmed(check_layout(img, turned, CFG.layout), CFG.layout)


def test_a_board_whose_dots_are_washed_out_is_checked_by_its_tracks(monkeypatch):
    # Seen finer than the dots need, yet too few of them show on any outline (a flash's glare, a
    # dim and noisy phone): the tracks may confirm the outline, and the player is told so.
    import dataclasses

    from vision import locate

    rng = np.random.default_rng(32)
    p = render_photo(rng, {"red": [0, 5, 9, 40], "blue": [12, 60], "green": [45, 70]}, size_wh=(1600, 1200))
    assert photo_px_per_mm(p.corners_xy) >= CFG.min_px_per_mm
    check = locate._check

    def washed_out(*args, **kwargs):
        f = check(*args, **kwargs)
        return dataclasses.replace(f, check=dataclasses.replace(f.check, found=min(f.check.found, 16)))

    monkeypatch.setattr(locate, "_check", washed_out)
    loc = locate_board(p.image_bgr)
    assert corner_error_pct(loc.corners_xy, p.corners_xy) < 0.5
    assert any("city dots could not be made out" in w and "without the flash" in w for w in loc.warnings), loc.warnings
