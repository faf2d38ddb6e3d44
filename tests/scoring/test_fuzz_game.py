"""Game files as an adversary writes them (hypothesis): whatever the JSON, the checks end quickly
with problems one line each, never another exception; good games parse whatever the colours' case;
unknown keys are named; every independent problem is reported.
"""
from __future__ import annotations

import json
import string
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scoring.board import load_board
from scoring.errors import TtrError
from scoring.game import (
    GAME_KEYS,
    MAX_GAME_BYTES,
    MAX_JSON_DEPTH,
    MAX_PROBLEMS,
    PLAYER_KEYS,
    GameError,
    check_game,
    parse_game,
    parse_json,
)
from scoring.rules import PLAYER_COLORS, VARIANTS

BOARD = load_board()
CITIES = sorted(BOARD.cities)
# No deadline, and a hang's bound rather than a speed's: a check of a random file that ends past
# HANG has blown up on it; one that ends in 1.5 s on a busy machine has not.
HANG = 10.0
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

words = st.one_of(st.sampled_from(CITIES + list(GAME_KEYS) + list(PLAYER_KEYS) + list(PLAYER_COLORS) + list(VARIANTS)),
                  st.text(max_size=12), st.integers(41, 100_000).map(lambda n: "Denvr"[n % 5] * n))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10 ** 30, max_value=10 ** 60),
                    st.floats(allow_nan=True, allow_infinity=True), words)
json_like = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                                          st.dictionaries(words, inner, max_size=6)), max_leaves=20)


def _one_line_problems(data) -> list[str]:
    t0 = time.perf_counter()
    problems = check_game(data, BOARD)
    assert time.perf_counter() - t0 < HANG
    assert isinstance(problems, list) and all(isinstance(p, str) and p and "\n" not in p for p in problems)
    return problems


@FAST
@given(json_like)
def test_any_json_value_gives_one_line_problems_or_a_game(data):
    problems = _one_line_problems(data)
    try:
        game = parse_game(data, BOARD)
    except GameError as e:
        assert e.problems == problems
        assert len(str(e).splitlines()) == min(len(problems), MAX_PROBLEMS) + (len(problems) > MAX_PROBLEMS)
    else:
        assert not problems and game.players


route = st.tuples(st.sampled_from(CITIES), st.sampled_from(CITIES)).map(list)
player = st.fixed_dictionaries({"color": st.sampled_from(PLAYER_COLORS)},
                               optional={"routes": st.lists(st.one_of(route, json_like), max_size=8),
                                         "tickets": st.lists(st.one_of(route, json_like), max_size=5),
                                         "score_track": st.one_of(st.integers(-5, 2000), json_like),
                                         "name": st.one_of(st.text(max_size=50), json_like)})
game_like = st.fixed_dictionaries({"players": st.lists(player, min_size=1, max_size=7)},
                                  optional={"variant": st.one_of(st.sampled_from(list(VARIANTS)), json_like),
                                            "ticket_values": st.one_of(st.sampled_from(["2004", "1910"]), json_like)})


@FAST
@given(game_like)
@example({"players": [{"color": "red", "routes": ["\n"]}]})  # a line break in a quoted value
def test_game_shaped_files_give_one_line_problems_or_a_game(data):
    problems = _one_line_problems(data)
    if not problems:
        assert parse_game(data, BOARD).players


def _recase(data, how):
    out = json.loads(json.dumps(data))
    for p in out["players"]:
        p["color"] = how(p["color"])
    return out


@FAST
@given(game_like, st.sampled_from([str.upper, str.capitalize, str.title, lambda c: f"  {c.upper()} "]))
def test_player_colours_in_any_case_read_the_same(data, how):
    assert check_game(_recase(data, how), BOARD) == check_game(data, BOARD)
    if not check_game(data, BOARD):
        assert parse_game(_recase(data, how), BOARD) == parse_game(data, BOARD)


