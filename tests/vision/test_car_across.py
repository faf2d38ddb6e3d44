"""A car lies anywhere across its space: the colour evidence measures it at places across the space
(vision.spaces.sample_spaces, SampleSettings.car_across_steps), and the renderer can lay cars
the way careless hands do (vision.synth.trains.Hands)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.board import load_board
from vision.evidence.colour import ColourModel
from vision.read import BoardView, Reader
from vision.reading import SPACE_CLASSES, BoardLocation
from vision.settings import ColourSettings, ReaderSettings, SampleSettings
from vision.spaces import across_steps, soften_patches
from vision.synth.board_art import _space_frame
from vision.synth.positions import random_position
from vision.synth.render import default_model, render_photo
from vision.synth.trains import CAREFUL, CROWDED, SLOPPY, place_cars, towards_free_lane


def _across_offsets(hands, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    model = default_model()
    claims = random_position(rng, load_board(), 4)
    cars = place_cars(rng, model, claims, hands=hands)
    out = []
    k = {}
    for car in cars:
        i = k.get(car.track_id, 0)
        k[car.track_id] = i + 1
        c, u, _, _ = _space_frame(model.spaces[car.track_id][i])
        out.append(abs(float(np.dot(car.center_mm - c, [-u[1], u[0]]))))
    return np.array(out)


def test_sloppy_hands_lay_cars_off_their_spaces():
    careful, sloppy = _across_offsets(CAREFUL, 5), _across_offsets(SLOPPY, 5)
    assert np.mean(careful > 2.0) < 0.05
    assert np.mean(sloppy > 2.0) > 0.2
    assert sloppy.max() < 3.5 + 5 * SLOPPY.track_sd_mm + 6  # (a knocked car may lie further)


def _towards_other_lane(hands, claims: dict, track_id: int, other: int, seed: int) -> float:
    """Mean offset, across, of `track_id`'s cars towards the lane `other` (mm)."""
    model = default_model()
    cars = [c for c in place_cars(np.random.default_rng(seed), model, claims, hands=hands) if c.track_id == track_id]
    towards = np.mean(model.spaces[other], axis=(0, 1)) - np.mean(model.spaces[track_id], axis=(0, 1))
    towards /= np.linalg.norm(towards)
    return float(np.mean([(c.center_mm - sp.mean(axis=0)) @ towards
                          for c, sp in zip(cars, np.asarray(model.spaces[track_id]))]))


def test_crowded_hands_push_a_doubles_track_towards_its_free_lane():
    board = load_board()
    tid = next(t.id for t in board.tracks if board.double_ids[t.id] >= 0)
    other = board.double_ids[tid]
    lone = {"red": [tid]}
    crowded = [_towards_other_lane(CROWDED, lone, tid, other, s) for s in range(12)]
    sloppy = [_towards_other_lane(SLOPPY, lone, tid, other, s) for s in range(12)]
    assert min(crowded) > 0.5 and np.mean(crowded) > 1.5  # 1.5-3.5 mm, give or take the hands' spread
    assert max(crowded) < 4.5  # nearer their own lane than the other (~9 mm away)
    assert abs(np.mean(sloppy)) < 1.0  # no side preferred
    both = {"red": [tid], "blue": [other]}  # the other lane taken: nowhere to crowd into
    assert abs(np.mean([_towards_other_lane(CROWDED, both, tid, other, s) for s in range(12)])) < 1.0


def test_only_a_doubles_track_with_its_other_lane_free_is_pushed():
    board, model = load_board(), default_model()
    single = next(t.id for t in board.tracks if board.double_ids[t.id] < 0)
    double = next(t.id for t in board.tracks if board.double_ids[t.id] >= 0)
    rng = np.random.default_rng(0)
    assert not towards_free_lane(rng, model, single, {single}, CROWDED).any()
    assert not towards_free_lane(rng, model, double, {double, board.double_ids[double]}, CROWDED).any()
    assert not towards_free_lane(rng, model, double, {double}, SLOPPY).any()
    push = np.linalg.norm(towards_free_lane(rng, model, double, {double}, CROWDED))
    assert CROWDED.towards_free_lane_mm[0] <= push <= CROWDED.towards_free_lane_mm[1]


