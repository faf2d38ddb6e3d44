"""The locator on photos from the project's renderer (`vision.synth`): a fixed seed set.

Floor: every board found, the board's own top-left first, mean corner error within 0.5 % of the
diagonal (the issue's bar for real photos), no single photo worse than 1 %.
"""
from __future__ import annotations

import numpy as np
import pytest
from ttr_testing import corner_error_pct

render = pytest.importorskip("vision.synth.render")

SEEDS = range(6)


def varied_photo(seed: int, i: int, light: str | None = None):
    """Photo `i` of `ttr render --world varied --seed SEED [--light LIGHT]`, drawn as the command
    draws it (the same random streams, so the same photo)."""
    from app.commands.render import WORLD_STREAM
    from scoring.board import load_board
    from vision.synth.positions import random_position
    from vision.synth.world import random_world

    rng = np.random.default_rng([seed, i])
    rng.random()  # the CLI's draw for an empty board, so the random stream matches the photo's
    claims = random_position(rng, load_board(), None)
    world = random_world([seed, i, WORLD_STREAM], render.default_model().printed_bgr, light, False)
    return render.render_photo(rng, claims, world.phone.size_wh, world=world), world


@pytest.fixture(scope="module")
def located():
    from vision.locate import locate_board

    out = []
    for seed in SEEDS:
        photo = render.render_photo(np.random.default_rng(1000 + seed), {}, size_wh=(1000, 750))
        out.append((photo.corners_xy, locate_board(photo.image_bgr)))
    return out


def test_rendered_photos_corners_and_order(located):
    errors = []
    for truth, loc in located:
        t = np.asarray(truth, float)
        diag = np.linalg.norm(t[0] - t[2])
        err = np.linalg.norm(loc.corners_xy - t, axis=1).mean() / diag * 100
        errors.append(err)
        assert np.argmin(np.linalg.norm(t - loc.corners_xy[0], axis=1)) == 0, "wrong top-left corner"
        assert err < 1.0
    assert float(np.mean(errors)) <= 0.5


def test_rendered_orientation_matches_the_top_side(located):
    for truth, loc in located:
        t = np.asarray(truth, float)
        top = t[1] - t[0]
        expected = int(round(np.degrees(np.arctan2(top[1], top[0])) / 90.0)) % 4 * 90
        assert loc.orientation == expected


def test_a_board_on_a_wooden_table_in_warm_light_is_found():
    """`ttr render --seed 2026`, photo 10: warm light on a wooden table the colour of the score track.
    Every colour mask finds the table; the map, too saturated for the plain map mask, is found as
    the photo's least saturated bright part."""
    from scoring.board import load_board
    from vision.locate import locate_board
    from vision.synth.positions import random_position

    rng = np.random.default_rng([2026, 10])
    rng.random()  # the CLI's draw for an empty board, so the random stream matches the photo's
    claims = random_position(rng, load_board())
    from app.commands.render import SIZE_WEIGHTS, SIZES

    size = SIZES[int(rng.choice(len(SIZES), p=np.array(SIZE_WEIGHTS) / sum(SIZE_WEIGHTS)))]
    photo = render.render_photo(rng, claims, size)
    loc = locate_board(photo.image_bgr)
    t = np.asarray(photo.corners_xy, float)
    assert np.linalg.norm(loc.corners_xy - t, axis=1).mean() / np.linalg.norm(t[0] - t[2]) < 0.005


def test_a_board_on_wood_the_colour_of_its_band_in_another_home_is_found():
    """`ttr render --world varied --seed 4545 --start 6 --count 1`: another copy of the board on a
    wooden table of its band's colour, in light that leaves no colour outline and no pale map to
    the fixed colour limits; the map cut from the table by the photo's own colours finds it."""
    from vision.locate import locate_board

    photo, _ = varied_photo(4545, 6)
    assert corner_error_pct(locate_board(photo.image_bgr).corners_xy, photo.corners_xy) < 0.5


