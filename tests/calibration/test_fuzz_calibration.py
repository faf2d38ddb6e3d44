"""Calibration folders as an adversary (or a careless tool) leaves them (hypothesis): a calibration
loads only when every part is right, and anything else is one `CalibrationError` line naming the
part; saving is atomic (a failure keeps the calibration that was there).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.template import FLAT_PX_PER_MM as PX_PER_MM
from calibration.user import MAX_VIEWS, N_SPACES, Calibration, CalibrationError, EmptyView, load_calibration
from vision.rectify import flattened_size

W, H = flattened_size(PX_PER_MM)
RNG = np.random.default_rng(7)
BOARD = RNG.integers(0, 255, (H, W, 3), dtype=np.uint8)
FAST = settings(max_examples=50, deadline=3000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder holding one good board image (board.png) for the generated calibration.json files."""
    d = tmp_path_factory.mktemp("cal")
    (d / "board.png").write_bytes(cv2.imencode(".png", BOARD)[1].tobytes())
    return d


def good_view() -> dict:
    return {"photo": "empty.jpg", "board": "board.png", "lab": RNG.uniform(0, 255, (N_SPACES, 3)).round(2).tolist(),
            "spread": RNG.uniform(0, 20, (N_SPACES, 3)).round(2).tolist(),
            "mean": RNG.uniform(0, 255, (N_SPACES, 3)).round(2).tolist()}


numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10 ** 6, 10 ** 6),
                    st.sampled_from([float("nan"), float("inf"), -1.0, 300.0, 1e300]))
odd_array = st.one_of(
    st.lists(st.lists(numbers, min_size=3, max_size=3), min_size=0, max_size=12),
    st.integers(0, 400).flatmap(lambda n: st.just([[1.0, 2.0, 3.0]] * n)),
    st.just([[1.0, 2.0]] * N_SPACES), st.just([[1.0, 2.0, 3.0, 4.0]] * N_SPACES),
    st.just("309 colours"), st.none(), st.just({"L": 1}))


@st.composite
def damaged_views(draw):
    views = [good_view() for _ in range(draw(st.integers(1, 3)))]
    for _ in range(draw(st.integers(1, 3))):
        v = views[draw(st.integers(0, len(views) - 1))]
        what = draw(st.sampled_from(["array", "one_value", "board", "photo", "drop", "extra"]))
        if what == "array":
            v[draw(st.sampled_from(["lab", "spread", "mean"]))] = draw(odd_array)
        elif what == "one_value":
            key = draw(st.sampled_from(["lab", "spread", "mean"]))
            if isinstance(v.get(key), list) and len(v[key]) == N_SPACES and all(
                    isinstance(row, list) and len(row) == 3 for row in v[key]):
                v[key][draw(st.integers(0, N_SPACES - 1))][draw(st.integers(0, 2))] = draw(numbers)
        elif what == "board":
            v["board"] = draw(st.one_of(st.just("missing.png"), st.just("../../../etc/passwd"), st.just(""),
                                        st.integers(), st.text(max_size=300)))
        elif what == "photo":
            v["photo"] = draw(st.one_of(st.integers(), st.just("p" * 5000), st.none()))
        elif what == "drop":
            v.pop(draw(st.sampled_from(["lab", "spread", "board"])), None)
        else:
            v[draw(st.text(max_size=10))] = draw(numbers)
    return views


def _write(folder: Path, data) -> None:
    (folder / "calibration.json").write_text(json.dumps(data, allow_nan=True))


def _assert_sound(cal: Calibration) -> None:
    """What the reader may rely on in a calibration that loaded."""
    assert 1 <= len(cal.views) <= MAX_VIEWS
    for v in cal.views:
        assert v.board_bgr.shape == (H, W, 3)
        for a in (v.lab, v.spread, v.mean):
            assert a.shape == (N_SPACES, 3) and np.isfinite(a).all()
        assert (v.spread >= 0).all()


@FAST
@given(damaged_views())
def test_a_damaged_view_loads_only_if_sound_else_one_line(folder, views):
    _write(folder, {"format": 2, "spaces": N_SPACES, "views": views})
    try:
        cal = load_calibration(folder)
    except CalibrationError as e:
        msg = str(e)
        assert "\n" not in msg and msg and len(msg) < 400
    else:
        _assert_sound(cal)


@FAST
@given(st.integers(0, 2000))
def test_the_number_of_views_is_capped(folder, n):
    _write(folder, {"views": [{"board": "board.png"}] * n})  # views without arrays: the count comes first
    with pytest.raises(CalibrationError) as e:
        load_calibration(folder)
    if n == 0:
        assert "no views" in str(e.value)
    elif n > MAX_VIEWS:
        assert f"holds {n} views; at most {MAX_VIEWS}" in str(e.value)
    else:
        assert 'has no "lab"' in str(e.value)


@pytest.mark.parametrize("bad,phrase", [
    (float("nan"), "NaN"), (float("inf"), "NaN or infinite"), (1e6, "outside"),
])
def test_the_message_names_the_view_and_what_is_wrong(bad, phrase):
    lab = RNG.uniform(0, 255, (N_SPACES, 3))
    lab[5, 1] = bad
    with pytest.raises(CalibrationError, match=f"calibration view 1: lab .*{phrase}"):
        Calibration((EmptyView(BOARD, lab, np.ones((N_SPACES, 3))),))


def test_nan_written_into_the_file_is_refused(folder):
    v = good_view()
    v["lab"][0][0] = math.nan
    _write(folder, {"views": [v]})
    with pytest.raises(CalibrationError, match="number NaN is not allowed"):
        load_calibration(folder)


def test_a_good_calibration_loads(folder):
    _write(folder, {"format": 2, "spaces": N_SPACES, "views": [good_view(), good_view()]})
    cal = load_calibration(folder)
    _assert_sound(cal)
    assert np.array_equal(cal.views[0].board_bgr, BOARD)


def test_a_failed_save_keeps_the_calibration_that_was_there(tmp_path, monkeypatch):
    view = EmptyView(BOARD, RNG.uniform(0, 255, (N_SPACES, 3)), RNG.uniform(0, 20, (N_SPACES, 3)), "a.jpg")
    Calibration((view,)).save(tmp_path)
    before = load_calibration(tmp_path)
    import scoring.files

    calls = {"n": 0}
    real_replace = scoring.files.os.replace

    def failing_replace(src, dst):  # the JSON's rename fails (disk full, power cut...)
        calls["n"] += 1
        if str(dst).endswith("calibration.json"):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(scoring.files.os, "replace", failing_replace)
    other = EmptyView(BOARD[::-1].copy(), RNG.uniform(0, 255, (N_SPACES, 3)), RNG.uniform(0, 20, (N_SPACES, 3)),
                      "b.jpg")
    with pytest.raises(CalibrationError, match="No space left"):
        Calibration((other, other)).save(tmp_path)
    assert calls["n"] == 3  # two board images, then the JSON
    monkeypatch.undo()
    after = load_calibration(tmp_path)
    assert after.photos == before.photos == ("a.jpg",)
    assert np.array_equal(after.views[0].board_bgr, BOARD)
    assert not list(tmp_path.glob(".tmp-*"))
