"""The page at the table, through Streamlit's AppTest: nothing lost (saved as it changes, restored
on a reload, undo one step at a time, tickets set aside by a variant switch come back), no dead
end on a real photo that breaks the rules, the score track pointing at a misread track, doubt in
words, and the games history (page and `ttr history`)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from ttr_testing import doubt_taken_for_nobody, start_page

pytest.importorskip("streamlit")

from app import state as S  # noqa: E402
from app.history import GameSummary, History, PlayerTotal  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.rules import route_points  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# the installed command (the one on PATH beside this Python, as `pip install` puts it)
TTR = shutil.which("ttr", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])) or "ttr"
EXAMPLE = ROOT / "examples" / "board.jpg"
REAL_48 = ROOT.parent / "shared" / "real" / "dev" / "IMG_4134_small.jpg"
BOARD = load_board()


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite"
    monkeypatch.setenv("TTR_HISTORY_DB", str(path))
    return path


def tid(a, b, color=None):
    return next(t.id for t in BOARD.tracks_between(a, b) if color in (None, t.color))


start = start_page


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def labels(at) -> list[str]:
    return [b.label for b in at.button]


def give(at, track: int, owner: str) -> None:
    at.selectbox(key="sel_track").set_value(track).run()
    at.segmented_control(key="owner_pick").set_value(owner).run()
    assert not at.exception, at.exception


def truth_owners() -> dict[int, str | None]:
    truth = json.loads((ROOT / "examples" / "board.truth.json").read_text())
    out: dict[int, str | None] = {}
    for entry in truth["tracks"]:
        ids = [t.id for t in BOARD.tracks_between(entry["a"], entry["b"]) if t.color == entry["color"]]
        out[next(i for i in ids if i not in out)] = entry["owner"]
    return out


# ---------------------------------------------------------------- undo, variant switch

def test_undo_takes_back_one_change_at_a_time():
    at = start()
    at.button(key="by_hand").click().run()
    a, b, c = tid("Denver", "Kansas City", "black"), tid("Seattle", "Helena"), tid("Denver", "Kansas City", "orange")
    give(at, a, "red")
    give(at, b, "blue")
    give(at, a, "blue")  # the same track again: its own step
    give(at, c, "red")
    owners = lambda: {k: at.session_state["owners"][k] for k in (a, b, c)}  # noqa: E731
    assert owners() == {a: "blue", b: "blue", c: "red"}
    assert "Undo: Denver – Kansas City back to nobody" in labels(at)
    at.button(key="undo").click().run()
    assert owners() == {a: "blue", b: "blue", c: None}
    at.button(key="undo").click().run()
    assert owners() == {a: "red", b: "blue", c: None}
    assert "Undo: Helena – Seattle back to nobody" in labels(at)
    at.button(key="undo").click().run()
    assert owners() == {a: "red", b: None, c: None}
    at.button(key="undo").click().run()
    assert owners() == {a: None, b: None, c: None}
    assert "undo" not in [b.key for b in at.button]


def test_a_variant_switch_keeps_the_tickets_in_the_new_deck_and_restores_the_others():
    base = "Denver – El Paso"  # classic (and mega), not 1910
    new = next(k for k in S.ticket_labels("1910", "1910") if k not in S.ticket_labels("classic", "2004"))
    at = start()
    at.multiselect(key="tickets_red").set_value([base]).run()
    at.selectbox(key="variant").set_value("mega").run()
    assert at.multiselect(key="tickets_red").value == [base]  # in the mega deck: kept
    assert not at.info
    at.selectbox(key="variant").set_value("1910").run()
    assert at.multiselect(key="tickets_red").value == []
    assert f"Red: {base}" in texts(at.info)  # said what was set aside
    assert f"Set aside (not in this deck): {base}" in texts(at.caption)
    at.multiselect(key="tickets_red").set_value([new]).run()
    at.selectbox(key="variant").set_value("classic").run()
    assert at.multiselect(key="tickets_red").value == [base]  # back
    assert f"Set aside (not in this deck): {new}" in texts(at.caption)
    at.selectbox(key="variant").set_value("mega").run()
    assert sorted(at.multiselect(key="tickets_red").value) == sorted([base, new])
    assert "Set aside" not in texts(at.caption)


def test_switch_variant_in_state_is_pure():
    tab = S.TableState(tickets={"red": ["Denver – El Paso"]})
    moved = S.switch_variant(tab, "1910")
    assert moved == {"red": ["Denver – El Paso"]} and tab.tickets == {"red": []}
    assert S.switch_variant(tab, "mega") == {} and tab.tickets == {"red": ["Denver – El Paso"]}


# ---------------------------------------------------------------- saved as it changes

def test_a_reload_finds_the_game_as_it_was(db):
    at = start()
    at.button(key="example").click().run()
    psl = tid("Portland", "Salt Lake City", "blue")
    give(at, psl, "green")  # a correction (read blue)
    at.text_input(key="name_blue").set_value("Ada").run()
    at.multiselect(key="tickets_blue").set_value(["Denver – El Paso"]).run()
    at.number_input(key="marker_green").set_value(40).run()
    game_id = at.query_params["game"]
    assert game_id
    before = {k: at.session_state[k] for k in ("owners", "players")}
    shown = [t.value.iloc[-1, 1] for t in at.table]

    for again in (start(game_id), start()):  # the address names the game; without one, the last game
        assert again.session_state["owners"] == before["owners"]
        assert again.multiselect(key="players").value == before["players"]
        assert again.text_input(key="name_blue").value == "Ada"
        assert again.multiselect(key="tickets_blue").value == ["Denver – El Paso"]
        assert again.number_input(key="marker_green").value == 40
        assert again.session_state["photo_check"].image == "board.jpg"
        assert again.session_state["photo_check"].board_jpeg[:2] == b"\xff\xd8"  # the photo, drawn on
        assert [t.value.iloc[-1, 1] for t in again.table] == shown
        assert again.session_state["steps"] == [S.Step(psl, "blue", "green")]
    # undo still works after the reload
    again.button(key="undo").click().run()
    assert again.session_state["owners"][psl] == "blue"


def test_new_game_starts_empty_and_keeps_the_old_one(db):
    at = start()
    at.button(key="by_hand").click().run()
    give(at, tid("Seattle", "Helena"), "red")
    first = at.query_params["game"]
    at.button(key="new_game").click().run()
    assert at.query_params["game"] != first
    assert not any(at.session_state["owners"].values())
    assert History(db).load(first) is not None


# ---------------------------------------------------------------- history

def test_history_adds_lists_opens_and_deletes_games(db):
    at = start()
    at.button(key="by_hand").click().run()
    give(at, tid("Seattle", "Helena"), "red")  # 6 trains, 15 points
    at.text_input(key="name_red").set_value("Ada").run()
    first = at.query_params["game"]
    games = History(db).games()
    assert [g.id for g in games] == [first]
    assert {p.color: p.total for p in games[0].summary.players} == {"red": 15 + 10, "blue": 0}
    assert games[0].summary.winner_text() == "Ada"

    at.button(key="new_game").click().run()
    at.button(key="by_hand").click().run()
    give(at, tid("Denver", "Kansas City", "black"), "blue")
    second = at.query_params["game"]
    md = texts(at.markdown)
    assert "Ada 25" in md and "winner: Ada" in md and "Blue 17" in md
    assert [g.id for g in History(db).games()] == [second, first]  # the one changed last first

    at.button(key=f"open_{first}").click().run()
    assert at.query_params["game"] == first
    assert at.text_input(key="name_red").value == "Ada"
    assert at.session_state["owners"][tid("Seattle", "Helena")] == "red"

    at.button(key=f"delete_{second}").click().run()  # Delete asks first; "Keep it" keeps it
    assert {g.id for g in History(db).games()} == {first, second}
    assert "for good? It cannot be undone." in texts(at.warning)
    at.button(key="delete_no").click().run()
    assert len(History(db).games()) == 2 and "delete_yes" not in [b.key for b in at.button]
    at.button(key=f"delete_{second}").click().run()
    at.button(key="delete_yes").click().run()
    assert [g.id for g in History(db).games()] == [first]
    assert f"open_{second}" not in [b.key for b in at.button]
    at.button(key=f"delete_{first}").click().run()  # this game: a new one takes its place
    at.button(key="delete_yes").click().run()
    assert History(db).games() == [] and at.query_params["game"] != first


def test_ttr_history_lists_the_games(db):
    hist = History(db)
    hist.save("g1", {"table": {}}, GameSummary("classic", (PlayerTotal("red", "Ada", 90),
                                                          PlayerTotal("blue", "", 77)), ("red",)))
    hist.save("g2", {"table": {}})  # not scored yet: not listed
    run = lambda *a: subprocess.run([TTR, "history", "--db", str(db), *a],  # noqa: E731
                                    capture_output=True, text=True, cwd=ROOT)
    r = run("--json")
    assert r.returncode == 0, r.stderr
    (line,) = [json.loads(x) for x in r.stdout.splitlines()]
    assert line["id"] == "g1" and line["variant"] == "classic" and line["winners"] == ["red"]
    assert line["players"] == [{"color": "red", "name": "Ada", "total": 90}, {"color": "blue", "name": "", "total": 77}]
    text = run().stdout
    assert "Ada 90, blue 77" in text and "winner: Ada" in text and "[g1]" in text
    assert run("--delete", "g1").returncode == 0 and run("--json").stdout == ""
    bad = subprocess.run([TTR, "history", "--db", str(db.parent / "none.sqlite")],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr.startswith("ttr: error:") and "no such file" in bad.stderr


# ---------------------------------------------------------------- the photo

@pytest.fixture(scope="module")
def example_reading():
    from vision.read import Reader

    return Reader().read_path(str(EXAMPLE))


def test_the_score_track_names_the_misread_track_and_fixes_it(example_reading):
    truth = truth_owners()
    # the example's doubtful track a player might take for nobody, sure the print is bare (now
    # Atlanta – New Orleans: yellow cars on yellow print, 4 trains)
    doubt = doubt_taken_for_nobody(example_reading)
    track, owner = BOARD.tracks[doubt.track_id], doubt.owner
    pts = route_points(track.length)
    read = {t.track_id: t.owner for t in example_reading.tracks}
    # the premise: the example reads right (doubles printed alike as pairs), that track too; then
    # it is taken for nobody
    assert truth[doubt.track_id] == owner and read[doubt.track_id] == owner
    def by_route(owners):  # the lanes of a double printed alike as a pair
        out = {}
        for i, o in owners.items():
            t = BOARD.tracks[i]
            out.setdefault((t.a, t.b, t.color), Counter())[o] += 1
        return out

    assert by_route(read) == by_route(truth)
    at = start()
    at.button(key="example").click().run()
    at.session_state["owners"][doubt.track_id] = None
    at.run()
    for c in at.multiselect(key="players").value:  # every marker, where the true route points put it
        at.number_input(key=f"marker_{c}").set_value(
            sum(route_points(BOARD.tracks[i].length) for i, o in truth.items() if o == c)).run()
    marker = sum(route_points(BOARD.tracks[i].length) for i, o in truth.items() if o == owner)
    warning = texts(at.warning)
    assert f"The marker says {marker}, the routes on the board make {marker - pts} ({pts} short)" in warning
    assert "every marker agrees" in warning
    fixes = [b for b in at.button if b.key and b.key.startswith("fix_")]
    assert [b.key for b in fixes] == [f"fix_{owner}_0"]  # at its owner's marker
    assert fixes[0].label == (f"Give {S.track_label(track)} to {owner.capitalize()}: {pts} points "
                              f"(the photo gives {owner.capitalize()} {doubt.confidence:.0%})")
    fixes[0].click().run()
    assert at.session_state["owners"][doubt.track_id] == owner
    assert "marker says" not in texts(at.warning)
    assert texts(at.caption).count("matches the routes ✓") == len(at.multiselect(key="players").value)
    at.button(key="undo").click().run()  # one step, like any correction
    assert at.session_state["owners"][doubt.track_id] is None


def test_marker_hints_leave_out_changes_that_break_another_marker():
    a = tid("Seattle", "Helena")  # 6: 15 points
    tab = S.TableState(players=["red", "blue"], owners={a: "blue"}, score_track={"red": 15, "blue": 15})
    (hint,) = S.marker_hints(tab)  # red is 15 short; taking blue's 6 would break blue's marker
    assert hint.color == "red" and all(f.track_id != a for f in hint.fixes)
    tab.score_track = {"red": 15}  # without blue's marker, blue's track explains red's gap
    (hint,) = S.marker_hints(tab, max_fixes=200)
    assert any(f.track_id == a and f.owner == "red" for f in hint.fixes)


def test_doubt_is_said_in_words_that_agree_with_the_mark(example_reading):
    photo = S.photo_check(example_reading)
    doubt = doubt_taken_for_nobody(example_reading)  # (Atlanta – New Orleans: yellow cars on yellow print)
    colour = BOARD.tracks[doubt.track_id].color
    assert doubt.doubtful and colour == doubt.owner  # cars on print of their colour, which the net takes for print
    assert doubt.reason.startswith(f"{colour.capitalize()} cars on a {colour} track look like the print: "
                                   f"is it {colour} cars or nobody?")
    assert doubt.reason.endswith(f"? Read as {colour}, {doubt.confidence:.0%} sure.")
    for t in photo.tracks:
        assert bool(t.reason) == t.doubtful
    at = start()
    at.button(key="example").click().run()
    at.selectbox(key="sel_track").set_value(doubt.track_id).run()
    caption = texts(at.caption)
    assert doubt.reason in caption and "The photo reads" not in caption
    sure = next(t for t in photo.tracks if t.owner and not t.doubtful)
    at.selectbox(key="sel_track").set_value(sure.track_id).run()
    assert f"The photo reads {sure.owner}, {sure.confidence:.0%} sure." in texts(at.caption)


@pytest.mark.skipif(not REAL_48.exists(), reason="../shared/real is not there")
def test_the_48_car_real_photo_is_scored_with_its_suspect_tracks_listed():
    at = start()
    at.file_uploader(key="photo").set_value((REAL_48.name, REAL_48.read_bytes(), "image/jpeg")).run()
    assert not at.exception, at.exception
    assert "tracks claimed" in texts(at.success)
    players = at.multiselect(key="players").value
    assert len(players) == 5 and len(at.table) == 5  # results for every player
    assert "wins" in texts(at.success)
    assert "Not counted until checked:** " in texts(at.warning)
    listed = [o for o in at.selectbox(key="sel_track").options if o.startswith(S.CHECK_MARK)]
    assert listed and at.selectbox(key="sel_track").options[:len(listed)] == listed  # listed first
    at.button(key="check_aside").click().run()
    assert "48 trains on the board, 45 at most" in texts(at.caption)
    game = json.loads(at.session_state["saved_json"])  # Save works: a game `ttr tally` accepts
    for p in game["players"]:
        assert sum(BOARD.tracks[tid(*r)].length for r in p["routes"]) <= 45


def test_a_doubtful_track_found_right_is_no_longer_to_check(example_reading):
    doubtful = sorted(example_reading.doubtful, key=lambda t: t.confidence)
    first = doubtful[0]
    at = start()
    at.button(key="example").click().run()
    assert f"**{len(doubtful)} to check**" in texts(at.markdown)
    assert at.selectbox(key="sel_track").options[0].startswith(S.CHECK_MARK)
    at.selectbox(key="sel_track").set_value(first.track_id).run()
    at.button(key="mark_right").click().run()
    assert f"**{len(doubtful) - 1} to check**" in texts(at.markdown)
    # on to the next one, zoomed to it
    assert at.session_state["sel_track"] == doubtful[1].track_id and at.session_state["zoom"] == "track"
    at.selectbox(key="sel_track").set_value(first.track_id).run()
    assert f"Checked: right as read ({first.owner or 'nobody'})." in texts(at.caption)
    opts = at.selectbox(key="sel_track").options
    assert sum(o.startswith(S.CHECK_MARK) for o in opts) == len(doubtful) - 1
    assert at.session_state["owners"][first.track_id] == first.owner  # nothing else changed


def test_the_ranking_puts_the_winners_first_and_says_what_decided_a_tie():
    six = [t for t in BOARD.tracks if t.length == 6 and BOARD.double_of(t) is None]
    tab = S.TableState(players=["red", "blue", "green"], owners={six[0].id: "red", six[1].id: "blue",
                                                                 tid("Seattle", "Portland"): "green"},
                       names={"blue": "Bo"})
    sheet = S.score(tab).sheet
    assert sheet["winners"] == ["red", "blue"] and sheet["decided_by"] == "shared"
    places = S.ranking(sheet, tab)
    assert [(p.place, p.name, p.total, p.note) for p in places] == [
        (1, "Red", 25, "shared win"), (1, "Bo (blue)", 25, "shared win"), (3, "Green", 1, "")]
    tab.tickets = {"blue": ["Seattle – Los Angeles"]}  # blue fails a ticket: red wins on points
    places = S.ranking(S.score(tab).sheet, tab)
    assert [(p.place, p.color, p.note) for p in places] == [(1, "red", ""), (2, "blue", ""), (3, "green", "")]


def test_the_example_shows_no_warning_its_measured_corners_contradict(example_reading):
    """The example's corners are right (within 1.5 px of its truth): no "outline uncertain" on the page."""
    import numpy as np

    truth = json.loads((ROOT / "examples" / "board.truth.json").read_text())
    assert np.abs(np.asarray(truth["corners"]) - example_reading.location.corners_xy).max() < 1.5
    at = start()
    at.button(key="example").click().run()
    assert "outline" not in texts(at.warning)


