"""Hostile uploads to the page: one upload limit however the page is started, saved games and photos
that the command line refuses are refused on the page too, each a message, quickly, with what was
entered kept.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import state as S
from app.launch import MAX_UPLOAD_MB, PAGE, command
from scoring.errors import TtrError

ROOT = Path(__file__).resolve().parents[2]

HOSTILE_GAMES = {
    "nested": b'{"players": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "score_5000_digits": b'{"players": [{"color": "red", "score_track": ' + b"9" * 5000 + b"}]}",
    "city_1mb": json.dumps({"players": [{"color": "red", "routes": [["D" * 999_000, "Omaha"]]}]}).encode(),
    "unknown_cities_2mb": json.dumps({"players": [{"color": "red", "routes": [["Xq%d" % i, "Omaha"]
                                                                              for i in range(120_000)]}]}).encode(),
    "players_object": b'{"players": {"red": {}}}',
    "binary": bytes(range(256)) * 100,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_GAMES))
def test_restoring_a_hostile_game_file_is_one_quick_error(name):
    t0 = time.perf_counter()
    with pytest.raises(TtrError):
        S.restore(HOSTILE_GAMES[name], f"{name}.json")
    assert time.perf_counter() - t0 < 1.0


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_restore_of_any_bytes_is_a_table_or_a_message(data):
    try:
        S.restore(data)
    except TtrError as e:
        assert str(e)


def test_one_upload_limit_for_every_way_of_starting_the_page():
    # `ttr app` passes it; `streamlit run` from the project folder reads the shipped config
    cmd = command(8501)
    assert cmd[cmd.index("--server.maxUploadSize") + 1] == str(MAX_UPLOAD_MB)
    shipped = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert shipped["server"]["maxUploadSize"] == MAX_UPLOAD_MB
    read = subprocess.run([sys.executable, "-c", "from streamlit import config; config.get_config_options(); "
                           "print(config.get_option('server.maxUploadSize'))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert read.stdout.strip().splitlines()[-1] == str(MAX_UPLOAD_MB)


@pytest.fixture(scope="module")
def page():
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def test_every_uploader_carries_the_limit_to_the_browser(page):
    # however the server was started, the browser refuses a bigger file before sending it
    limits = {f.proto.id.rsplit("-", 1)[-1]: f.proto.max_upload_size_mb for f in page.get("file_uploader")}
    assert limits == {"photo": MAX_UPLOAD_MB, "restore": MAX_UPLOAD_MB, "calib_photos": MAX_UPLOAD_MB}


def _errors(at) -> str:
    return "\n".join(str(e.value) for e in at.error)


def test_hostile_uploads_are_messages_and_what_was_entered_stays(page):
    at = page
    at.text_input(key="name_red").set_value("Ada").run()
    for name in ("nested", "score_5000_digits", "players_object"):
        t0 = time.perf_counter()
        at.file_uploader(key="restore").set_value((f"{name}.json", HOSTILE_GAMES[name], "application/json")).run()
        assert time.perf_counter() - t0 < 10
        assert not at.exception, at.exception
        assert f"{name}.json" in _errors(at)
        assert at.text_input(key="name_red").value == "Ada"
    thin = cv2.imencode(".png", np.zeros((50000, 2, 3), np.uint8))[1].tobytes()
    at.file_uploader(key="photo").set_value(("thin.png", thin, "image/png")).run()
    assert not at.exception, at.exception
    assert "thin.png" in _errors(at) and "64 pixels" in _errors(at)
    assert at.text_input(key="name_red").value == "Ada"
