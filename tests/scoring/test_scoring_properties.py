"""Properties of scoring over random legal end-of-game positions (hypothesis)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.board import load_board
from scoring.game import Game, parse_game
from scoring.rules import DOUBLES_CLOSED_UP_TO, PLAYER_COLORS, TRAINS_PER_PLAYER, VARIANTS
from scoring.score import ScoreSheet, score_game

BOARD = load_board()
LENGTH_POINTS = {1: 1, 2: 2, 3: 4, 4: 7, 5: 10, 6: 15}  # the rulebook's table


@st.composite
def games(draw) -> Game:
    """A legal game: tracks dealt round the table in a random order, skipping any the rules forbid."""
    variant = draw(st.sampled_from(sorted(VARIANTS)))
    colors = draw(st.permutations(PLAYER_COLORS))[:draw(st.integers(2, 5))]
    order = draw(st.permutations(range(len(BOARD.tracks))))[:draw(st.integers(0, len(BOARD.tracks)))]
    claims: dict[str, list[int]] = {c: [] for c in colors}
    trains = dict.fromkeys(colors, 0)
    pair_holders: dict[frozenset, set[str]] = {}
    for n, i in enumerate(order):
        color, t = colors[n % len(colors)], BOARD.tracks[i]
        holders = pair_holders.setdefault(t.cities, set())
        if color in holders or (holders and len(colors) <= DOUBLES_CLOSED_UP_TO) or trains[color] + t.length > TRAINS_PER_PLAYER:
            continue
        claims[color].append(i)
        holders.add(color)
        trains[color] += t.length
    deck = [k for k in BOARD.tickets if VARIANTS[variant].deck in k.decks]
    deck = draw(st.permutations(deck))
    tickets, dealt = {}, 0
    for color in colors:
        count = draw(st.integers(0, 4))
        tickets[color] = [(k.a, k.b) if draw(st.booleans()) else (k.b, k.a) for k in deck[dealt:dealt + count]]
        dealt += count
    score_track = {c: draw(st.integers(0, 250)) for c in colors if draw(st.booleans())}
    values = draw(st.sampled_from(VARIANTS[variant].ticket_values))
    return Game.from_claims(variant, claims, tickets=tickets, score_track=score_track, ticket_values=values)


def joined(track_ids, a: str, b: str) -> bool:
    """Breadth-first search over the player's own tracks."""
    reached, frontier = {a}, [a]
    while frontier:
        city = frontier.pop()
        for i in track_ids:
            t = BOARD.tracks[i]
            if city in t.cities:
                (other,) = t.cities - {city}
                if other not in reached:
                    reached.add(other)
                    frontier.append(other)
    return b in reached


@settings(max_examples=120, deadline=None)
@given(games())
def test_each_number_follows_the_rules(game):
    sheet = score_game(game)
    variant = VARIANTS[game.variant]
    for claims, p in zip(game.players, sheet.players):
        tracks = [BOARD.tracks[i] for i in claims.track_ids]
        assert p.trains == sum(t.length for t in tracks) <= TRAINS_PER_PLAYER
        assert p.route_points == sum(LENGTH_POINTS[t.length] for t in tracks)
        for (a, b), ticket in zip(claims.tickets, p.tickets):
            assert (ticket.a, ticket.b) == (a, b)
            assert ticket.completed == joined(claims.track_ids, a, b)
        assert p.completed_tickets == sum(t.completed for t in p.tickets)
        assert p.longest_path <= p.trains
        assert p.total == p.route_points + p.ticket_points + p.longest_path_bonus + p.globetrotter_bonus
        if p.score_track is not None:
            assert p.score_track.matches == (p.score_track.reported % 100 == p.route_points % 100)
    best_path = max(p.longest_path for p in sheet.players)
    most_done = max(p.completed_tickets for p in sheet.players)
    for p in sheet.players:
        assert p.longest_path_bonus == (10 if variant.longest_path_card and p.longest_path == best_path > 0 else 0)
        assert p.globetrotter_bonus == (15 if variant.globetrotter_card and p.completed_tickets == most_done > 0 else 0)
    top = max(p.total for p in sheet.players)
    assert sheet.winners
    assert all(sheet.player(c).total == top for c in sheet.winners)
    assert (len(sheet.winners) > 1) == (sheet.decided_by == "shared")


@settings(max_examples=80, deadline=None)
@given(games(), st.randoms(use_true_random=False))
def test_renaming_or_reseating_players_changes_nothing(game, rng):
    sheet = score_game(game)
    colors = [p.color for p in game.players]
    new_names = dict(zip(colors, rng.sample(PLAYER_COLORS, len(colors))))
    seats = rng.sample(range(len(colors)), len(colors))
    renamed = Game(game.variant, game.ticket_values, tuple(
        type(p)(new_names[p.color], p.track_ids, p.tickets, p.score_track) for p in (game.players[s] for s in seats)))
    again = score_game(renamed)
    for p in sheet.players:
        q = again.player(new_names[p.color])
        assert q.to_dict() | {"color": p.color} == p.to_dict()
    assert {new_names[c] for c in sheet.winners} == set(again.winners)
    assert again.decided_by == sheet.decided_by


@settings(max_examples=60, deadline=None)
@given(games())
def test_round_trips(game):
    sheet = score_game(game)
    assert ScoreSheet.from_dict(sheet.to_dict()) == sheet
    # through the game file format: same scores (same-colour doubles may swap track ids)
    again = score_game(parse_game(game.to_dict()))
    for p, q in zip(sheet.players, again.players):
        assert (p.color, p.trains, p.route_points, p.tickets, p.longest_path, p.total) == (
            q.color, q.trains, q.route_points, q.tickets, q.longest_path, q.total)
    assert again.winners == sheet.winners