# ---------------------------------------------------------------- checking, names, sharing

def test_picking_a_track_from_the_list_zooms_to_it_beside_the_photo_as_taken(example_reading):
    from app.draw import track_window

    doubtful = sorted(example_reading.doubtful, key=lambda t: t.confidence)
    at = start()
    at.button(key="example").click().run()
    assert at.session_state["zoom"] == "whole" and not [i for i in at.image if "As photographed" in str(i.proto)]
    first = doubtful[0].track_id
    at.selectbox(key="sel_track").set_value(first).run()
    assert at.session_state["zoom"] == "track"
    assert at.session_state["board_view"] == track_window(first)
    photo = at.session_state["photo_check"]
    as_taken = S.board_as_taken(str(EXAMPLE), example_reading)
    assert photo.board_jpeg[:2] == b"\xff\xd8"
    (shown,) = [i for i in at.image if "As photographed" in str(i.proto)]
    assert f"As photographed: {as_taken.shape[1] / BOARD.board_mm[0]:.1f} pixels a mm" in shown.proto.imgs[0].caption
    # the owner buttons: nobody and each player, the owner read chosen
    picker = at.segmented_control(key="owner_pick")
    assert picker.options == ["nobody"] + at.multiselect(key="players").value and picker.value == doubtful[0].owner
    # the view's button tapped again (which unselects it): the view stays
    at.segmented_control(key="zoom").set_value(None).run()
    assert not at.exception and at.session_state["zoom"] == "track"
    # one tap goes through them: each found right, on to the next, until none is left
    taps = 0
    at.selectbox(key="sel_track").set_value(None).run()
    at.button(key="next_check").click().run()
    taps += 1
    while "mark_right" in [b.key for b in at.button]:
        assert at.session_state["sel_track"] == doubtful[taps - 1].track_id
        at.button(key="mark_right").click().run()
        taps += 1
    assert taps == len(doubtful) + 1 and sorted(at.session_state["checked"]) == sorted(t.track_id for t in doubtful)
    assert f"All {len(doubtful)} checked." in texts(at.markdown) and "next_check" not in [b.key for b in at.button]


