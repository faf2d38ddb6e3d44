"""The board's facts: cities, tracks and destination tickets, loaded from a validated data file.

`load_board("usa")` reads `scoring/data/usa.json` (written from the cross-checked board facts)
and checks it before anything uses it. A track's `id` is its position in the file (0..99); a
double route is two tracks with the same two cities.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources

PRINTED_COLORS = ("red", "blue", "green", "yellow", "black", "white", "orange", "pink", "gray")


@dataclass(frozen=True)
class City:
    name: str
    x: float  # 0..1 of the board's width, from the left
    y: float  # 0..1 of the board's height, from the top


@dataclass(frozen=True)
class Track:
    id: int
    a: str
    b: str
    length: int
    color: str  # printed colour

    @property
    def cities(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


@dataclass(frozen=True)
class Ticket:
    a: str
    b: str
    points: int  # USA 1910 box value
    points_2004: int | None  # 2004 game value, None for cards new in 1910
    origin: str  # original_2004, mystery_train or new_1910
    decks: tuple[str, ...]  # base, 1910, mega, bigcities

    @property
    def cities(self) -> frozenset[str]:
        return frozenset((self.a, self.b))


@dataclass(frozen=True)
class Board:
    name: str
    board_mm: tuple[float, float]  # width, height of the whole board, score track included
    score_track_mm: float  # width of the score-track band round the map, from the board's edge
    cities: dict[str, City]
    tracks: tuple[Track, ...]
    tickets: tuple[Ticket, ...]

    def tracks_between(self, a: str, b: str) -> list[Track]:
        return list(self._tracks_by_pair.get(frozenset((a, b)), ()))

    @cached_property
    def _tracks_by_pair(self) -> dict[frozenset[str], tuple[Track, ...]]:
        by_pair: dict[frozenset[str], tuple[Track, ...]] = {}
        for t in self.tracks:
            by_pair[t.cities] = by_pair.get(t.cities, ()) + (t,)
        return by_pair

    def double_of(self, track: Track) -> Track | None:
        """The other track of a double route, or None for a single route."""
        others = [t for t in self.tracks_between(track.a, track.b) if t.id != track.id]
        return others[0] if others else None

    @cached_property
    def double_ids(self) -> tuple[int, ...]:
        """Per track id, the id of the other track of its double route, or -1 (computed once)."""
        return tuple(-1 if (other := self.double_of(t)) is None else other.id for t in self.tracks)


class BoardDataError(ValueError):
    """The board data file is inconsistent (a packaging bug, not user input)."""


def _validate(board: Board) -> None:
    if not 0 < board.score_track_mm < min(board.board_mm) / 2:
        raise BoardDataError(f"the score track ({board.score_track_mm} mm) does not fit the board {board.board_mm}")
    names = set(board.cities)
    for t in board.tracks:
        if t.a not in names or t.b not in names or t.a == t.b:
            raise BoardDataError(f"track {t.id} joins unknown cities {t.a!r}, {t.b!r}")
        if t.length not in (1, 2, 3, 4, 5, 6) or t.color not in PRINTED_COLORS:
            raise BoardDataError(f"track {t.id} has length {t.length} colour {t.color!r}")
    if [t.id for t in board.tracks] != list(range(len(board.tracks))):
        raise BoardDataError("track ids must be 0..n-1 in file order")
    for pair_count in _pair_counts(board).values():
        if pair_count > 2:
            raise BoardDataError("a city pair has more than two tracks")
    for k in board.tickets:
        if k.a not in names or k.b not in names:
            raise BoardDataError(f"ticket {k.a}-{k.b} names an unknown city")


def _pair_counts(board: Board) -> dict[frozenset, int]:
    counts: dict[frozenset, int] = {}
    for t in board.tracks:
        counts[t.cities] = counts.get(t.cities, 0) + 1
    return counts


@lru_cache(maxsize=None)
def load_board(name: str = "usa") -> Board:
    """Load and validate a board's data file (only "usa" ships)."""
    try:
        text = resources.files("scoring").joinpath("data", f"{name}.json").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoardDataError(f"no board data for {name!r}") from None
    raw = json.loads(text)
    board = Board(
        name=raw["name"],
        board_mm=tuple(float(v) for v in raw["board_mm"]),
        score_track_mm=float(raw["score_track_mm"]),
        cities={c["name"]: City(c["name"], float(c["x"]), float(c["y"])) for c in raw["cities"]},
        tracks=tuple(Track(int(t["id"]), t["a"], t["b"], int(t["length"]), t["color"]) for t in raw["tracks"]),
        tickets=tuple(Ticket(k["a"], k["b"], int(k["points"]), k["points_2004"], k["origin"], tuple(k["decks"]))
                      for k in raw["tickets"]),
    )
    _validate(board)
    return board
