"""The reader is one pipeline: a photo visits each stage once, in order, and `Reader.trace` hands
back every stage's result. Checked by wrapping each stage's function where the reader calls it."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import vision.decide
import vision.read
from scoring.board import load_board
from vision.calibrate import fit_from_flattened
from vision.fuse import SpaceEvidence
from vision.read import BoardView, Reader
from vision.synth.positions import random_position
from vision.synth.render import render_flat_board, render_photo

BOARD = load_board()
STAGES = ["locate", "flatten", "light", "sample", "net", "colour", "second look", "lanes alone", "fuse", "decide",
          "doubt"]


def _record(monkeypatch, reader: Reader) -> list[str]:
    """Wrap every stage function where the reader calls it; returns the list the calls land in."""
    seen: list[str] = []

    def wrap(owner, name, stage):
        real = getattr(owner, name)

        def stage_call(*args, **kwargs):
            seen.append(stage)
            return real(*args, **kwargs)
        monkeypatch.setattr(owner, name, stage_call)

    for name, stage in (("locate_board", "locate"), ("flatten", "flatten"), ("light_board", "light"),
                        ("sample_spaces", "sample"), ("second_look", "second look"), ("lanes_alone", "lanes alone"),
                        ("SpaceEvidence", "fuse"), ("change_loglik", "change"), ("check_calibration", "check")):
        wrap(vision.read, name, stage)
    wrap(vision.decide, "decide", "decide")
    wrap(vision.decide, "doubt_tracks", "doubt")
    wrap(reader.colour, "loglik", "colour")
    net_predict = reader.net.predict

    def first_look(patches):  # the reader's own call is the net's first look (the refinements look again)
        if sys._getframe(1).f_globals is vars(vision.read):
            seen.append("net")
        return net_predict(patches)
    monkeypatch.setattr(reader, "net", type("Net", (), {"predict": staticmethod(first_look),
                                                        "loglik": reader.net.loglik})())
    return seen


@pytest.fixture(scope="module")
def photo():
    rng = np.random.default_rng(21)
    return render_photo(rng, random_position(rng, BOARD, 4), (1008, 756))


def test_a_photo_visits_each_stage_once_in_order(monkeypatch, photo, tmp_path):
    reader = Reader()
    path = tmp_path / "board.jpg"
    path.write_bytes(photo.jpeg)
    seen = _record(monkeypatch, reader)
    trace = reader.trace_path(str(path))
    assert seen == STAGES
    # Every stage's result is in the trace, one row per space where it is per space.
    n = len(reader.track_ids)
    assert trace.lit.quads_px.shape == (n, 4, 2) and trace.lit.glare.shape == (n,)
    assert trace.samples.net_patches.shape[0] == n and trace.net_first.shape == (n, 6)
    assert set(trace.evidence.sources) == {"colour", "net", "occupancy", "car colour"}
    assert np.allclose(sum(trace.evidence.sources.values()), trace.evidence.loglik)
    assert trace.decision.choice.shape == (len(BOARD.tracks),)
    assert [t.owner for t in trace.tracks] == [t.owner for t in trace.reading.tracks]
    assert trace.reading.tracks == trace.tracks and trace.calibration is None


def test_with_a_calibration_that_fits_the_board_is_read_again_with_it(monkeypatch):
    overhead = np.array([397.0, 262.0, 700.0])
    cal, _ = fit_from_flattened([render_flat_board(np.random.default_rng(31), {}, camera_mm=overhead)], ["e.jpg"],
                                Reader(None, use_classifier=False))
    reader = Reader(cal)
    flat = render_flat_board(np.random.default_rng(31), random_position(np.random.default_rng(5), BOARD, 4),
                             camera_mm=overhead)
    seen = _record(monkeypatch, reader)
    trace = reader.trace_view(BoardView.of_flattened(flat, overhead))
    middle = STAGES[STAGES.index("sample"):STAGES.index("fuse") + 1]
    # Read without it (to see which spaces are surely empty), checked, then read again with it.
    assert seen == (["light"] + middle + ["decide", "doubt", "check"]
                    + ["sample", "net", "change"] + middle[2:] + ["decide", "doubt"])
    assert trace.calibration.used and "change" in trace.evidence.sources
    assert isinstance(trace.evidence, SpaceEvidence)
