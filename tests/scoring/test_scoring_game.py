"""Game files and claims: every validation case, name matching, doubles, round trips."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from game_cases import INVALID, game, player

from scoring.board import load_board
from scoring.errors import TtrError
from scoring.game import Game, check_game, load_json, parse_game, parse_json, read_game
from scoring.score import score_game

BOARD = load_board()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "game.json"



@pytest.mark.parametrize("case,data,message", INVALID, ids=[c[0] for c in INVALID])
def test_each_problem_is_one_line_naming_the_item(case, data, message):
    with pytest.raises(TtrError) as e:
        parse_game(data)
    assert str(e.value) == message
    assert "\n" not in str(e.value)
    assert check_game(data)[0] == message


def test_check_game_reports_every_problem_at_once():
    data = game(player("red", [("Denvr", "Omaha"), ("Denver", "Boston")], [("Boston", "Maimi")]),
                player("purple"), variant="clasic")
    problems = check_game(data)
    assert len(problems) == 5
    assert any("Denvr" in p for p in problems) and any("Maimi" in p for p in problems)
    assert any("purple" in p for p in problems) and any("clasic" in p for p in problems)


def test_valid_game_has_no_problems():
    assert check_game(load_json(EXAMPLE)) == []


def test_four_players_may_share_a_double_without_naming_colours():
    data = game(player("red", [("Seattle", "Portland")]), player("blue", [("Portland", "Seattle")]),
                player("green"), player("yellow"))
    g = parse_game(data)
    assert sorted(g.players[0].track_ids + g.players[1].track_ids) == [t.id for t in BOARD.tracks_between("Seattle", "Portland")]


def test_a_named_colour_keeps_its_track_whoever_comes_first():
    # red names no colour, blue names black: red must get the orange track
    data = game(player("red", [("Denver", "Kansas City")]), player("blue", [("Denver", "Kansas City", "black")]),
                player("green"), player("yellow"))
    g = parse_game(data)
    assert BOARD.tracks[g.players[0].track_ids[0]].color == "orange"
    assert BOARD.tracks[g.players[1].track_ids[0]].color == "black"


@pytest.mark.parametrize("written,board_name", [
    ("montreal", "Montréal"), ("St. Louis", "Saint Louis"), ("Sault Ste. Marie", "Sault St. Marie"),
    ("new york", "New York"), ("SAINT LOUIS", "Saint Louis"),
])
def test_city_names_match_without_accents_case_or_saint_spelling(written, board_name):
    other = {"Montréal": "Toronto", "Saint Louis": "Chicago", "Sault St. Marie": "Toronto", "New York": "Boston"}[board_name]
    g = parse_game(game(player("red", [(written, other)])))
    assert BOARD.tracks[g.players[0].track_ids[0]].cities == {board_name, other}


def test_case_of_colours_and_variant_does_not_matter():
    g = parse_game(game(player("Red", [("Denver", "Kansas City", "Black")]), variant="Mega"))
    assert (g.variant, g.players[0].color, BOARD.tracks[g.players[0].track_ids[0]].color) == ("mega", "red", "black")


def test_defaults():
    g = parse_game({"players": [{"color": "red"}]})
    assert (g.variant, g.ticket_values, g.players[0].track_ids, g.players[0].tickets, g.players[0].score_track) == (
        "classic", "2004", (), (), None)
    assert parse_game({"variant": "1910", "players": [{"color": "red"}]}).ticket_values == "1910"


def test_game_dict_round_trip():
    g = read_game(EXAMPLE)
    d = g.to_dict()
    assert parse_game(d) == g
    assert parse_game(json.loads(json.dumps(d))).to_dict() == d


def test_from_claims_builds_the_same_game_as_the_file():
    g = read_game(EXAMPLE)
    again = Game.from_claims(g.variant, {p.color: list(p.track_ids) for p in g.players},
                             tickets={p.color: list(p.tickets) for p in g.players},
                             score_track={p.color: p.score_track for p in g.players},
                             ticket_values=g.ticket_values)
    assert again == g


@pytest.mark.parametrize("claims,message", [
    ({"red": [5, 6]}, "player red: holds both tracks of the double route Atlanta–Raleigh"),
    ({"red": [5], "blue": [6]}, "player blue: route Atlanta–Raleigh is a double and red holds its other track"),
    ({"red": [100]}, "player red: no track 100 on the board"),
    ({"pink": [1]}, 'unknown player colour "pink"'),
])
def test_from_claims_checks_the_rules(claims, message):
    with pytest.raises(TtrError, match=message):
        Game.from_claims("classic", claims)


def test_example_game_scores():
    sheet = score_game(read_game(EXAMPLE))
    assert len(sheet.players) == 4
    assert all(p.trains <= 45 for p in sheet.players)
    assert sheet.winners


def test_bad_json_names_line_and_column():
    with pytest.raises(TtrError, match=r"game.json: invalid JSON at line 3 column 1"):
        parse_json('{"variant": "classic",\n "players": [\n', "game.json")


def test_unreadable_files(tmp_path):
    with pytest.raises(TtrError, match="no such file"):
        load_json(tmp_path / "missing.json")
    with pytest.raises(TtrError, match="is a folder"):
        load_json(tmp_path)
    binary = tmp_path / "photo.json"
    binary.write_bytes(b"\xff\xd8\xff\xe0")
    with pytest.raises(TtrError, match="not a text file"):
        load_json(binary)


def test_parse_does_not_change_its_input():
    data = load_json(EXAMPLE)
    before = copy.deepcopy(data)
    parse_game(data)
    assert data == before


@pytest.mark.parametrize("written,variant", [("Big Cities", "big-cities"), ("bigcities", "big-cities"),
                                             ("big_cities", "big-cities"), (1910, "1910"), ("MEGA", "mega")])
def test_variant_spellings(written, variant):
    assert parse_game({"variant": written, "players": [{"color": "red"}]}).variant == variant


def test_a_player_name_is_kept_and_checked():
    data = {"variant": "classic", "players": [
        {"color": "red", "name": "Ada", "routes": [["Denver", "Kansas City", "black"]]},
        {"color": "blue", "routes": []}]}
    game = parse_game(data)
    assert [p.name for p in game.players] == ["Ada", None]
    assert parse_game(game.to_dict()).to_dict() == game.to_dict()
    assert game.to_dict()["players"][0]["name"] == "Ada" and "name" not in game.to_dict()["players"][1]
    bad = {"players": [{"color": "red", "name": ["not", "text"], "routes": []}]}
    assert check_game(bad) == ["player red: name must be one line of text, at most 40 characters"]
    with pytest.raises(TtrError):
        parse_game(bad)


def test_from_claims_takes_a_player_with_tickets_and_a_marker_but_no_cars_once():
    from scoring.game import Game

    game = Game.from_claims("classic", {"red": [0]}, tickets={"blue": [("Denver", "El Paso")]},
                            score_track={"blue": 0, "red": 1})
    assert [p.color for p in game.players] == ["red", "blue"]