def test_names_come_back_in_a_new_game_and_make_no_player(db, example_reading):
    at = start()
    at.text_input(key="name_red").set_value("Ada").run()
    at.text_input(key="name_blue").set_value("Bo").run()
    assert History(db).names() == {"red": "Ada", "blue": "Bo"}
    at.button(key="new_game").click().run()
    assert at.text_input(key="name_red").value == "Ada" and at.text_input(key="name_blue").value == "Bo"
    # a remembered name is not a player: the photo's colours are
    at.button(key="example").click().run()
    assert at.multiselect(key="players").value == S.sort_players(example_reading.claims())
    assert at.text_input(key="name_blue").value == "Bo"
    at.text_input(key="name_blue").set_value("Cy").run()  # the last name given is the one kept
    again = start()
    again.button(key="new_game").click().run()
    assert again.text_input(key="name_blue").value == "Cy" and again.text_input(key="name_red").value == "Ada"


def test_the_ticket_picker_offers_no_select_all():
    """Typing "Denv" showed "Select 2 matches" first, and one tap added both Denver tickets
    (Streamlit shows it up to 1000 options by default; 0 never). The browser test types it."""
    at = start()
    assert at.multiselect(key="players").proto.select_all == 1000  # (the default, where harmless)
    assert [at.multiselect(key=f"tickets_{c}").proto.select_all for c in ("red", "blue")] == [0, 0]