@FAST
@given(st.text(min_size=1, max_size=60).filter(lambda k: k not in GAME_KEYS and k not in PLAYER_KEYS),
       st.booleans(), json_like)
def test_an_unknown_key_is_never_ignored(key, in_player, value):
    data = {"variant": "classic", "players": [{"color": "red", "routes": [["Denver", "Omaha"]]}]}
    (data["players"][0] if in_player else data)[key] = value
    problems = _one_line_problems(data)
    assert any("unknown key" in p for p in problems), problems
    with pytest.raises(TtrError):
        parse_game(data, BOARD)


@pytest.mark.parametrize("typo,meant", [("tickts", "tickets"), ("rootes", "routes"), ("colour", "color"),
                                        ("scoretrack", "score_track")])
def test_a_typo_in_a_player_key_says_what_was_meant(typo, meant):
    data = {"players": [{"color": "red", typo: []}]}
    assert check_game(data, BOARD) == [f'player red: unknown key "{typo}" (did you mean "{meant}"?)']


@FAST
@given(st.lists(st.sampled_from(PLAYER_COLORS), min_size=1, max_size=5, unique=True),
       st.text(string.ascii_lowercase, min_size=3, max_size=10).map(lambda w: "Qx" + w))
def test_every_independent_problem_is_reported(colors, bad_city):
    data = {"players": [{"color": c, "routes": [[bad_city, "Omaha"]], "tickets": [["Denver", bad_city]]}
                        for c in colors]}
    problems = _one_line_problems(data)
    assert len(problems) == 2 * len(colors)
    assert all(f"player {c}: unknown city" in p for c in colors for p in problems if p.startswith(f"player {c}:"))


def test_players_given_as_an_object_are_refused():
    assert check_game({"players": {"red": {"routes": []}}}, BOARD) == [
        'game file: "players" must be a non-empty list of players, not an object']


@FAST
@given(st.text(max_size=300))
def test_any_text_parses_or_is_one_line_error(text):
    try:
        parse_json(text)
    except TtrError as e:
        assert "\n" not in str(e)


@FAST
@given(st.integers(MAX_JSON_DEPTH + 1, 100_000), st.sampled_from(["[]", "{}"]))
def test_deep_nesting_is_refused_before_parsing(depth, pair):
    opening = pair[0] if pair == "[]" else '{"a": '
    closing = pair[1]
    text = opening * depth + ("1" if pair == "{}" else "") + closing * depth
    with pytest.raises(TtrError, match="nested more than"):
        parse_json(text)


@FAST
@given(st.integers(31, 20_000))
def test_long_numbers_are_refused(digits):
    with pytest.raises(TtrError, match="not allowed"):
        parse_json('{"players": [{"color": "red", "score_track": ' + "7" * digits + "}]}")


def test_text_over_the_cap_is_refused_without_parsing():
    t0 = time.perf_counter()
    with pytest.raises(TtrError, match="too large"):
        parse_json(" " * (MAX_GAME_BYTES + 1) + "{}")
    assert time.perf_counter() - t0 < 0.5


def test_a_long_city_name_is_refused_before_any_fuzzy_matching():
    t0 = time.perf_counter()
    problems = check_game({"players": [{"color": "red", "routes": [["Denvr" * 200_000, "Omaha"]] * 100}]}, BOARD)
    assert time.perf_counter() - t0 < 1.0
    assert len(problems) == 100 and "no city name is longer than 40" in problems[0]
    assert len(problems[0]) < 200  # the name is shortened in the message


@pytest.mark.parametrize("key", ["\x85", "a\u2028b", "c\u2029", "x\ny", "t\x0bu"])
def test_a_key_holding_a_line_break_is_named_on_one_line(key):
    """Found by the property above: JSON escapes control characters but not NEL or the Unicode
    line and paragraph separators, which `str.splitlines` breaks at."""
    with pytest.raises(TtrError) as e:
        parse_game({key: None, "players": [{"color": "red"}]}, BOARD)
    assert len(str(e.value).splitlines()) == 1, str(e.value)
