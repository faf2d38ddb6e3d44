"""A flash's veil taken off (`vision.light.veil_map`, `take_off_veil`): light added over part of the
board moves every colour there toward the paper's grey once the paper is evened out; the print's
lost contrast says how far, and the board is stretched back by as much. Another print run or a
lamp's slope is no veil."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ttr_testing import bgr_to_lab, broad_glare_photo, lab_to_bgr

from calibration.template import load_template
from scoring.board import load_board
from vision.light import LitBoard, print_contrast_loss, take_off_veil, veil_map
from vision.read import Reader
from vision.rectify import BOARD_MM
from vision.settings import LightSettings

BOARD = load_board()
QUADS_MM, TRACK_IDS, _ = load_template().all_spaces()
CENTRES = np.asarray(QUADS_MM, float).mean(axis=1)
PRINTED = np.array([BOARD.tracks[t].color for t in TRACK_IDS])
START = Reader(use_classifier=False).printed_lab  # each space's print as the reader starts from
CFG = LightSettings()
PAPER = CFG.paper_level
PX_PER_MM = 1.0
SHAPE = (int(BOARD_MM[1] * PX_PER_MM), int(BOARD_MM[0] * PX_PER_MM))
MIDDLE = CENTRES.mean(axis=0)
EMPTY = np.ones(len(CENTRES), bool)


def veiled(colour_bgr: np.ndarray, share: np.ndarray) -> np.ndarray:
    """A colour under added light once the paper is evened out: `share` of the way to the paper."""
    return colour_bgr * (1 - share[..., None]) + PAPER * share[..., None]


def disc(points_mm: np.ndarray, radius_mm: float, share: float) -> np.ndarray:
    return np.where(np.linalg.norm(points_mm - MIDDLE, axis=-1) <= radius_mm, share, 0.0)


def test_the_veil_the_print_shows_is_taken_off_where_it_lies():
    radius, share, reach = 150.0, 0.4, CFG.print_glare_reach_mm
    lab = bgr_to_lab(veiled(lab_to_bgr(START), disc(CENTRES, radius, share)))
    loss, telling = print_contrast_loss(lab, START, PRINTED, EMPTY, CFG)
    veil = veil_map(loss, telling, CENTRES, SHAPE, PX_PER_MM, CFG)
    yy, xx = np.mgrid[0:SHAPE[0], 0:SHAPE[1]]
    d = np.hypot(xx + 0.5 - MIDDLE[0], yy + 0.5 - MIDDLE[1]) / PX_PER_MM
    assert abs(np.median(veil[d < radius - reach]) - share) < 0.05
    assert veil[d > radius + 2 * reach].max() < 0.05
    # A car's dark plastic under the veil comes back to its own colour where the veil lies.
    car = np.array([40.0, 60.0, 120.0])
    board = np.clip(np.round(veiled(np.broadcast_to(car, SHAPE + (3,)), disc(np.stack([xx, yy], -1) / PX_PER_MM,
                                                                              radius, share))), 0, 255)
    lit = LitBoard(board.astype(np.uint8), np.zeros((1, 4, 2)), np.zeros((1, 4, 2)), PX_PER_MM, 0.0)
    back = take_off_veil(lit, veil, CFG).board.astype(float)
    assert np.abs(np.median(back[d < radius - reach], axis=0) - car).max() < 12
    assert np.abs(board[d < radius - reach].mean(axis=0) - car).max() > 40  # it was veiled


@settings(max_examples=20, deadline=None)
@given(shift=st.lists(st.tuples(st.floats(-20, 20), st.floats(-12, 12), st.floats(-12, 12)), min_size=9, max_size=9),
       fade=st.floats(0.0, 0.25))
def test_another_print_run_faded_alike_is_no_veil(shift, fade):
    """Each print colour moved (another run), the whole print faded toward the paper alike: the
    photo's own print is where the loss starts, so no veil anywhere."""
    names = sorted(set(PRINTED))
    run = START + np.array([shift[names.index(c)] for c in PRINTED])
    run = run + fade * (np.array([199.0, 128.0, 128.0]) - run)
    loss, telling = print_contrast_loss(bgr_to_lab(lab_to_bgr(run)), START, PRINTED, EMPTY, CFG)
    assert veil_map(loss, telling, CENTRES, SHAPE, PX_PER_MM, CFG).max() < 0.1


def test_tracks_read_as_cars_say_nothing_of_the_veil():
    lab = bgr_to_lab(veiled(lab_to_bgr(START), disc(CENTRES, 150.0, 0.4)))
    loss, telling = print_contrast_loss(lab, START, PRINTED, np.zeros(len(CENTRES), bool), CFG)
    assert not veil_map(loss, telling, CENTRES, SHAPE, PX_PER_MM, CFG).any()


def test_a_flash_photo_is_read_again_without_its_veil_and_what_that_changes_is_doubtful():
    """A broad glare added in linear light over a rendered photo, the photo's flash fired: the board
    read is the one with the veil taken off (brighter than paper nowhere it was not), and every track
    read otherwise than without taking it off is doubtful; a photo without flash is read as before."""
    pytest.importorskip("vision.synth.render")
    spot_mm = np.array([450.0, 330.0])
    _, glared = broad_glare_photo(11, spot_mm)

    reader = Reader()
    without = Reader(settings=replace(reader.settings, light=replace(reader.settings.light, flash_veil=False)))
    view = replace(reader.view(glared), flash_fired=True)
    trace, before = reader.trace_view(view, "flash"), without.trace_view(view, "flash")
    assert not np.array_equal(trace.lit.board, before.lit.board)
    ppm = reader.settings.px_per_mm
    at = lambda b, mm: b.lit.board[int(mm[1] * ppm), int(mm[0] * ppm)].astype(float)  # noqa: E731
    assert np.abs(at(trace, spot_mm + (300, 0)) - at(before, spot_mm + (300, 0))).max() <= 1  # far off: as it was
    was = {t.track_id: t.owner for t in before.tracks}
    changed = [t for t in trace.tracks if t.owner != was[t.track_id]]
    assert all(t.doubtful for t in changed)
    assert {t.track_id for t in before.tracks if t.doubtful} <= {t.track_id for t in trace.tracks if t.doubtful}
    plain = reader.trace_view(replace(view, flash_fired=False), "no flash")
    assert np.array_equal(plain.lit.board, before.lit.board)


def test_a_remembered_net_asks_the_net_only_of_patches_it_has_not_seen():
    from vision.evidence.net import Remembered

    class Counting:
        asked = 0
        config = "the net's own"

        def predict(self, patches):
            Counting.asked += len(patches)
            return patches.reshape(len(patches), -1)[:, :3].astype(float) / 255.0

    rng = np.random.default_rng(3)
    patches = rng.integers(0, 256, (6, 4, 4, 3), dtype=np.uint8)
    net = Remembered(Counting())
    first = net.predict(patches)
    changed = patches.copy()
    changed[[1, 4]] = 255 - changed[[1, 4]]
    again = net.predict(changed)
    assert Counting.asked == 6 + 2
    np.testing.assert_array_equal(again, Counting().predict(changed))
    np.testing.assert_array_equal(first, Counting().predict(patches))
    assert net.config == "the net's own"
