"""Longest continuous path: hand-built networks, brute force on small graphs, board properties."""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.board import Track, load_board
from scoring.longest_path import longest_path, longest_trail
from scoring.rules import TRAINS_PER_PLAYER

BOARD = load_board()


def tracks(*spec: tuple[str, str, int]) -> list[Track]:
    return [Track(i, a, b, n, "gray") for i, (a, b, n) in enumerate(spec)]


def assert_is_trail(network: list[Track], result: tuple[int, list[str], list[int]]) -> None:
    """The returned path walks the returned tracks city by city, each once, and sums to length."""
    length, cities, ids = result
    by_id = {t.id: t for t in network}
    assert len(ids) == len(set(ids))
    if not ids:
        assert (length, cities) == (0, [])
        return
    assert len(cities) == len(ids) + 1
    for step, i in enumerate(ids):
        assert by_id[i].cities == {cities[step], cities[step + 1]}
    assert sum(by_id[i].length for i in ids) == length


def brute_force(network: list[Track]) -> int:
    """Every trail from every city, no pruning."""
    adjacency: dict[str, list[tuple[int, str]]] = {}
    for i, t in enumerate(network):
        adjacency.setdefault(t.a, []).append((i, t.b))
        adjacency.setdefault(t.b, []).append((i, t.a))
    best = 0

    def walk(city: str, used: int, length: int) -> None:
        nonlocal best
        best = max(best, length)
        for i, other in adjacency[city]:
            if not used >> i & 1:
                walk(other, used | 1 << i, length + network[i].length)

    for city in adjacency:
        walk(city, 0, 0)
    return best


# (name, tracks, expected length worked out by hand)
HAND_BUILT = [
    ("empty", tracks(), 0),
    ("one track", tracks(("A", "B", 4)), 4),
    ("chain", tracks(("A", "B", 2), ("B", "C", 3), ("C", "D", 1)), 6),
    # a T: the two longest arms
    ("junction", tracks(("X", "A", 5), ("X", "B", 3), ("X", "C", 1)), 8),
    # a closed loop is used whole
    ("loop", tracks(("A", "B", 2), ("B", "C", 3), ("C", "A", 4)), 9),
    # loop with a tail: tail, round the loop, back at the junction
    ("loop and tail", tracks(("T", "A", 6), ("A", "B", 2), ("B", "C", 3), ("C", "A", 4)), 15),
    # two loops sharing a city (figure eight): that city is passed twice, every track used
    ("figure eight", tracks(("X", "A", 1), ("A", "B", 2), ("B", "X", 3),
                            ("X", "C", 4), ("C", "D", 5), ("D", "X", 6)), 21),
    # figure eight with tails on two of its loops' cities: A, C, P and Q are odd, so two tracks
    # A-X and X-C (2 in all) stay unused: P-A-B-X-D-C-Q
    ("figure eight with tails", tracks(("X", "A", 1), ("A", "B", 1), ("B", "X", 1),
                                       ("X", "C", 1), ("C", "D", 1), ("D", "X", 1),
                                       ("P", "A", 2), ("Q", "C", 3)), 9),
    # parallel tracks (a double): out on one, back on the other, then on
    ("parallel tracks", tracks(("A", "B", 2), ("A", "B", 2), ("B", "C", 3)), 7),
    # three parallel tracks: the third one ends the trail on the far side
    ("three parallel", tracks(("A", "B", 1), ("A", "B", 1), ("A", "B", 1), ("B", "C", 5)), 8),
    # a city passed twice in a bow tie: both triangles through the middle city
    ("bow tie", tracks(("M", "A", 2), ("A", "B", 2), ("B", "M", 2),
                       ("M", "C", 2), ("C", "D", 2), ("D", "M", 2), ("B", "E", 4)), 16),
    # K4: four odd cities, one track must stay unused: the shortest (1)
    ("complete graph of four", tracks(("A", "B", 3), ("A", "C", 3), ("A", "D", 3),
                                      ("B", "C", 3), ("B", "D", 3), ("C", "D", 1)), 15),
    # the longest first track is a trap: greedy from H takes H-I (6) and stops at 6 + 0
    ("greedy trap", tracks(("H", "I", 6), ("H", "A", 2), ("A", "B", 2), ("B", "C", 2),
                           ("C", "D", 2), ("D", "E", 2)), 16),
    # two pieces: the bigger one counts
    ("two pieces", tracks(("A", "B", 3), ("B", "C", 3), ("X", "Y", 5)), 6),
    # pieces whose parts are longer than the longest trail of the other
    ("pieces, star against chain", tracks(("X", "A", 4), ("X", "B", 4), ("X", "C", 4), ("X", "D", 4),
                                          ("P", "Q", 5), ("Q", "R", 5)), 10),
]