def test_a_car_beside_the_middle_of_its_space_is_found_where_it_shows():
    # A gray space whose middle shows a green car's dark, shadowed side and whose side shows the car.
    shadowed = np.array([42.0, 128.0, 130.0])
    lit = np.array(dict(ColourSettings().car_lab)["green"])
    gray = np.array(dict(ColourSettings().printed_lab)["gray"])
    lab = np.stack([shadowed, gray])  # two spaces of one track: the second empty
    model = ColourModel()
    middle_only = model.loglik(lab, ["gray", "gray"], np.array([0, 1]))
    across = np.stack([np.stack([gray, shadowed, lit]), np.stack([gray, gray, gray])])
    searched = model.loglik(lab, ["gray", "gray"], np.array([0, 1]), lab_car=across)
    green, black = SPACE_CLASSES.index("green"), SPACE_CLASSES.index("black")
    assert middle_only[0].argmax() == black
    assert searched[0].argmax() == green
    assert searched[1].argmax() == 0  # an empty space stays empty


def true_view(reader: Reader, photo) -> BoardView:
    """A rendered photo's board flattened through its true corners: what the cars are read from,
    whether or not the locator (whose pixels move a little between OpenCV versions) confirms it."""
    return reader.view_at(photo.image_bgr, BoardLocation(np.asarray(photo.corners_xy, float), 0, 1.0))


def test_the_reader_reads_sloppy_cars_at_least_as_well_when_it_looks_across():
    board = load_board()
    photos = []
    for seed in (71, 72):
        rng = np.random.default_rng(seed)
        claims = random_position(rng, board, 5)
        owner = {t: p for p, ids in claims.items() for t in ids}
        photos.append((render_photo(rng, claims, (1600, 1200), hands=SLOPPY), owner))
    rights = {}
    for steps in (0, 2):
        reader = Reader(settings=replace(ReaderSettings(), sample=SampleSettings(car_across_steps=steps)))
        rights[steps] = sum(t.owner == owner.get(t.track_id)
                            for photo, owner in photos for t in reader.read_view(true_view(reader, photo)).tracks)
    assert rights[2] >= rights[0]
    assert rights[2] >= 190


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 8.0))
def test_the_places_across_are_never_closer_than_a_pixel_of_the_photo(seen_px_per_mm):
    most = SampleSettings().car_across_steps
    reach_mm = 1.3  # a car's reach across its space: (0.5 - 0.35 / 2) of its 7.5 mm or so
    steps = across_steps(reach_mm, seen_px_per_mm, most)
    reach_px = reach_mm * seen_px_per_mm
    assert 0 <= steps <= most
    if steps:
        assert reach_px / steps >= 1.0  # neighbouring places at least a photo pixel apart
    if steps < most:
        assert reach_px / (steps + 1) < 1.0  # and as many of them as that allows
    assert across_steps(reach_mm, None, most) == most


@settings(max_examples=40, deadline=None)
@given(st.floats(0.2, 6.0), st.floats(0.5, 2.0), st.integers(0, 255))
def test_the_check_sees_every_photo_at_one_sharpness(seen_px_per_mm, to_px_per_mm, grey):
    """Patches of a photo seen finer than the check's scale lose their finest detail (a pattern one
    pixel across fades), a plain patch stays as it is, and a coarser photo's patches are untouched."""
    board_px_per_mm = 2.0
    fine = np.zeros((3, 16, 16, 3), np.uint8)
    fine[:, ::2] = 255  # stripes one patch pixel wide
    plain = np.full((2, 16, 16, 3), grey, np.uint8)
    softened = soften_patches(fine, seen_px_per_mm, to_px_per_mm, board_px_per_mm)
    assert softened.shape == fine.shape and softened.dtype == fine.dtype
    if min(seen_px_per_mm, board_px_per_mm) / to_px_per_mm >= 1.5:
        assert np.std(softened[:, 4:12, 4:12].astype(float)) < np.std(fine.astype(float)) / 2
    elif min(seen_px_per_mm, board_px_per_mm) <= to_px_per_mm:
        assert np.array_equal(softened, fine)
    assert np.array_equal(soften_patches(plain, seen_px_per_mm, to_px_per_mm, board_px_per_mm), plain)
    assert soften_patches(fine, None, to_px_per_mm, board_px_per_mm) is fine
    assert soften_patches(fine, seen_px_per_mm, None, board_px_per_mm) is fine
