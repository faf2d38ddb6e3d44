"""Scoring rules one by one: route points, tickets, bonus cards, tie-breaks, score track."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scoring.board import load_board
from scoring.game import Game
from scoring.rules import VARIANTS, ScoringSettings, route_points
from scoring.score import ScoreSheet, score_game

BOARD = load_board()


def track(a: str, b: str, color: str | None = None) -> int:
    options = [t for t in BOARD.tracks_between(a, b) if color is None or t.color == color]
    assert options, (a, b, color)
    return options[0].id


def line(*cities: str) -> list[int]:
    """Tracks along consecutive cities (first track of any double)."""
    return [track(a, b) for a, b in zip(cities, cities[1:])]


def score(variant: str, claims: dict, tickets: dict | None = None, settings: ScoringSettings | None = None,
          **kw) -> ScoreSheet:
    return score_game(Game.from_claims(variant, claims, tickets=tickets, **kw), settings)


@pytest.mark.parametrize("length,points", [(1, 1), (2, 2), (3, 4), (4, 7), (5, 10), (6, 15)])
def test_route_points_by_length(length, points):
    t = next(t for t in BOARD.tracks if t.length == length)
    sheet = score("big-cities", {"red": [t.id]})
    assert sheet.players[0].route_points == points
    assert sheet.players[0].trains == length
    assert sheet.players[0].total == points


def test_every_track_claimed_scores_508():
    # the figure in the board facts: all 100 tracks claimed
    assert sum(route_points(t.length) for t in BOARD.tracks) == 508


def test_rulebook_ticket_example_17_9_11_13_minus_11_is_39():
    routes = line("Vancouver", "Seattle", "Portland", "Salt Lake City", "Denver", "Kansas City",
                  "Saint Louis", "Nashville") + line("Denver", "Santa Fe") + line("Saint Louis", "Chicago", "Pittsburgh")
    tickets = [("Portland", "Nashville"), ("Chicago", "Santa Fe"), ("Denver", "Pittsburgh"),
               ("Vancouver", "Santa Fe"), ("Winnipeg", "Little Rock")]
    p = score("classic", {"red": routes}, {"red": tickets}).players[0]
    assert [t.points for t in p.tickets] == [17, 9, 11, 13, 11]
    assert [t.completed for t in p.tickets] == [True, True, True, True, False]
    assert p.ticket_points == 39
    assert p.completed_tickets == 4


def test_ticket_needs_the_players_own_routes():
    # red holds Denver-Santa Fe; blue holds Santa Fe-El Paso: neither joins Denver to El Paso
    sheet = score("classic", {"red": line("Denver", "Santa Fe"), "blue": line("Santa Fe", "El Paso")},
                  {"red": [("Denver", "El Paso")]})
    red = sheet.player("red")
    assert red.tickets[0].completed is False
    assert red.ticket_points == -4
    sheet = score("classic", {"red": line("Denver", "Santa Fe", "El Paso")}, {"red": [("El Paso", "Denver")]})
    assert sheet.players[0].tickets[0].completed is True
    assert sheet.players[0].ticket_points == 4


@pytest.mark.parametrize("variant,values,points", [
    ("classic", None, 22), ("classic", "2004", 22), ("classic", "1910", 20), ("mega", None, 20),
    ("big-cities", None, 20),
])
def test_ticket_values_per_variant(variant, values, points):
    sheet = score(variant, {"red": []}, {"red": [("Seattle", "New York")]}, ticket_values=values)
    assert sheet.players[0].tickets[0].points == points
    assert sheet.players[0].ticket_points == -points


def test_two_players_tied_on_longest_path_both_score_10():
    sheet = score("classic", {"red": line("Denver", "Phoenix"), "blue": line("Portland", "San Francisco"),
                              "green": line("Denver", "Santa Fe")})
    assert [p.longest_path for p in sheet.players] == [5, 5, 2]
    assert [p.longest_path_bonus for p in sheet.players] == [10, 10, 0]
    assert [p.total for p in sheet.players] == [20, 20, 2]


def test_longest_path_value_is_a_setting():
    sheet = score("classic", {"red": line("Denver", "Phoenix")}, settings=ScoringSettings(longest_path_points=12))
    assert sheet.players[0].longest_path_bonus == 12


@pytest.mark.parametrize("variant", ["1910", "big-cities"])
def test_variants_without_a_longest_path_card(variant):
    sheet = score(variant, {"red": line("Denver", "Phoenix")})
    assert sheet.players[0].longest_path == 5
    assert sheet.players[0].longest_path_bonus == 0


def globetrotter_game(variant: str, settings: ScoringSettings | None = None) -> ScoreSheet:
    claims = {
        "red": line("Chicago", "Pittsburgh", "New York") + line("Washington", "Raleigh", "Atlanta"),
        "blue": line("Denver", "Kansas City", "Saint Louis") + line("Duluth", "Omaha", "Kansas City", "Oklahoma City", "Dallas"),
        "green": line("Chicago", "Saint Louis", "Nashville", "Atlanta"),
    }
    tickets = {
        "red": [("Chicago", "New York"), ("Washington", "Atlanta")],
        "blue": [("Denver", "Saint Louis"), ("Duluth", "Dallas")],
        "green": [("Chicago", "Atlanta"), ("Montréal", "Raleigh")],
    }
    return score(variant, claims, tickets, settings)


def test_globetrotter_goes_to_every_player_tied_for_most_completed_tickets():
    sheet = globetrotter_game("1910")
    assert [p.completed_tickets for p in sheet.players] == [2, 2, 1]
    assert [p.globetrotter_bonus for p in sheet.players] == [15, 15, 0]
    assert [p.longest_path_bonus for p in sheet.players] == [0, 0, 0]


@pytest.mark.parametrize("variant", ["1910", "mega"])
def test_no_globetrotter_when_nobody_completed_a_ticket(variant):
    sheet = score(variant, {"red": line("Denver", "Phoenix"), "blue": line("Chicago", "Pittsburgh")},
                  {"red": [("Boston", "Miami")] if variant == "mega" else [], "blue": []})
    assert [p.completed_tickets for p in sheet.players] == [0, 0]
    assert [p.globetrotter_bonus for p in sheet.players] == [0, 0]


def test_no_longest_path_card_for_a_path_of_nothing():
    sheet = score("classic", {"red": [], "blue": []})
    assert [p.longest_path for p in sheet.players] == [0, 0]
    assert [p.longest_path_bonus for p in sheet.players] == [0, 0]


def test_globetrotter_value_is_a_setting():
    sheet = globetrotter_game("1910", ScoringSettings(globetrotter_points=10))
    assert [p.globetrotter_bonus for p in sheet.players] == [10, 10, 0]


def test_mega_has_both_cards_and_classic_no_globetrotter():
    mega = globetrotter_game("mega")
    assert [p.globetrotter_bonus for p in mega.players] == [15, 15, 0]
    # blue's Denver-Kansas City-Oklahoma City-Dallas (8) beats red's and green's 5
    assert [p.longest_path for p in mega.players] == [5, 8, 5]
    assert [p.longest_path_bonus for p in mega.players] == [0, 10, 0]
    classic = score("classic", {"red": line("Denver", "Phoenix")}, {"red": [("Denver", "El Paso")]})
    assert classic.players[0].globetrotter_bonus == 0


def test_total_adds_up():
    for p in globetrotter_game("mega").players:
        assert p.total == p.route_points + p.ticket_points + p.longest_path_bonus + p.globetrotter_bonus


# --- winners and tie-breaks

def test_winner_on_points():
    sheet = score("classic", {"red": line("Denver", "Phoenix"), "blue": line("Denver", "Santa Fe")})
    assert sheet.winners == ("red",)
    assert sheet.decided_by == "points"


def test_tie_broken_by_completed_tickets():
    # both 10 points; red completed a ticket, blue none
    sheet = score("big-cities", {"red": line("Kansas City", "Oklahoma City", "Dallas", "Houston"),
                                 "blue": line("Denver", "Phoenix")},
                  {"red": [("Kansas City", "Houston")]})
    assert [p.total for p in sheet.players] == [10, 10]
    assert sheet.winners == ("red",)
    assert sheet.decided_by == "completed tickets"


def test_tie_broken_by_the_longest_path_card():
    # red: one 6-long track + the card = 25; blue: 25 in four separate tracks, no ticket either
    red = line("El Paso", "Houston")
    blue = line("Calgary", "Helena") + line("Chicago", "Toronto") + line("Atlanta", "New Orleans") + line("Los Angeles", "Phoenix")
    sheet = score("classic", {"red": red, "blue": blue})
    assert [p.total for p in sheet.players] == [25, 25]
    assert sheet.winners == ("red",)
    assert sheet.decided_by == "longest path card"


def test_no_longest_path_tie_break_without_the_card():
    # the same shape in Big Cities (no card): 15 each, and the longer path decides nothing
    red = line("El Paso", "Houston")
    blue = line("Calgary", "Helena") + line("Chicago", "Toronto") + line("Nashville", "Atlanta")
    sheet = score("big-cities", {"red": red, "blue": blue})
    assert [p.total for p in sheet.players] == [15, 15]
    assert sheet.winners == ("red", "blue")
    assert sheet.decided_by == "shared"


def test_still_tied_players_share_the_win():
    sheet = score("classic", {"red": line("El Paso", "Houston"), "blue": line("Helena", "Seattle"),
                              "green": line("Denver", "Santa Fe")})
    assert sheet.winners == ("red", "blue")
    assert sheet.decided_by == "shared"


# --- score track

@pytest.mark.parametrize("reported,matches", [(7, True), (107, True), (8, False), (0, False)])
def test_score_track_laps_at_100(reported, matches):
    sixes = [t.id for t in BOARD.tracks if t.length == 6][:7]
    routes = sixes + line("Denver", "Santa Fe")  # 7 x 15 + 2 = 107 points on 44 trains
    p = score("classic", {"red": routes}, score_track={"red": reported}).players[0]
    assert p.route_points == 107
    assert p.score_track.expected == 107
    assert p.score_track.reported == reported
    assert p.score_track.matches is matches


def test_score_track_is_optional():
    assert score("classic", {"red": line("Denver", "Santa Fe")}).players[0].score_track is None


# --- the JSON contract

CONTRACT_PLAYER_KEYS = {"color", "trains", "route_points", "tickets", "ticket_points", "completed_tickets",
                        "longest_path", "longest_path_cities", "longest_path_bonus", "globetrotter_bonus",
                        "total", "score_track"}


def test_score_sheet_dict_keeps_the_contract_and_round_trips():
    sheet = globetrotter_game("mega")
    d = sheet.to_dict()
    assert {"variant", "players", "winners"} <= set(d)
    assert d["variant"] == "mega"
    for p in d["players"]:
        assert CONTRACT_PLAYER_KEYS <= set(p)
        for t in p["tickets"]:
            assert set(t) == {"a", "b", "points", "completed"}
        assert isinstance(p["longest_path_cities"], list)
        assert p["score_track"] is None
    assert json.loads(json.dumps(d)) == d
    assert ScoreSheet.from_dict(d).to_dict() == d
    assert ScoreSheet.from_dict(d) == sheet


def test_scoring_imports_no_image_or_app_code():
    code = ("import sys, scoring.score, scoring.game, scoring.report, scoring.longest_path;"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('vision', 'app', 'cv2', 'numpy', 'streamlit')];"
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_variant_table():
    assert set(VARIANTS) == {"classic", "1910", "mega", "big-cities"}
    assert [(v.longest_path_card, v.globetrotter_card) for v in VARIANTS.values()] == [
        (True, False), (False, True), (True, True), (False, False)]
    decks = {name: sum(v.deck in t.decks for t in BOARD.tickets) for name, v in VARIANTS.items()}
    assert decks == {"classic": 30, "1910": 35, "mega": 69, "big-cities": 35}