@pytest.mark.parametrize("name,network,expected", HAND_BUILT, ids=[c[0] for c in HAND_BUILT])
@pytest.mark.parametrize("pairing", [True, False], ids=["auto", "search only"])
def test_hand_built(name, network, expected, pairing):
    result = longest_trail(network, pairing=pairing)
    assert result[0] == expected
    assert_is_trail(network, result)


def test_figure_eight_passes_the_middle_city_twice():
    network = HAND_BUILT[6][1]
    length, cities, _ = longest_trail(network)
    assert length == 21
    assert cities[0] == cities[-1]  # closed
    assert cities[1:-1].count("X") + (cities[0] == "X") >= 2  # through the middle twice


def random_graph(rng: random.Random, max_tracks: int, max_cities: int) -> list[Track]:
    n_cities = rng.randint(2, max_cities)
    return [Track(i, *map(str, rng.sample(range(n_cities), 2)), rng.randint(1, 6), "gray")
            for i in range(rng.randint(0, max_tracks))]


@pytest.mark.parametrize("seed", range(4))
def test_exact_against_brute_force(seed):
    rng = random.Random(seed)
    for _ in range(100):
        network = random_graph(rng, 8, 6)
        truth = brute_force(network)
        for pairing in (True, False):
            result = longest_trail(network, pairing=pairing)
            assert result[0] == truth, (network, pairing)
            assert_is_trail(network, result)


def test_pairing_shortcut_agrees_with_complete_search_on_denser_graphs():
    rng = random.Random(11)
    for _ in range(200):
        network = random_graph(rng, 15, 8)
        assert longest_trail(network)[0] == longest_trail(network, pairing=False)[0], network


def test_board_ids_and_city_names():
    # Seattle-Portland (1), Portland-San Francisco (5), San Francisco-Los Angeles (3)
    ids = [BOARD.tracks_between("Seattle", "Portland")[0].id,
           BOARD.tracks_between("Portland", "San Francisco")[0].id,
           BOARD.tracks_between("San Francisco", "Los Angeles")[0].id]
    length, cities, path_ids = longest_path(ids, BOARD)
    assert length == 9
    assert cities in (["Seattle", "Portland", "San Francisco", "Los Angeles"],
                      ["Los Angeles", "San Francisco", "Portland", "Seattle"])
    assert sorted(path_ids) == sorted(ids)


def legal_network(draw_order: list[int]) -> list[int]:
    """Tracks in `draw_order`, skipping a double's second track and anything past 45 trains."""
    ids, pairs, trains = [], set(), 0
    for i in draw_order:
        t = BOARD.tracks[i]
        if t.cities not in pairs and trains + t.length <= TRAINS_PER_PLAYER:
            ids.append(i)
            pairs.add(t.cities)
            trains += t.length
    return ids


networks = st.permutations(range(len(BOARD.tracks))).map(legal_network)


@settings(max_examples=150, deadline=None)
@given(networks)
def test_never_longer_than_the_trains_used(ids):
    result = longest_path(ids, BOARD)
    assert result[0] <= sum(BOARD.tracks[i].length for i in ids)
    assert_is_trail([BOARD.tracks[i] for i in ids], result)


@settings(max_examples=150, deadline=None)
@given(networks, st.integers(0, len(BOARD.tracks) - 1))
def test_adding_a_route_never_shortens_it(ids, extra):
    before = longest_path(ids, BOARD)[0]
    assert longest_path(ids + [extra], BOARD)[0] >= before


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(len(BOARD.tracks))).map(lambda order: legal_network(order)[:12]))
def test_board_networks_match_brute_force(ids):
    network = [BOARD.tracks[i] for i in ids]
    assert longest_path(ids, BOARD)[0] == brute_force(network)


def test_order_of_track_ids_does_not_matter():
    ids = legal_network(list(range(len(BOARD.tracks)))[::3])
    assert longest_path(ids, BOARD) == longest_path(list(reversed(ids)), BOARD)
