"""Glare found by the print's lost contrast (`vision.light.print_glare`): light added over part of
the board, once the paper is evened out, brings the print there toward the paper's grey; another
print run, or a lamp's slope, does not."""
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ttr_testing import bgr_to_lab, broad_glare_photo, lab_to_bgr

from calibration.template import load_template
from scoring.board import load_board
from vision.light import print_glare
from vision.read import Reader
from vision.settings import LightSettings

BOARD = load_board()
QUADS_MM, TRACK_IDS, _ = load_template().all_spaces()
CENTRES = np.asarray(QUADS_MM, float).mean(axis=1)
PRINTED = np.array([BOARD.tracks[t].color for t in TRACK_IDS])
# Where the reader starts: each space's print as the template measured it (Reader.printed_lab).
START = Reader(use_classifier=False).printed_lab
PAPER = 190.0  # the evened-out paper's grey (LightSettings.paper_level)
CFG = LightSettings(print_glare_loss=0.3)


def evened_out(print_bgr: np.ndarray, added: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """The print as the reader sees it: lit by `gain`, `added` light on top, then the paper (lit
    and added to alike) divided back to its grey."""
    return (print_bgr * gain[:, None] + added[:, None]) * PAPER / (PAPER * gain + added)[:, None]


def spot(centre_mm, radius_mm: float, strength: float) -> np.ndarray:
    return np.where(np.linalg.norm(CENTRES - np.asarray(centre_mm), axis=1) <= radius_mm, strength, 0.0)


EMPTY = np.ones(len(CENTRES), bool)
MIDDLE = CENTRES.mean(axis=0)


def test_added_light_over_part_of_the_board_is_glare_there_and_nowhere_else():
    radius, reach = 120.0, CFG.print_glare_reach_mm
    lab = bgr_to_lab(evened_out(lab_to_bgr(START), spot(MIDDLE, radius, 400.0), np.ones(len(CENTRES))))
    glare = print_glare(lab, START, PRINTED, EMPTY, CENTRES, CFG)
    d = np.linalg.norm(CENTRES - MIDDLE, axis=1)
    assert glare[d <= radius - reach].all()
    assert not glare[d > radius + reach].any()


def test_switched_off_it_finds_none():
    lab = bgr_to_lab(evened_out(lab_to_bgr(START), spot(MIDDLE, 150.0, 400.0), np.ones(len(CENTRES))))
    assert not print_glare(lab, START, PRINTED, EMPTY, CENTRES, LightSettings(print_glare_loss=0.0)).any()


def test_tracks_read_as_cars_say_nothing():
    lab = bgr_to_lab(evened_out(lab_to_bgr(START), spot(MIDDLE, 150.0, 400.0), np.ones(len(CENTRES))))
    assert not print_glare(lab, START, PRINTED, np.zeros(len(CENTRES), bool), CENTRES, CFG).any()


@settings(max_examples=25, deadline=None)
@given(shift=st.lists(st.tuples(st.floats(-20, 20), st.floats(-12, 12), st.floats(-12, 12)), min_size=9, max_size=9),
       slope=st.tuples(st.floats(-0.004, 0.004), st.floats(-0.004, 0.004)), fade=st.floats(0.0, 0.25))
def test_another_print_run_under_a_lamps_slope_is_not_glare(shift, slope, fade):
    """Each print colour moved (another run: hue, lightness), the whole print faded toward the
    paper alike, and a lamp's slope across the board: no glare anywhere."""
    names = sorted(set(PRINTED))
    run = START + np.array([shift[names.index(c)] for c in PRINTED])
    run = run + fade * (np.array([199.0, 128.0, 128.0]) - run)
    gain = np.clip(1.0 + (CENTRES - MIDDLE) @ np.array(slope), 0.3, 2.0)
    lab = bgr_to_lab(evened_out(lab_to_bgr(run), np.zeros(len(CENTRES)), gain))
    assert not print_glare(lab, START, PRINTED, EMPTY, CENTRES, CFG).any()


def test_a_broad_glare_on_a_rendered_photo_is_found_by_the_print_and_marks_the_tracks_there():
    """A flash's broad glare, added in linear light over a rendered photo the phone exposed for it:
    the evening-out takes it for light (the paper's glare finds nothing there), the print finds it
    there and not far away, the colours there are read again and the tracks under it are read
    right or doubtful, none surer than its calibration under glare allows; switched off, it is not
    found."""
    pytest.importorskip("vision.synth.render")
    from vision.decide.doubt import glare_chance, track_contests

    spot_mm = np.array([450.0, 330.0])
    claims, glared = broad_glare_photo(11, spot_mm)
    owners = {tid: c for c, ids in claims.items() for tid in ids}

    reader = Reader()
    trace = reader.trace(glared, "broad glare")
    d = np.linalg.norm(reader.centres_mm - spot_mm, axis=1)
    near, far = d < 60, d > 250
    assert not trace.lit.glare[near].any()  # what the paper alone would miss
    assert trace.evidence.glare[near].mean() >= 2 / 3 and not trace.evidence.glare[far].any()
    under = [t for t in trace.tracks if trace.evidence.glare[reader.rows[t.track_id]].all()]
    cfg = reader.settings.doubt
    margin, _, _ = track_contests(trace.decision.scores, trace.decision.choice, BOARD, reader.settings.decide.spill, cfg)
    assert under and all(t.doubtful or t.owner == owners.get(t.track_id) for t in under)
    assert all(t.confidence <= 1.0 - glare_chance(margin[t.track_id], t.length, cfg) + 1e-12 for t in under)

    s = reader.settings
    off = Reader(settings=replace(s, light=replace(s.light, print_glare_loss=0.0))).trace(glared, "broad glare")
    assert np.array_equal(off.evidence.glare, off.lit.glare)
    # The colours read again there, cars under it allowed to be mixed with the light's white.
    marks_only = Reader(settings=replace(s, light=replace(s.light, print_glare_colours=False))).trace(glared, "g")
    assert np.array_equal(marks_only.evidence.glare, trace.evidence.glare)
    g = trace.evidence.glare & ~trace.lit.glare
    assert not np.allclose(marks_only.evidence.sources["colour"][g], trace.evidence.sources["colour"][g])
