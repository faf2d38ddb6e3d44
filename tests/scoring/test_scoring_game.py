"""Game files and claims: every validation case, name matching, doubles, round trips."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scoring.board import load_board
from scoring.errors import TtrError
from scoring.game import Game, check_game, load_json, parse_game, parse_json, read_game
from scoring.score import score_game

BOARD = load_board()
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "game.json"


def game(*players: dict, **top) -> dict:
    return {"variant": "classic", **top, "players": list(players)}


def player(color: str, routes=(), tickets=(), **more) -> dict:
    return {"color": color, "routes": [list(r) for r in routes], "tickets": [list(t) for t in tickets], **more}


OVER_45 = [("Duluth", "Helena"), ("Helena", "Seattle"), ("Seattle", "Calgary"), ("Calgary", "Winnipeg"),
           ("Winnipeg", "Sault St. Marie"), ("Duluth", "Toronto"), ("Denver", "Phoenix"), ("El Paso", "Houston"),
           ("Denver", "Santa Fe")]  # 6+6+4+6+6+6+5+6+2 = 47 trains

# (case, game dict, the one-line message expected)
INVALID = [
    ("unknown city", game(player("red", [("Denvr", "Omaha")])),
     'player red: unknown city "Denvr" (did you mean "Denver"?)'),
    ("unknown city in a ticket", game(player("red", tickets=[("Boston", "Maimi")])),
     'player red: unknown city "Maimi" (did you mean "Miami"?)'),
    ("route not on the board", game(player("red", [("Denver", "Boston")])),
     "player red: route Denver–Boston is not on the board (no track joins them)"),
    ("track colour not on the board", game(player("red", [("Denver", "Kansas City", "green")])),
     "player red: route Denver–Kansas City (green) is not on the board (the tracks Denver–Kansas City are black and orange)"),
    ("same track claimed by two players", game(player("red", [("Denver", "Omaha")]), player("blue", [("Omaha", "Denver")])),
     "player blue: route Denver–Omaha is already claimed by red"),
    ("same track listed twice", game(player("red", [("Denver", "Omaha"), ("Omaha", "Denver")])),
     "player red: route Denver–Omaha is listed twice"),
    ("both tracks of a double", game(player("red", [("Denver", "Kansas City", "black"), ("Denver", "Kansas City", "orange")])),
     "player red: holds both tracks of the double route Denver–Kansas City; a player may claim only one of them"),
    ("both tracks of a gray double", game(player("red", [("Seattle", "Portland"), ("Portland", "Seattle")])),
     "player red: holds both tracks of the double route Portland–Seattle; a player may claim only one of them"),
    ("double in a 2-player game", game(player("red", [("Denver", "Kansas City", "black")]), player("blue", [("Denver", "Kansas City")])),
     "player blue: route Denver–Kansas City is a double and red holds its other track; "
     "in a 2–3 player game only one track of a double may be used"),
    ("more than 45 trains", game(player("red", OVER_45)),
     "player red: routes use 47 trains, more than the 45 a player has"),
    ("ticket not in the deck", game(player("red", tickets=[("Boston", "Washington")])),
     "player red: ticket Boston–Washington is not in the classic deck"),
    ("ticket not in the 1910 deck", game(player("red", tickets=[("Denver", "El Paso")]), variant="1910"),
     "player red: ticket Denver–El Paso is not in the 1910 deck"),
    ("ticket held twice", game(player("red", tickets=[("Denver", "El Paso")]), player("blue", tickets=[("El Paso", "Denver")])),
     "player blue: ticket El Paso–Denver is already held by red (each card exists once)"),
    ("unknown variant", game(player("red"), variant="clasic"),
     'unknown variant "clasic" (did you mean "classic"?) (choose from classic, 1910, mega, big-cities)'),
    ("unknown player colour", game(player("purple")),
     'player 1: unknown player colour "purple" (choose from red, blue, green, yellow, black)'),
    ("duplicate player colours", game(player("red"), player("blue"), player("red")),
     "player red: colour red is given to 2 players; each player needs their own colour"),
    ("2004 values outside classic", game(player("red"), variant="mega", ticket_values="2004"),
     'ticket_values "2004" is not available in the mega variant (it uses the 1910 values)'),
    ("malformed route", game(player("red", [("Denver",)])),
     'player red: route 1 ["Denver"] must be [city, city] or [city, city, colour]'),
    ("misspelt key", game({"color": "red", "routes": [], "ticket": []}),
     'player red: unknown key "ticket" (did you mean "tickets"?)'),
    ("score track not a number", game(player("red", score_track="57")),
     'player red: score_track must be a whole number of points (0 or more), not "57"'),
    ("no players", {"variant": "classic", "players": []},
     'game file: "players" must be a non-empty list of players'),
    ("not an object", [1, 2], 'game file: expected a JSON object with "variant" and "players", not a list'),
]


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