def test_the_results_to_share_say_who_won_and_are_drawn(example_reading):
    import cv2
    import numpy as np

    from app.draw import board_canvas, draw_results
    from vision.palette import OWNER_BGR

    owners = {t.track_id: t.owner for t in example_reading.tracks}
    tab = S.TableState(players=S.sort_players(example_reading.claims()), owners=owners, names={"yellow": "Ada"})
    scored = S.score(tab)
    sheet = scored.score_sheet
    text = S.results_text(sheet, tab, "3 Dec 2026")
    lines = text.splitlines()
    assert lines[0] == "Ticket to Ride (base deck, Longest Path), 3 Dec 2026"
    places = S.ranking(sheet, tab)
    assert lines[1:1 + len(places)] == [f"{p.place}. {p.name}: {p.total}" + (" (wins)" if p.place == 1 else "")
                                        for p in places]
    holder = next(p for p in sheet.players if p.longest_path_bonus)
    assert f"Longest path: {tab.display_name(holder.color)}, {holder.longest_path} trains" in text
    rows = S.share_rows(sheet, tab)
    assert [r[0] for r in rows] == [p.color for p in places] and rows[0][1].startswith("1. Ada (yellow)")
    assert "longest path" in dict((r[0], r[1]) for r in rows)[holder.color]
    board_img = board_canvas(900)
    picture = draw_results(board_img, rows, "Ticket to Ride · 3 Dec 2026")
    band = picture.shape[0] - board_img.shape[0]
    assert picture.shape[1] == 900 and band >= 20 * (len(rows) + 1)
    assert np.array_equal(picture[band:], board_img)  # the board under the band, as given
    for color, *_ in rows:  # each player's dot in the band
        dist = np.abs(picture[:band].astype(int) - OWNER_BGR[color]).sum(axis=2)
        assert (dist < 30).sum() > 50, color
    assert cv2.imencode(".jpg", picture)[0]
