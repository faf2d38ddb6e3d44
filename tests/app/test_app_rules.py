"""The one rule the app and `ttr score` share for claims that break the rules (scoring.review),
and the command line's small fixes (ttr detect's error line, overlay legend, ttr score --game)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ttr_testing import doubt_taken_for_nobody, run_with_stderr_on_a_terminal

from scoring.board import load_board
from scoring.game import Game
from scoring.review import hold_to_rules
from scoring.score import score_game

ROOT = Path(__file__).resolve().parents[2]
# the installed command (the one on PATH beside this Python, as `pip install` puts it)
TTR = shutil.which("ttr", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])) or "ttr"
BOARD = load_board()


def tid(a, b, color=None):
    return next(t.id for t in BOARD.tracks_between(a, b) if color in (None, t.color))


def test_a_legal_game_is_left_alone():
    claims = {"red": [tid("Denver", "Kansas City", "black")], "blue": [tid("Seattle", "Portland")]}
    r = hold_to_rules(claims)
    assert r.ok and r.claims == claims


def test_too_many_trains_sets_aside_the_least_sure_claims_that_bring_the_player_to_45():
    singles = [t for t in BOARD.tracks if BOARD.double_of(t) is None]
    by_len = {n: [t for t in singles if t.length == n] for n in (3, 4, 5, 6)}
    chosen = by_len[6][:6] + by_len[5][:1] + by_len[4][:1] + by_len[3][:1]
    assert sum(t.length for t in chosen) == 48
    three = by_len[3][0]
    sure = {t.id: 0.99 for t in chosen} | {three.id: 0.6}
    r = hold_to_rules({"red": [t.id for t in chosen], "blue": []}, sure)
    assert [s.track_id for s in r.set_aside] == [three.id]
    assert r.set_aside[0].reason == "red has 48 trains on the board, 45 at most: not counted until checked."
    kept = sum(BOARD.tracks[i].length for i in r.claims["red"])
    assert kept <= 45
    score_game(Game.from_claims("classic", r.claims))  # the rules hold now


def test_both_tracks_of_a_double_keep_the_surer_one():
    a, b = (t.id for t in BOARD.tracks_between("Seattle", "Portland"))
    r = hold_to_rules({"red": [a, b], "blue": []}, {a: 0.7, b: 0.95})
    assert [(s.track_id, s.owner) for s in r.set_aside] == [(a, "red")]
    assert r.set_aside[0].reason == \
        "red on both tracks of Portland–Seattle, where a player may claim one: not counted until checked."
    # two players on one double: allowed with 4 players, not with 2
    r2 = hold_to_rules({"red": [a], "blue": [b]}, {a: 0.95, b: 0.7})
    assert [(s.track_id, s.owner) for s in r2.set_aside] == [(b, "blue")]
    assert len(r2.set_aside[0].reason.split()) <= 18  # one short line, as each reason
    assert hold_to_rules({"red": [a], "blue": [b], "green": [], "yellow": []}).ok


def test_a_ticket_held_twice_stays_with_the_first_player():
    r = hold_to_rules({"red": [], "blue": []}, tickets={"red": [("Denver", "El Paso")],
                                                         "blue": [("El Paso", "Denver"), ("Boston", "Miami")]})
    assert r.tickets == {"red": [("Denver", "El Paso")], "blue": [("Boston", "Miami")]}
    assert r.set_aside_tickets[0].owner == "blue"


def ttr(*args):
    return subprocess.run([TTR, *args], capture_output=True, text=True, cwd=ROOT)


def test_detect_says_each_bad_photo_once(tmp_path):
    fakes = [tmp_path / "fake.jpg", tmp_path / "other.png"]
    for f in fakes:
        f.write_bytes(b"not pixels")
    r = ttr("detect", *map(str, fakes), "--json")  # the errors are the JSON lines, nothing else
    assert r.returncode == 1 and r.stderr == ""
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["image"] for x in lines] == [str(f) for f in fakes]
    assert all(x["error"].count("not an image") == 1 for x in lines)
    r = ttr("detect", *map(str, fakes))  # one line each on stderr, the photo named once
    assert r.returncode == 1 and r.stdout == ""
    errors = r.stderr.strip().splitlines()
    assert len(errors) == 2
    for f, err in zip(fakes, errors):
        assert err.startswith(f"ttr: error: {f}: not an image") and err.count(str(f)) == 1, err


EXAMPLE = ROOT / "examples" / "board.jpg"


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_overlay_has_a_legend_clear_of_the_map_and_its_path_is_printed(tmp_path):
    import cv2
    import numpy as np

    from calibration.template import load_template

    r = ttr("detect", str(EXAMPLE), "--overlay", str(tmp_path))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "board_overlay.jpg"
    assert f"overlay: {out}" in r.stdout
    from vision.draw import draw_reading
    from vision.read import Reader

    reading = Reader().read_path(str(EXAMPLE))
    plain = draw_reading(reading.flattened, reading)
    written = cv2.imread(str(out)).astype(int)
    # the legend's pale box: the largest patch that changed (the rest differs by JPEG's noise only)
    changed = (cv2.blur(np.abs(written - plain).max(axis=2).astype(np.float32), (9, 9)) > 30).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(changed)
    x0, y0, w, h, area = stats[1 + np.argmax(stats[1:, 4])]
    x1, y1 = x0 + w - 1, y0 + h - 1
    assert w * h > 300 * 50 and area > 0.8 * w * h
    # clear of the map: no city, no score cell, next to no track space (Vancouver-Calgary was under it)
    tpl = load_template().for_image(plain.shape[1], plain.shape[0])
    inside = lambda xy: x0 <= xy[0] <= x1 and y0 <= xy[1] <= y1  # noqa: E731
    assert not any(inside(xy) for xy in [*tpl.cities.values(), *tpl.score_cells])
    spaces = np.zeros(plain.shape[:2], np.uint8)
    for quad in tpl.all_spaces().quads:
        cv2.fillPoly(spaces, [np.round(quad).astype(np.int32)], 1)
    assert spaces[y0:y1 + 1, x0:x1 + 1].sum() < 0.005 * spaces.sum()
    vancouver_calgary = tpl.tracks[tid("Vancouver", "Calgary")].spaces.reshape(-1, 2)
    assert not any(inside(xy) for xy in vancouver_calgary)


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_score_uses_a_game_files_routes_as_corrections(tmp_path):
    game = json.loads((ROOT / "examples" / "board.game.json").read_text())
    # the example's own game file agrees with the photo: it corrects nothing, and the lanes of the
    # doubles printed alike that it names (Dallas-Houston, Atlanta-Raleigh...) are the lanes read,
    # not second claims beside them
    r = ttr("score", str(EXAMPLE), "--game", str(ROOT / "examples" / "board.game.json"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["corrected_by_game_file"] == [] and out["not_counted"] == []
    # the file gives blue's Portland-Salt Lake City to green: that track is green's
    psl = ["Portland", "Salt Lake City", "blue"]
    for p in game["players"]:
        if p["color"] == "blue":
            p["routes"] = [r for r in p["routes"] if r != psl]
        if p["color"] == "green":
            p["routes"].append(psl)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(game))
    r = ttr("score", str(EXAMPLE), "--game", str(path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["corrected_by_game_file"] == [
        "Portland – Salt Lake City (6-train blue track): read blue, the game file says green"]
    green = next(p for p in out["score"]["players"] if p["color"] == "green")
    assert any(r["a"] in ("Portland", "Salt Lake City") and r["length"] == 6 for r in green["routes"])


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_the_tracks_to_check_name_the_lane_of_a_double_printed_alike():
    from app.state import track_label
    from vision.read import Reader

    reading = Reader().read_path(str(EXAMPLE))
    alike = [t for t in reading.doubtful
             if (twin := BOARD.double_of(BOARD.tracks[t.track_id])) and twin.color == t.color]
    assert alike  # (the example's Dallas-Houston: blue read on one of two gray lanes)
    detect, score = ttr("detect", str(EXAMPLE)).stdout, ttr("score", str(EXAMPLE)).stdout
    for t in sorted(reading.doubtful, key=lambda t: t.confidence):
        label = track_label(BOARD.tracks[t.track_id])
        line = f"{label}: read as {t.owner or 'nobody'}, {t.confidence:.0%} sure"
        assert line in detect and line in score
    for t in alike:
        assert re.search(r", (upper|lower|left|right)\)", track_label(BOARD.tracks[t.track_id]))


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_score_names_the_likely_track_of_a_marker_that_does_not_match(tmp_path):
    """The example's own markers, but for the owner of its doubtful track a player might take for
    nobody (now yellow's Atlanta – New Orleans, yellow cars on yellow print: 4 trains, 7 points), one
    such track short, and green, one over; its game file lists no routes (each route it names is a
    person's word, never questioned). The owner's gap is that doubtful track; green's would need a
    track the photo is sure of (or gives green too little), so no track is named."""
    from app.state import change_chance, track_label
    from scoring.rules import route_points
    from vision.read import Reader

    reading = Reader().read_path(str(EXAMPLE))
    doubt = doubt_taken_for_nobody(reading)
    owner, track = doubt.owner, BOARD.tracks[doubt.track_id]
    pts = route_points(track.length)
    assert owner != "green"
    points = {}
    for t in reading.tracks:  # (the example breaks no rule: every claim read is scored)
        if t.owner:
            points[t.owner] = points.get(t.owner, 0) + route_points(t.length)
    game = json.loads((ROOT / "examples" / "board.game.json").read_text())
    assert {p["color"]: p["score_track"] for p in game["players"]}[owner] == points[owner]  # its marker agrees
    markers = {owner: points[owner] - pts, "green": points["green"] + pts}
    for p in game["players"]:
        p["routes"] = []
        p["score_track"] = markers.get(p["color"], p["score_track"])
    path = tmp_path / "g.json"
    path.write_text(json.dumps(game))
    r = ttr("score", str(EXAMPLE), "--game", str(path))
    assert r.returncode == 0, r.stderr
    mine = r.stdout.split(f"\n{owner}:\n")[1]
    assert (f"score track: marker at {points[owner] - pts}, route points {points[owner]}: DOES NOT MATCH\n"
            f"    likely: {track_label(track)} is nobody's (take it from {owner.capitalize()}): "
            f"{pts} points (the photo gives nobody {change_chance(doubt, None):.0%})") in mine
    green = r.stdout.split("\ngreen:\n")[1].split("\n\n")[0]
    assert green.endswith("DOES NOT MATCH\n    no single track the photo doubts explains it: recount the marker")
    out = json.loads(ttr("score", str(EXAMPLE), "--game", str(path), "--json").stdout)
    disagree = {p["color"] for p in game["players"] if p["score_track"] % 100 != points.get(p["color"], 0) % 100}
    assert set(out["score_track_mismatches"]) == disagree == {owner, "green", "black"}  # (black's, as the example's)
    assert out["score_track_mismatches"][owner][0].startswith(f"likely: {track_label(track)}")


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_score_lists_the_players_as_tally_does(tmp_path):
    from scoring.rules import PLAYER_COLORS

    game = json.loads((ROOT / "examples" / "board.game.json").read_text())
    game["players"].reverse()  # (whatever the file's order, both keep it)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(game))
    colors = lambda r: [p["color"] for p in json.loads(r.stdout)["players"]]  # noqa: E731
    tally = colors(ttr("tally", str(path), "--json"))
    assert tally == [p["color"] for p in game["players"]]
    scored = ttr("score", str(EXAMPLE), "--game", str(path), "--json")
    assert [p["color"] for p in json.loads(scored.stdout)["score"]["players"]] == tally
    # without a game file: the box's order
    alone = [p["color"] for p in json.loads(ttr("score", str(EXAMPLE), "--json").stdout)["score"]["players"]]
    assert alone == [c for c in PLAYER_COLORS if c in alone] and len(alone) == 4


@pytest.mark.skipif(not EXAMPLE.exists(), reason="examples/board.jpg is not there")
def test_detect_on_several_photos_shows_progress_on_a_terminal(tmp_path):
    """The bar goes to stderr when stderr is a terminal (a pseudo-terminal here); stdout stays
    the JSON Lines."""
    fake = tmp_path / "fake.jpg"
    fake.write_bytes(b"not pixels")
    rc, out, text = run_with_stderr_on_a_terminal([TTR, "detect", str(fake), str(EXAMPLE), "--json"], ROOT)
    assert rc == 1
    assert [json.loads(line)["image"] for line in out.splitlines()] == [str(fake), str(EXAMPLE)]
    assert "reading" in text and "2/2" in text and "photo" in text, text


def test_a_game_files_route_on_a_double_printed_alike_takes_the_lane_it_was_read_on():
    from app.commands.score import _lanes_as_read

    a, b = (t.id for t in BOARD.tracks_between("Seattle", "Portland"))
    # the file's lane is a, the photo read blue on b: the route is b, not a second claim on a
    assert _lanes_as_read({a: "blue"}, {a: None, b: "blue"}) == {b: "blue"}
    # red read on a, the file gives the route to blue: blue takes the lane read as nobody
    assert _lanes_as_read({a: "blue"}, {a: "red", b: None}) == {b: "blue"}
    # both lanes in the file, swapped against the photo: each keeps the lane it was read on
    assert _lanes_as_read({a: "blue", b: "red"}, {a: "red", b: "blue"}) == {a: "red", b: "blue"}
    # a single track is left as the file says
    one = tid("Denver", "Kansas City", "black")
    assert _lanes_as_read({one: "red"}, {one: "blue"}) == {one: "red"}