@pytest.fixture(scope="module")
def small_in_large():
    """A 12-megapixel photo with the board turned and covering under `QuadConfig.min_quad_share` of
    it, yet seen finer than the city dots need (`LocateConfig.min_px_per_mm`): as readable as a
    board filling a 1008 x 756 photo."""
    from vision.locate import LocateConfig
    from vision.rectify import photo_px_per_mm
    from vision.synth.camera import random_camera

    cfg = LocateConfig()
    size = (4032, 3024)
    rng = np.random.default_rng(44)
    camera = random_camera(rng, size, fill=0.3, tilt_deg=5.0, turn_deg=90.0)
    photo = render.render_photo(rng, {"red": [0, 5, 9], "blue": [12, 60]}, size_wh=size, camera=camera)
    t = np.asarray(photo.corners_xy, float)
    # Else the tests below would not test what they say: small in the frame, fine enough for the dots.
    x, y = t[:, 0], t[:, 1]
    area = 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    assert area < cfg.outline.quads.min_quad_share * size[0] * size[1]
    assert photo_px_per_mm(t) >= cfg.min_px_per_mm
    return photo


def test_a_board_small_in_a_large_photo_is_found(small_in_large):
    """The colour outline's search is not left to the shares that suit a board filling the frame."""
    from vision.locate import locate_board

    loc = locate_board(small_in_large.image_bgr)
    assert corner_error_pct(loc.corners_xy, small_in_large.corners_xy) < 0.5


def test_a_photo_file_with_a_board_small_in_it_is_located_at_full_size(small_in_large, tmp_path):
    """A large JPEG is decoded reduced, which suits a board filling the frame; where the reduced photo
    shows no board, the reader looks at the photo at full size."""
    from vision.read import Reader, decode_reduction

    path = tmp_path / "small_in_large.jpg"
    path.write_bytes(small_in_large.jpeg)
    assert decode_reduction(4032, 3024) > 1  # else this would not test the second look
    view = Reader(use_classifier=False).view_path(str(path))
    assert corner_error_pct(view.location.corners_xy, small_in_large.corners_xy) < 0.5


def test_a_board_too_small_for_the_dots_is_found_by_its_tracks():
    """`ttr render --world varied --seed 7700 --start 20 --count 1`: a board seen at 0.6 px/mm,
    covering under a tenth of a 1600x1200 photo. Looked for only as small as the city dots need, it
    was refused as no board; looked for down to `LocateConfig.smallest_px_per_mm`, it is found and
    confirmed by its tracks' layout, with the warning that says so."""
    from vision.locate import BoardNotFound, LocateConfig, locate_board
    from vision.rectify import photo_px_per_mm

    photo, _ = varied_photo(7700, 20)
    cfg = LocateConfig()
    # Else this would not test what it says: coarser than the dots need, refused when not looked for.
    assert cfg.smallest_px_per_mm < photo_px_per_mm(photo.corners_xy) < cfg.min_px_per_mm
    with pytest.raises(BoardNotFound):
        locate_board(photo.image_bgr, LocateConfig(smallest_px_per_mm=cfg.min_px_per_mm))
    loc = locate_board(photo.image_bgr)
    assert corner_error_pct(loc.corners_xy, photo.corners_xy) < 0.5
    assert any("checked by its tracks alone" in w for w in loc.warnings)


def test_a_board_in_light_of_two_colours_is_found():
    """`ttr render --world varied --seed 7500 --start 22 --count 1`: a yellowed copy under light of
    two colours, warm on one side and cool on the other. Neither the band's colour limits nor the
    map's pale grey hold across the board, so no outline is confirmed; searched once more with the
    cast evened out (`LocateConfig.cast_reach`), the board is found."""
    from vision.locate import BoardNotFound, LocateConfig, locate_board

    photo, world = varied_photo(7500, 22)
    assert world.light.kind == "mixed"
    with pytest.raises(BoardNotFound):  # else this would not test the second search
        locate_board(photo.image_bgr, LocateConfig(cast_reach=0.0))
    assert corner_error_pct(locate_board(photo.image_bgr).corners_xy, photo.corners_xy) < 0.5


def test_a_board_under_a_flash_s_hot_spot_is_found_with_the_light_evened():
    """`ttr render --world varied --light flash --seed 7900 --start 130 --count 1`: a flash's hot spot
    over the board. Evening the colour cast alone leaves the spot; evening its brightness too, the
    board is found."""
    from vision.locate import BoardNotFound, LocateConfig, locate_board
    from vision.locate.outline import even_cast

    photo, _ = varied_photo(7900, 130, "flash")
    alone = LocateConfig(cast_reach=0.0)
    for image in (photo.image_bgr, even_cast(photo.image_bgr, LocateConfig().cast_reach)):
        with pytest.raises(BoardNotFound):  # else this would not test the brightness evened
            locate_board(image, alone)
    assert corner_error_pct(locate_board(photo.image_bgr).corners_xy, photo.corners_xy) < 0.5
