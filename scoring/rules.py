"""The rules of each variant as data: which ticket deck, which bonus cards, which ticket values.

`VARIANTS[name]` is a `Variant`; the numbers a table may disagree on (bonus card values, trains
per player) live in `ScoringSettings`, whose defaults are the printed rules.
"""
from __future__ import annotations

from dataclasses import dataclass

# Player train colours of the USA box (the photo reader uses the same five).
PLAYER_COLORS = ("red", "blue", "green", "yellow", "black")

# Route points by track length (the rulebook's route scoring table).
ROUTE_POINTS = {1: 1, 2: 2, 3: 4, 4: 7, 5: 10, 6: 15}

# Trains each player has; a player's tracks can hold no more.
TRAINS_PER_PLAYER = 45
# The last round begins when a player ends a turn with this many trains or fewer: a finished game
# shows a player with at least TRAINS_PER_PLAYER - LAST_ROUND_TRAINS cars on the board.
LAST_ROUND_TRAINS = 2
# Cars of one colour in the USA box: the 45 trains and 3 spares. Real boards show the spares (the
# photo reader's bound on what a photo can show, `vision.decide`); the rules count 45.
SPARE_CARS = 3
CARS_IN_BOX = TRAINS_PER_PLAYER + SPARE_CARS

# Games with this many players or fewer may use only one track of each double route.
DOUBLES_CLOSED_UP_TO = 3

# Ticket value sets: "2004" (the original game's cards) and "1910" (the cards of the 1910 box).
TICKET_VALUES = ("2004", "1910")


@dataclass(frozen=True)
class Variant:
    name: str  # as written in a game file
    deck: str  # deck tag in the board data: base, 1910, mega or bigcities
    longest_path_card: bool  # Longest Continuous Path bonus card in play
    globetrotter_card: bool  # Globetrotter bonus card (most completed tickets) in play
    ticket_values: tuple[str, ...]  # allowed value sets, the default first
    title: str


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("classic", "base", True, False, ("2004", "1910"), "Ticket to Ride (base deck, Longest Path)"),
    Variant("1910", "1910", False, True, ("1910",), "USA 1910 (new tickets, Globetrotter)"),
    Variant("mega", "mega", True, True, ("1910",), "Mega Game (all tickets, both bonus cards)"),
    Variant("big-cities", "bigcities", False, False, ("1910",), "Big Cities (big-city tickets, no bonus card)"),
)}


@dataclass(frozen=True)
class ScoringSettings:
    """Values a table may set differently; the defaults are the printed cards and rules."""

    longest_path_points: int = 10  # Longest Continuous Path card, to every tied player
    globetrotter_points: int = 15  # Globetrotter card as printed (some digital editions give 10)


DEFAULT_SETTINGS = ScoringSettings()


def route_points(length: int) -> int:
    """Points for claiming one track of `length` spaces."""
    return ROUTE_POINTS[length]
