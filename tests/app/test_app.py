"""The Streamlit page, driven by Streamlit's AppTest (no browser): setup, photo, corrections,
tickets, results, bad uploads, and the JSON export/restore round trip. (Saving across reloads,
history, undo, the variant switch and the score-track hints: tests/app/test_app_table.py.)

Scores shown on the page are compared with `scoring` called directly, so these tests check the
page's wiring, not the rules (tests/app/test_scoring* do that).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from ttr_testing import start_page

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from app import state as S  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.rules import VARIANTS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "board.jpg"
BOARD = load_board()


@pytest.fixture(autouse=True)
def own_history(tmp_path, monkeypatch):
    """Each test its own games database (the page carries on with the last game saved)."""
    monkeypatch.setenv("TTR_HISTORY_DB", str(tmp_path / "history.sqlite"))


def track_id(a: str, b: str, color: str | None = None) -> int:
    return next(t.id for t in BOARD.tracks_between(a, b) if color in (None, t.color))


start = start_page


def by_hand(at: AppTest, owners: dict[int, str], via_ui: bool = False) -> AppTest:
    """Enter a game without a photo: 'Enter routes by hand', then give each track its owner,
    by picking track and owner as a person does (`via_ui`), or put straight into the page's
    state (quicker, for tests about something else)."""
    at.button(key="by_hand").click().run()
    if via_ui:
        for tid, owner in owners.items():
            at.selectbox(key="sel_track").set_value(tid).run()
            at.segmented_control(key="owner_pick").set_value(owner).run()
    else:
        at.session_state["owners"] = {**at.session_state["owners"], **owners}
        at.run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


# A small two-player game: red owns a chain Denver–Kansas City–Saint Louis–Chicago, blue two tracks.
RED = {track_id("Denver", "Kansas City", "black"): "red", track_id("Kansas City", "Saint Louis", "blue"): "red",
       track_id("Saint Louis", "Chicago", "green"): "red"}
BLUE = {track_id("Seattle", "Portland"): "blue", track_id("Seattle", "Helena"): "blue"}


def test_setup_lists_variants_players_and_names():
    at = start()
    assert at.selectbox(key="variant").options == [VARIANTS[v].title for v in VARIANTS]
    at.multiselect(key="players").set_value(["blue", "red", "yellow"]).run()
    # a name field per player, in the box's colour order
    assert [t.key for t in at.text_input] == ["name_red", "name_blue", "name_yellow"]
    assert [m.key for m in at.multiselect if m.key.startswith("tickets_")] == \
        ["tickets_red", "tickets_blue", "tickets_yellow"]
    at.multiselect(key="players").set_value(["red"]).run()
    assert "at least two" in texts(at.warning)


def test_ticket_labels_follow_the_variant_and_ticket_values():
    at = start()
    options = at.multiselect(key="tickets_red").options
    assert len(options) == 30 and "Denver – El Paso (4)" in options  # base deck, 2004 values
    at.radio(key="ticket_values").set_value("1910").run()
    # Los Angeles–New York is 21 on the 2004 card and 20 on the 1910 reprint
    assert "Los Angeles – New York (20)" in at.multiselect(key="tickets_red").options
    at.multiselect(key="tickets_red").set_value(["Denver – El Paso", "Los Angeles – New York"]).run()
    at.selectbox(key="variant").set_value("mega").run()
    assert len(at.multiselect(key="tickets_red").options) == 69
    assert at.multiselect(key="tickets_red").value == ["Denver – El Paso", "Los Angeles – New York"]
    at.selectbox(key="variant").set_value("1910").run()
    # neither ticket is in the 1910 deck: they are set aside, and said so, not kept invisibly
    assert at.multiselect(key="tickets_red").value == []
    assert len(at.multiselect(key="tickets_red").options) == 35
    assert "Denver – El Paso" in texts(at.info) and "set aside" in texts(at.info)


def test_a_correction_by_hand_is_kept_when_other_things_change():
    at = by_hand(start(), {**RED, **BLUE}, via_ui=True)
    owners = at.session_state["owners"]
    assert {t: owners[t] for t in {**RED, **BLUE}} == {**RED, **BLUE}
    assert sum(1 for o in owners.values() if o) == 5
    # change the owner of one track, then change unrelated things
    tid = next(iter(RED))
    at.selectbox(key="sel_track").set_value(tid).run()
    assert at.segmented_control(key="owner_pick").value == "red"
    at.segmented_control(key="owner_pick").set_value("blue").run()
    at.text_input(key="name_red").set_value("Ada").run()
    at.multiselect(key="tickets_blue").set_value(["Denver – El Paso"]).run()
    at.selectbox(key="sel_track").set_value(next(iter(BLUE))).run()
    assert at.session_state["owners"][tid] == "blue"
    assert at.session_state["owners"][next(iter(BLUE))] == "blue"


def test_clicking_a_space_picks_its_track():
    from app.draw import nearest_track
    from calibration.template import load_template

    tpl = load_template()
    w, h = 1400, round(1400 * tpl.board_mm[1] / tpl.board_mm[0])
    sx, sy = w / tpl.board_mm[0], h / tpl.board_mm[1]
    for track in tpl.tracks:
        for x, y in track.centers():
            assert nearest_track(x * sx, y * sy, w, h) == track.id
    assert nearest_track(2, 2, w, h) is None  # the corner of the board: no track near


def test_results_match_the_scoring_engine_and_name_the_winner():
    from scoring.game import Game
    from scoring.score import score_game

    at = by_hand(start(), {**RED, **BLUE})
    at.multiselect(key="tickets_red").set_value(["Denver – El Paso"]).run()  # failed: -4
    at.multiselect(key="tickets_blue").set_value(["Seattle – Los Angeles"]).run()  # failed: -9
    at.text_input(key="name_red").set_value("Ada").run()
    assert not at.exception, at.exception
    claims = {"red": sorted(RED), "blue": sorted(BLUE)}
    sheet = score_game(Game.from_claims("classic", claims,
                                        tickets={"red": [("Denver", "El Paso")],
                                                 "blue": [("Seattle", "Los Angeles")]})).to_dict()
    tables = [t.value for t in at.table]
    assert len(tables) == 2
    for p, df in zip(sheet["players"], tables):
        rows = dict(zip(df.iloc[:, 0], df.iloc[:, 1]))
        assert rows["Total"] == p["total"]
        assert rows[f"Routes ({p['trains']} trains)"] == p["route_points"]
        for t in p["tickets"]:
            mark = "✓" if t["completed"] else "✗"
            assert rows[f"{mark} {t['a']} – {t['b']}"] == (t["points"] if t["completed"] else -t["points"])
    (winner,) = sheet["winners"]
    assert f"{'Ada (red)' if winner == 'red' else 'Blue'} wins" in texts(at.success)


def test_the_bonus_rows_follow_the_variant():
    at = by_hand(start(), {**RED, **BLUE})
    at.selectbox(key="variant").set_value("1910").run()
    items = list(at.table[0].value.iloc[:, 0])
    assert any(i.startswith("Globetrotter") for i in items)
    assert not any(i.startswith("Longest path") for i in items)
    at.selectbox(key="variant").set_value("mega").run()
    items = list(at.table[0].value.iloc[:, 0])
    assert any(i.startswith("Globetrotter") for i in items) and any(i.startswith("Longest path") for i in items)


def test_tied_longest_paths_are_both_drawn():
    six = [t for t in BOARD.tracks if t.length == 6 and BOARD.double_of(t) is None]
    at = by_hand(start(), {six[0].id: "red", six[1].id: "blue"})
    holders = [p["color"] for p in S.score(S.TableState(players=["red", "blue"], owners={
        six[0].id: "red", six[1].id: "blue"})).sheet["players"] if p["longest_path_bonus"]]
    assert holders == ["red", "blue"]  # (the engine says both hold the card)
    assert at.radio(key="path_pick").value == "bonus"
    caption = at.image[-1].proto.imgs[0].caption if at.image else ""
    assert f"Red: 6 trains, {six[0].a} – {six[0].b}" in caption or f"Red: 6 trains, {six[0].b} – {six[0].a}" in caption
    assert "Blue: 6 trains" in caption
    at.radio(key="path_pick").set_value("blue").run()
    assert "Red" not in at.image[-1].proto.imgs[0].caption


def test_a_colour_on_the_board_but_not_in_the_setup_is_still_scored():
    at = by_hand(start(), {**RED, **BLUE})
    at.multiselect(key="players").set_value(["red", "green"]).run()
    assert "Blue: tracks on the board but not a player" in texts(at.warning)
    assert len(at.table) == 3  # red, green, and blue (whose tracks count)
    assert "by_hand" not in [b.key for b in at.button]  # would throw the board away


def test_score_track_mismatch_is_called_out():
    at = by_hand(start(), {**RED, **BLUE})
    route_points = sum((1, 2, 4, 7, 10, 15)[BOARD.tracks[t].length - 1] for t in RED)
    at.number_input(key="marker_red").set_value(route_points).run()
    assert "marker says" not in texts(at.warning)
    assert f"Score track {route_points}: matches the routes ✓" in texts(at.caption)
    # the verdict beside the marker, at once (its label)
    assert at.number_input(key="marker_red").label == f":green[✓ routes make {route_points}]"
    assert at.number_input(key="marker_blue").label == "Score track"  # (no marker, no verdict)
    at.number_input(key="marker_red").set_value(route_points + 3).run()
    assert f"The marker says {route_points + 3}, the routes on the board make {route_points} (3 short)." \
        in texts(at.warning)
    assert "No single track explains it" in texts(at.warning)  # (no photo: any track could, none does)
    assert at.number_input(key="marker_red").label == f":red[**✗ routes make {route_points}**]"
    assert at.number_input(key="marker_red").value == route_points + 3


@pytest.fixture(scope="module")
def example_reading():
    """The example photo read directly (the reader is deterministic; the page must show this)."""
    from vision.read import Reader

    return Reader().read_path(str(EXAMPLE))


def test_the_example_photo_is_read_and_shown_for_checking(example_reading):
    at = start()
    at.button(key="example").click().run()
    assert not at.exception, at.exception
    owners = {t.track_id: t.owner for t in example_reading.tracks}
    assert at.session_state["owners"] == owners
    claimed = sum(1 for o in owners.values() if o)
    assert f"board.jpg: {claimed} tracks claimed, read in " in texts(at.success)
    assert texts(at.success).count(" s.") == 1  # one read time
    # the colours on the board are the players, in the box's order
    assert at.multiselect(key="players").value == S.sort_players(example_reading.claims())
    # doubtful tracks head the track list, least sure first, and how many are left is said
    doubtful = sorted(example_reading.doubtful, key=lambda t: t.confidence)
    assert at.selectbox(key="sel_track").options[:len(doubtful)] == \
        [S.CHECK_MARK + S.track_label(BOARD.tracks[t.track_id]) for t in doubtful]
    assert f"**{len(doubtful)} to check**" in texts(at.markdown)
    assert at.button(key="next_check").label == f"Next to check ({len(doubtful)} left)"
    assert len(at.table) == len(at.multiselect(key="players").value)  # a result per player


def test_a_player_already_entered_stays_when_the_photo_is_read(example_reading):
    absent = next(c for c in ("red", "blue", "green", "yellow", "black") if c not in example_reading.claims())
    at = start()
    at.multiselect(key="players").set_value(S.sort_players({absent, "blue"})).run()
    at.text_input(key=f"name_{absent}").set_value("Ada").run()
    at.button(key="example").click().run()
    assert at.multiselect(key="players").value == S.sort_players(set(example_reading.claims()) | {absent})
    assert at.text_input(key=f"name_{absent}").value == "Ada"


def test_correcting_a_track_of_the_photo_changes_the_score(example_reading):
    at = start()
    at.button(key="example").click().run()
    track = max((t for t in example_reading.tracks if t.owner and not t.doubtful), key=lambda t: t.length)
    totals = {t.value.iloc[-1, 1] for t in at.table}
    at.selectbox(key="sel_track").set_value(track.track_id).run()
    assert at.segmented_control(key="owner_pick").value == track.owner
    at.segmented_control(key="owner_pick").set_value("nobody").run()
    assert at.session_state["owners"][track.track_id] is None
    assert f"Corrected: the photo read {track.owner}, {track.confidence:.0%} sure." in texts(at.caption)
    assert {t.value.iloc[-1, 1] for t in at.table} != totals
    at.button(key="undo").click().run()
    assert at.session_state["owners"][track.track_id] == track.owner


def test_a_camera_photo_is_read_like_an_upload(example_reading):
    at = start()
    at.toggle(key="use_camera").set_value(True).run()
    at.camera_input(key="camera").set_value(("camera.jpg", EXAMPLE.read_bytes(), "image/jpeg")).run()
    assert not at.exception, at.exception
    assert at.session_state["owners"] == {t.track_id: t.owner for t in example_reading.tracks}


def test_claims_that_break_a_rule_are_scored_with_what_to_check_and_can_be_saved():
    # 8 long tracks for red: more than 45 trains
    long_ones = sorted((t for t in BOARD.tracks if BOARD.double_of(t) is None), key=lambda t: -t.length)[:8]
    assert sum(t.length for t in long_ones) > 45
    at = by_hand(start(), {t.id: "red" for t in long_ones})
    assert not at.exception, at.exception
    assert "Not counted until checked:** 1 track the rules forbid" in texts(at.warning)
    assert len(at.table) == 2  # scored all the same
    aside = [o for o in at.selectbox(key="sel_track").options if o.startswith(S.CHECK_MARK)]
    assert len(aside) == 1  # the track set aside heads the track list, marked to check
    at.button(key="check_aside").click().run()  # its reason, in one line
    trains = sum(t.length for t in long_ones)
    assert f"Red has {trains} trains on the board, 45 at most: not counted until checked." in texts(at.caption)
    saved = json.loads(download(at, "dl_json"))  # Save works, and `ttr tally` takes the file
    red = next(p for p in saved["players"] if p["color"] == "red")
    assert sum(BOARD.tracks[track_id(*r)].length for r in red["routes"]) <= 45
    # give one of red's tracks to blue: the rules hold, nothing is set aside
    at.selectbox(key="sel_track").set_value(long_ones[0].id).run()
    at.segmented_control(key="owner_pick").set_value("blue").run()
    assert "Not counted" not in texts(at.warning)
    assert len(at.table) == 2


def test_a_photo_without_a_board_says_so_and_keeps_the_game():
    import cv2
    import numpy as np

    at = by_hand(start(), RED)
    ok, png = cv2.imencode(".png", np.full((600, 800, 3), 128, np.uint8))
    at.file_uploader(key="photo").set_value(("wall.png", png.tobytes(), "image/png")).run()
    assert not at.exception, at.exception
    assert "wall.png: no Ticket to Ride board found" in texts(at.error)
    assert {t: at.session_state["owners"][t] for t in RED} == RED


def test_a_photo_too_large_is_refused_before_reading():
    at = start()
    big = b"\xff\xd8\xff" + bytes(31 * 1024 * 1024)
    at.file_uploader(key="photo").set_value(("huge.jpg", big, "image/jpeg")).run()
    assert not at.exception, at.exception
    assert "huge.jpg is 31 MB" in texts(at.error)


BLANK = ROOT.parent / "shared" / "real" / "dev" / "IMG_4048_blank_small.jpg"


@pytest.mark.skipif(not BLANK.exists(), reason="../shared/real (an empty board's photo) is not there")
def test_calibration_is_saved_used_and_forgotten(tmp_path, monkeypatch):
    monkeypatch.setenv("TTR_CALIBRATION_DIR", str(tmp_path / "cal"))
    at = start()
    assert at.button(key="calibrate").disabled  # nothing to calibrate from yet
    # a played board is refused, by name
    at.file_uploader(key="calib_photos").set_value([("played.jpg", EXAMPLE.read_bytes(), "image/jpeg")]).run()
    at.button(key="calibrate").click().run()
    assert "played.jpg" in texts(at.error) and not (tmp_path / "cal" / "calibration.json").exists()
    at.file_uploader(key="calib_photos").set_value([("empty.jpg", BLANK.read_bytes(), "image/jpeg")]).run()
    at.button(key="calibrate").click().run()
    assert not at.exception, at.exception
    assert (tmp_path / "cal" / "calibration.json").exists()
    assert "Calibrated from 1 photo(s)" in texts(at.success)
    assert not any("/tmp" in t for t in (texts(at.success), texts(at.error)))  # named as uploaded
    at.button(key="example").click().run()  # read with the calibration
    assert not at.exception, at.exception
    assert "tracks claimed" in texts(at.success)
    at.button(key="forget_calibration").click().run()
    assert not (tmp_path / "cal" / "calibration.json").exists()


def test_a_photo_that_is_not_a_board_cannot_calibrate(tmp_path, monkeypatch):
    monkeypatch.setenv("TTR_CALIBRATION_DIR", str(tmp_path / "cal"))
    at = start()
    at.file_uploader(key="calib_photos").set_value([("shopping.jpg", b"milk, eggs", "image/jpeg")]).run()
    at.button(key="calibrate").click().run()
    assert not at.exception, at.exception
    assert "shopping.jpg" in texts(at.error) and "not an image" in texts(at.error)
    assert not (tmp_path / "cal").exists()


def test_bad_upload_shows_a_message_and_keeps_the_game():
    at = by_hand(start(), RED)
    at.multiselect(key="tickets_red").set_value(["Denver – El Paso"]).run()
    at.file_uploader(key="photo").set_value(("notes.jpg", b"these are not pixels", "image/jpeg")).run()
    assert not at.exception, at.exception
    assert "notes.jpg" in texts(at.error) and "not an image" in texts(at.error)
    assert {t: at.session_state["owners"][t] for t in RED} == RED
    assert at.multiselect(key="tickets_red").value == ["Denver – El Paso"]


def test_json_export_restores_the_same_game():
    at = by_hand(start(), {**RED, **BLUE})
    at.multiselect(key="players").set_value(["red", "blue", "green"]).run()
    at.multiselect(key="tickets_red").set_value(["Denver – El Paso", "Chicago – New Orleans"]).run()
    at.number_input(key="marker_blue").set_value(6).run()
    at.text_input(key="name_red").set_value("Ada").run()
    saved = download(at, "dl_json").encode()
    game = json.loads(saved)
    assert game["variant"] == "classic" and [p["color"] for p in game["players"]] == ["red", "blue", "green"]
    assert [p.get("name") for p in game["players"]] == ["Ada", None, None]

    fresh = start()
    fresh.file_uploader(key="restore").set_value(("ttr-game.json", saved, "application/json")).run()
    assert not fresh.exception, fresh.exception
    assert {k: v for k, v in fresh.session_state["owners"].items() if v} == {**RED, **BLUE}
    assert fresh.multiselect(key="players").value == ["red", "blue", "green"]
    assert fresh.multiselect(key="tickets_red").value == ["Denver – El Paso", "Chicago – New Orleans"]
    assert fresh.number_input(key="marker_blue").value == 6
    assert fresh.text_input(key="name_red").value == "Ada"
    assert download(fresh, "dl_json").encode() == saved


def test_the_saved_game_is_a_file_ttr_tally_scores_the_same(tmp_path):
    import subprocess

    at = by_hand(start(), {**RED, **BLUE})
    at.multiselect(key="tickets_blue").set_value(["Seattle – Los Angeles"]).run()
    path = tmp_path / "ttr-game.json"
    path.write_text(download(at, "dl_json"), encoding="utf-8")
    out = subprocess.run(["ttr", "tally", str(path), "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    tally = {p["color"]: p["total"] for p in json.loads(out.stdout)["players"]}
    shown = {c: t.value.iloc[-1, 1] for c, t in zip(["red", "blue"], at.table)}
    assert tally == shown


def test_the_csv_score_sheet_adds_up_to_each_total():
    import csv
    import io

    tab = S.TableState(players=["red", "blue"], owners={**RED, **BLUE},
                       tickets={"red": ["Denver – El Paso"], "blue": ["Seattle – Los Angeles"]})
    sheet = S.score(tab).sheet
    rows = list(csv.DictReader(io.StringIO(S.sheet_csv(sheet))))
    for p in sheet["players"]:
        mine = [r for r in rows if r["player"] == p["color"]]
        parts = sum(int(r["points"]) for r in mine
                    if r["item"] in ("route", "ticket", "longest path", "globetrotter"))
        assert parts == p["total"] == int(next(r["points"] for r in mine if r["item"] == "total"))
        assert sum(int(r["points"]) for r in mine if r["item"] == "route") == p["route_points"]


def test_a_broken_game_file_is_refused_with_a_message():
    at = by_hand(start(), RED)
    at.file_uploader(key="restore").set_value(("game.json", b'{"variant": "classic", "players": [', "application/json")).run()
    assert not at.exception, at.exception
    assert "game.json" in texts(at.error)
    assert {t: at.session_state["owners"][t] for t in RED} == RED


def download(at: AppTest, key: str) -> str:
    """The bytes the page offers on a download button (it keeps them in its state)."""
    assert at.download_button(key=key).proto.label
    return at.session_state["saved_json"]


def test_every_track_has_its_own_label():
    """The track list tells the two tracks of a gray double apart (a list with two equal labels
    would pick the wrong one)."""
    labels = [S.track_label(t) for t in BOARD.tracks]
    assert len(set(labels)) == len(BOARD.tracks)
    assert S.track_label(BOARD.tracks[track_id("Denver", "Kansas City", "black")]) == \
        "Denver – Kansas City (4-train black track)"
