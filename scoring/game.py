"""A finished game as claims: who holds which tracks and tickets, checked against the rules.

In: a game file's dict (see the README), or claims by track id from the photo reader.
Out: a `Game` whose every track and ticket is known to be legal, or `GameError` (a `TtrError`)
holding every problem, one line each, naming the player and the item.

- `parse_game(data)` -> `Game`, raising `GameError`; `check_game(data)` -> every problem as a list.
- `Game.from_claims(variant, {color: [track_id, ...]}, tickets=..., score_track=...)` for readers
  that already know track ids; `Game.to_dict()` writes the game file format back.
- `read_game(path)` reads a game file (bad JSON is reported with its line and column).

This module is the game file's one schema, used by `ttr tally`, `ttr score --game` and the app's
restore: the keys (`GAME_KEYS`, `PLAYER_KEYS`; any other is refused, with "did you mean"), the
types, and caps checked before anything slow (`load_json`/`parse_json`: a regular file of at most
`MAX_GAME_BYTES`, nesting, number length; `MAX_ITEMS`, `MAX_TEXT`, `MAX_SCORE_TRACK`; "did you
mean" searches only for the first `MAX_HINTS` problems), so no file can make the checks slow.

A route is `[city, city]` or `[city, city, printed colour]`; without a colour, a route on a double
takes the double's first track nobody has named by colour. The two tracks of a same-colour double
(gray/gray) are interchangeable for scoring.
"""
from __future__ import annotations

import difflib
import functools
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.board import PRINTED_COLORS, Board, Ticket, Track, load_board
from scoring.errors import TtrError
from scoring.files import read_capped
from scoring.rules import DOUBLES_CLOSED_UP_TO, PLAYER_COLORS, TICKET_VALUES, TRAINS_PER_PLAYER, VARIANTS

GAME_KEYS = ("variant", "ticket_values", "players")
PLAYER_KEYS = ("color", "name", "routes", "tickets", "score_track")
# Caps checked before any item is looked at, so no file can make the checks slow: a player has 45
# trains (so at most 45 routes), a deck 69 tickets, the longest city name is 15 characters, a score
# stays under 400.
MAX_PLAYERS_READ = 10  # more are refused at once (5 is the rule, reported with the others' problems)
MAX_ITEMS = 100  # routes or tickets of one player
MAX_TEXT = 40  # characters of a city, colour, variant or key
MAX_SCORE_TRACK = 1000
MAX_PROBLEMS = 30  # lines reported; then how many more
MAX_HINTS = 20  # "did you mean" searches per file; later unknown names are reported without one


@dataclass(frozen=True)
class PlayerClaims:
    color: str  # one of PLAYER_COLORS
    track_ids: tuple[int, ...]  # board track ids, in the order given
    tickets: tuple[tuple[str, str], ...]  # (city, city) as the player listed them, board spelling
    score_track: int | None = None  # marker position the player reports, if any
    name: str | None = None  # what the table calls the player; scoring never uses it


@dataclass(frozen=True)
class Game:
    variant: str  # a VARIANTS key
    ticket_values: str  # "2004" or "1910"
    players: tuple[PlayerClaims, ...]

    def to_dict(self, board: Board | None = None) -> dict[str, Any]:
        """The game file format (routes always carry their printed colour)."""
        board = board or load_board()
        players = []
        for p in self.players:
            entry: dict[str, Any] = {"color": p.color}
            if p.name:
                entry["name"] = p.name
            entry |= {
                "routes": [[board.tracks[i].a, board.tracks[i].b, board.tracks[i].color] for i in p.track_ids],
                "tickets": [[a, b] for a, b in p.tickets],
            }
            if p.score_track is not None:
                entry["score_track"] = p.score_track
            players.append(entry)
        return {"variant": self.variant, "ticket_values": self.ticket_values, "players": players}

    @classmethod
    def from_claims(cls, variant: str, claims: dict[str, list[int]],
                    tickets: dict[str, list[tuple[str, str]]] | None = None,
                    score_track: dict[str, int] | None = None,
                    ticket_values: str | None = None, board: Board | None = None,
                    names: dict[str, str] | None = None) -> Game:
        """A checked game from track ids per player colour (players in `claims` order).

        Raises `TtrError` on the first problem, like `parse_game`.
        """
        board = board or load_board()
        tickets = tickets or {}
        score_track = score_track or {}
        names = names or {}
        problems: list[str] = []
        variant_name = _check_variant(variant, problems)
        values = _check_ticket_values(variant_name, ticket_values, problems)
        players = []
        # Each colour once, in `claims` order, then those with only tickets or a marker.
        for color in dict.fromkeys(list(claims) + list(tickets) + list(score_track)):
            if color not in PLAYER_COLORS:
                problems.append(f"unknown player colour {_quote(color)} (choose from {', '.join(PLAYER_COLORS)})")
            track_ids = []
            for i in claims.get(color, ()):
                if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(board.tracks):
                    problems.append(f"player {color}: no track {i!r} on the board (ids are 0..{len(board.tracks) - 1})")
                else:
                    track_ids.append(i)
            held = []
            for pair in tickets.get(color, ()):
                ticket = _parse_ticket_cities(f"player {color}", pair, board, problems)
                if ticket:
                    held.append(ticket)
            players.append(PlayerClaims(color, tuple(track_ids), tuple(held),
                                        _check_score_track(f"player {color}", score_track.get(color), problems),
                                        _check_name(f"player {color}", names.get(color), problems)))
        _check_colors([p.color for p in players], problems)
        if not players:
            problems.append("game: no players")
        if not problems:
            game = cls(variant_name, values, tuple(players))
            problems.extend(rule_problems(game, board))
        if problems:
            raise GameError(problems)
        return game


class GameError(TtrError):
    """Every problem with a game, one line each (`problems`); the message is those lines (at most
    `MAX_PROBLEMS`, then how many more), so a person fixes them all in one go."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = self.problems[:MAX_PROBLEMS]
        if len(self.problems) > MAX_PROBLEMS:
            shown.append(f"... and {len(self.problems) - MAX_PROBLEMS} more problems")
        super().__init__("\n".join(shown))


def parse_game(data: Any, board: Board | None = None) -> Game:
    """A checked `Game` from a game file's dict; raises `GameError` (a `TtrError`) listing every
    problem, one a line (one problem: one line)."""
    game, problems = _parse(data, board or load_board())
    if problems:
        raise GameError(problems)
    return game


def check_game(data: Any, board: Board | None = None) -> list[str]:
    """Every problem with a game file's dict, one line each (empty when the game is valid)."""
    return _parse(data, board or load_board())[1]


def read_game(path: str | Path, board: Board | None = None) -> Game:
    """Read and check a game file."""
    return parse_game(load_json(path), board)


def load_json(path: str | Path, what: str = "game file", limit: int | None = None) -> Any:
    """A JSON file's content; `TtrError` when it cannot be read or is not valid JSON.

    Only a regular file of at most `limit` bytes (`MAX_GAME_BYTES`) is read (a FIFO, device or
    folder is refused before it is opened); see `parse_json` for the other caps."""
    limit = MAX_GAME_BYTES if limit is None else limit
    data = read_capped(path, limit, what)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TtrError(f"{path}: not a text file (expected UTF-8 JSON)") from None
    return parse_json(text, str(path), limit=limit)


# Caps on what a JSON file may hold, checked before or while parsing (a real game file is a few kB,
# nested 4 deep, its numbers under 1000).
MAX_GAME_BYTES = 1_000_000
MAX_JSON_DEPTH = 32
MAX_NUMBER_CHARS = 30
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _json_depth(text: str, cap: int) -> int:
    """The deepest nesting of objects and lists in JSON text (strings skipped), stopping past `cap`."""
    depth = deepest = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > cap:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def _number(kind):
    def parse(token: str):
        if len(token) > MAX_NUMBER_CHARS:
            raise _NumberTooLong(token)
        value = kind(token)
        if kind is float and not math.isfinite(value):
            raise _NumberTooLong(token)
        return value
    return parse


class _NumberTooLong(ValueError):
    pass


def _no_constant(token: str):
    raise _NumberTooLong(token)


def parse_json(text: str, source: str = "game file", limit: int = MAX_GAME_BYTES,
               max_depth: int = MAX_JSON_DEPTH) -> Any:
    """JSON text to data; `TtrError` naming the line and column of a syntax error.

    Refused before parsing: text over `limit` bytes, nesting deeper than `max_depth` (Python's
    parser would otherwise fail with RecursionError). Refused while parsing: a number longer than
    `MAX_NUMBER_CHARS` characters, and NaN/Infinity (not JSON)."""
    if len(text) > limit:
        raise TtrError(f"{source}: too large ({len(text) / 1e6:.1f} MB; at most {limit / 1e6:.1f} MB are read)")
    if _json_depth(text, max_depth) > max_depth:
        raise TtrError(f"{source}: nested more than {max_depth} levels deep (a game file needs 4)")
    try:
        return json.loads(text, parse_int=_number(int), parse_float=_number(float), parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise TtrError(f"{source}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    except _NumberTooLong as e:
        token = str(e)
        shown = token if len(token) <= 20 else token[:12] + f"... ({len(token)} characters)"
        raise TtrError(f"{source}: the number {shown} is not allowed (numbers are finite, at most "
                       f"{MAX_NUMBER_CHARS} characters)") from None
    except RecursionError:  # deep nesting the bracket count missed cannot crash the caller
        raise TtrError(f"{source}: nested too deep") from None


# ---------------------------------------------------------------- parsing a game file's dict

def _parse(data: Any, board: Board) -> tuple[Game | None, list[str]]:
    problems: list[str] = []
    if not isinstance(data, dict):
        return None, [f"game file: expected a JSON object with \"variant\" and \"players\", not {_kind(data)}"]
    for key in data:
        if key not in GAME_KEYS:
            hint = "" if _hints_spent(problems) else _did_you_mean(str(key), GAME_KEYS)
            problems.append(f"game file: unknown key {_quote(key)}{hint}")
    variant = _check_variant(data.get("variant", "classic"), problems)
    values = _check_ticket_values(variant, data.get("ticket_values"), problems)

    raw_players = data.get("players")
    if not isinstance(raw_players, list) or not raw_players:
        given = f", not {_kind(raw_players)}" if raw_players is not None and not isinstance(raw_players, list) else ""
        problems.append(f"game file: \"players\" must be a non-empty list of players{given}")
        return None, problems
    if len(raw_players) > MAX_PLAYERS_READ:
        problems.append(f"game file: {len(raw_players)} players; a game has at most {len(PLAYER_COLORS)}")
        return None, problems

    colors: list[str] = []
    requests: list[list[tuple[frozenset[str], str | None, str]]] = []  # per player: (pair, colour, label)
    tickets: list[tuple[tuple[str, str], ...]] = []
    score_tracks: list[int | None] = []
    names: list[str | None] = []
    for n, raw in enumerate(raw_players, 1):
        if not isinstance(raw, dict):
            problems.append(f"player {n}: expected an object with \"color\" and \"routes\", not {_kind(raw)}")
            raw = {}
        color = _check_player_color(n, raw.get("color"), problems)
        who = f"player {color or n}"
        for key in raw:
            if key not in PLAYER_KEYS:
                hint = "" if _hints_spent(problems) else _did_you_mean(str(key), PLAYER_KEYS)
                problems.append(f"{who}: unknown key {_quote(key)}{hint}")
        colors.append(color or f"#{n}")
        requests.append(_parse_routes(who, raw.get("routes", []), board, problems))
        held = []
        raw_tickets = raw.get("tickets", [])
        if not isinstance(raw_tickets, list):
            problems.append(f"{who}: \"tickets\" must be a list of [city, city]")
            raw_tickets = []
        elif len(raw_tickets) > MAX_ITEMS:
            problems.append(f"{who}: {len(raw_tickets)} tickets; the largest deck has 69")
            raw_tickets = []
        for pair in raw_tickets:
            ticket = _parse_ticket_cities(who, pair, board, problems)
            if ticket:
                held.append(ticket)
        tickets.append(tuple(held))
        score_tracks.append(_check_score_track(who, raw.get("score_track"), problems))
        names.append(_check_name(who, raw.get("name"), problems))
    _check_colors([c for c in colors if not c.startswith("#")], problems)
    if problems:
        return None, problems

    track_ids = _assign_tracks(requests, board)
    game = Game(variant, values, tuple(PlayerClaims(c, tuple(ids), t, s, name)
                                       for c, ids, t, s, name in zip(colors, track_ids, tickets, score_tracks,
                                                                     names)))
    problems.extend(rule_problems(game, board))
    return (None if problems else game), problems


def _check_variant(variant: Any, problems: list[str]) -> str:
    if isinstance(variant, int) and not isinstance(variant, bool):
        variant = str(variant)  # 1910 written as a number
    if isinstance(variant, str):
        name = "-".join(variant.lower().replace("_", " ").split())
        name = {"bigcities": "big-cities"}.get(name, name)
        if name in VARIANTS:
            return name
    hint = _did_you_mean(str(variant), VARIANTS) if isinstance(variant, str) else ""
    problems.append(f"unknown variant {_quote(variant)}{hint} (choose from {', '.join(VARIANTS)})")
    return "classic"


def _check_ticket_values(variant: str, values: Any, problems: list[str]) -> str:
    allowed = VARIANTS[variant].ticket_values
    if values is None:
        return allowed[0]
    if isinstance(values, int) and not isinstance(values, bool):
        values = str(values)
    if values not in TICKET_VALUES:
        problems.append(f"ticket_values {_quote(values)} is not one of {', '.join(TICKET_VALUES)}")
        return allowed[0]
    if values not in allowed:
        problems.append(f"ticket_values \"{values}\" is not available in the {variant} variant "
                        f"(it uses the {' or '.join(allowed)} values)")
        return allowed[0]
    return values


def _check_player_color(n: int, color: Any, problems: list[str]) -> str | None:
    if isinstance(color, str) and color.strip().lower() in PLAYER_COLORS:
        return color.strip().lower()
    if color is None:
        problems.append(f"player {n}: no \"color\" (choose from {', '.join(PLAYER_COLORS)})")
    else:
        hint = _did_you_mean(str(color).lower(), PLAYER_COLORS) if isinstance(color, str) else ""
        problems.append(f"player {n}: unknown player colour {_quote(color)}{hint} "
                        f"(choose from {', '.join(PLAYER_COLORS)})")
    return None


def _check_colors(colors: list[str], problems: list[str]) -> None:
    for color in PLAYER_COLORS:
        if colors.count(color) > 1:
            problems.append(f"player {color}: colour {color} is given to {colors.count(color)} players; "
                            "each player needs their own colour")
    if len(colors) > len(PLAYER_COLORS):
        problems.append(f"game file: {len(colors)} players; a game has at most {len(PLAYER_COLORS)}")


def _check_name(who: str, value: Any, problems: list[str]) -> str | None:
    """An optional player name: a short line of text (empty means none)."""
    if value is None:
        return None
    if not isinstance(value, str) or "\n" in value or len(value) > 40:
        problems.append(f"{who}: name must be one line of text, at most 40 characters")
        return None
    return value.strip() or None


def _check_score_track(who: str, value: Any, problems: list[str]) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"{who}: score_track must be a whole number of points (0 or more), not {_quote(value)}")
        return None
    if value > MAX_SCORE_TRACK:
        problems.append(f"{who}: score_track {value} is not a score of this game (at most {MAX_SCORE_TRACK})")
        return None
    return value


def _parse_routes(who: str, routes: Any, board: Board, problems: list[str]) -> list[tuple[frozenset[str], str | None, str]]:
    """Each route as (pair of cities, printed colour or None, label for messages)."""
    if not isinstance(routes, list):
        problems.append(f"{who}: \"routes\" must be a list of [city, city] or [city, city, colour]")
        return []
    if len(routes) > MAX_ITEMS:
        problems.append(f"{who}: {len(routes)} routes; a player's 45 trains make at most 45")
        return []
    out = []
    for n, route in enumerate(routes, 1):
        if (not isinstance(route, list) or len(route) not in (2, 3)
                or not all(isinstance(x, str) for x in route)):
            problems.append(f"{who}: route {n} {_short(route)} must be [city, city] or [city, city, colour]")
            continue
        a = _city(who, route[0], board, problems)
        b = _city(who, route[1], board, problems)
        color = None
        if len(route) == 3:
            color = _printed_color(route[2])
            if color is None:
                problems.append(f"{who}: route {route[0]}–{route[1]}: unknown track colour {_quote(route[2])}"
                                f"{_did_you_mean(route[2].lower(), PRINTED_COLORS)}")
                continue
        if a is None or b is None:
            continue
        label = f"{a}–{b}" + (f" ({color})" if color else "")
        between = board.tracks_between(a, b)
        if not between:
            problems.append(f"{who}: route {a}–{b} is not on the board (no track joins them)")
        elif color and not any(t.color == color for t in between):
            there = " and ".join(t.color for t in between)
            problems.append(f"{who}: route {label} is not on the board (the track{'s' if len(between) > 1 else ''} "
                            f"{a}–{b} {'are' if len(between) > 1 else 'is'} {there})")
        else:
            out.append((frozenset((a, b)), color, label))
    return out


def _assign_tracks(requests: list[list[tuple[frozenset[str], str | None, str]]], board: Board) -> list[list[int]]:
    """Track ids for every route. Routes that name one track take it; a route that fits both
    tracks of a double then takes the first one nobody has taken yet (the same track twice, if
    both are taken, for the rule checks to report)."""
    ids: list[list[int | None]] = []
    taken: set[int] = set()
    for player in requests:
        row: list[int | None] = []
        for pair, color, _ in player:
            fits = [t.id for t in board.tracks_between(*pair) if color is None or t.color == color]
            row.append(fits[0] if len(fits) == 1 else None)
            if len(fits) == 1:
                taken.add(fits[0])
        ids.append(row)
    for p, player in enumerate(requests):
        for r, (pair, color, _) in enumerate(player):
            if ids[p][r] is None:
                fits = [t.id for t in board.tracks_between(*pair) if color is None or t.color == color]
                free = [i for i in fits if i not in taken]
                ids[p][r] = free[0] if free else fits[0]
                taken.add(ids[p][r])
    return [[i for i in row if i is not None] for row in ids]


def _parse_ticket_cities(who: str, pair: Any, board: Board, problems: list[str]) -> tuple[str, str] | None:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not all(isinstance(x, str) for x in pair):
        problems.append(f"{who}: ticket {_short(pair)} must be [city, city]")
        return None
    a = _city(who, pair[0], board, problems)
    b = _city(who, pair[1], board, problems)
    if a is None or b is None:
        return None
    return a, b


# ---------------------------------------------------------------- rules on resolved claims

def rule_problems(game: Game, board: Board) -> list[str]:
    """What breaks the rules in a game whose tracks and cities are all on the board: tracks
    claimed twice, doubles, trains, tickets outside the variant's deck or held twice."""
    problems: list[str] = []
    owner: dict[int, str] = {}
    small_game = len(game.players) <= DOUBLES_CLOSED_UP_TO
    deck = {t.cities: t for t in board.tickets if VARIANTS[game.variant].deck in t.decks}
    ticket_holder: dict[frozenset[str], str] = {}
    for p in game.players:
        who = f"player {p.color}"
        for i in p.track_ids:
            track = board.tracks[i]
            other = board.double_of(track)
            if owner.get(i) == p.color:
                problems.append(f"{who}: route {_track(track, board)} is listed twice")
            elif i in owner:
                problems.append(f"{who}: route {_track(track, board)} is already claimed by {owner[i]}")
            elif other is not None and owner.get(other.id) == p.color:
                problems.append(f"{who}: holds both tracks of the double route {track.a}–{track.b}; "
                                "a player may claim only one of them")
            elif other is not None and other.id in owner and small_game:
                problems.append(f"{who}: route {track.a}–{track.b} is a double and {owner[other.id]} holds its other "
                                f"track; in a 2–3 player game only one track of a double may be used")
            owner.setdefault(i, p.color)
        trains = sum(board.tracks[i].length for i in p.track_ids)
        if trains > TRAINS_PER_PLAYER:
            problems.append(f"{who}: routes use {trains} trains, more than the {TRAINS_PER_PLAYER} a player has")
        for a, b in p.tickets:
            key = frozenset((a, b))
            if a == b:
                problems.append(f"{who}: ticket {a}–{b} joins a city to itself")
            elif key not in deck:
                problems.append(f"{who}: ticket {a}–{b} is not in the {game.variant} deck")
            elif key in ticket_holder:
                holder = ticket_holder[key]
                problems.append(f"{who}: ticket {a}–{b} is listed twice" if holder == p.color
                                else f"{who}: ticket {a}–{b} is already held by {holder} (each card exists once)")
            else:
                ticket_holder[key] = p.color
    return problems


def ticket_card(game: Game, a: str, b: str, board: Board) -> Ticket:
    """The card for a ticket held in `game` (its value depends on the game's ticket values)."""
    deck = VARIANTS[game.variant].deck
    key = frozenset((a, b))
    for t in board.tickets:
        if t.cities == key and deck in t.decks:
            return t
    raise TtrError(f"ticket {a}–{b} is not in the {game.variant} deck")


def ticket_value(ticket: Ticket, ticket_values: str) -> int:
    """Points of a ticket card under the game's value set."""
    if ticket_values == "2004" and ticket.points_2004 is not None:
        return ticket.points_2004
    return ticket.points


# ---------------------------------------------------------------- names

def _fold(name: str) -> str:
    """A city name for lenient matching: no accents, case, dots or "Saint"/"Ste." spelling."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower().replace(".", " ")
    words = ["st" if w in ("saint", "ste", "st") else w for w in plain.split()]
    return " ".join(words)


def _city(who: str, name: str, board: Board, problems: list[str]) -> str | None:
    """The board's spelling of a city name, or None after reporting it (with the closest name)."""
    if name in board.cities:
        return name
    if len(name) > MAX_TEXT:  # longer than any city: no fuzzy search on it
        problems.append(f"{who}: unknown city {_quote(name)} ({len(name)} characters; no city name is "
                        f"longer than {MAX_TEXT})")
        return None
    folded = _folded_cities(tuple(board.cities))
    if _fold(name) in folded:
        return folded[_fold(name)]
    if _hints_spent(problems):
        problems.append(f"{who}: unknown city {_quote(name)}")
        return None
    close = _closest(_fold(name), list(folded), typos=True)
    problems.append(f"{who}: unknown city {_quote(name)}{_hint(folded[close] if close else None)}")
    return None


@functools.lru_cache(maxsize=8)
def _folded_cities(cities: tuple[str, ...]) -> dict[str, str]:
    return {_fold(c): c for c in cities}


def _hints_spent(problems: list[str]) -> bool:
    """True once MAX_HINTS problems are listed: searching a hint for each of thousands of unknown
    names would take minutes, and nobody reads past the first few."""
    return len(problems) >= MAX_HINTS


def _closest(word: str, choices, typos: bool = False) -> str | None:
    """The choice `word` most likely meant, or None: difflib's closest (similarity 0.6 at least).
    With `typos` (city names), first a choice one or two letters off (a swap counts as one, which
    difflib misses: "Maimi")."""
    choices = list(choices)
    if typos:
        distance, choice = min((_typos(word, c), c) for c in choices)
        if distance <= min(2, max(1, len(word) // 4)):
            return choice
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return close[0] if close else None


def _hint(meant: str | None) -> str:
    return f" (did you mean \"{meant}\"?)" if meant else ""


def _typos(a: str, b: str) -> int:
    """Edits from a to b: letters inserted, deleted, changed or swapped with the next."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], previous2[j - 2] + 1)
        previous2, previous = previous, row
    return previous[-1]


def _printed_color(name: str) -> str | None:
    name = name.strip().lower()
    name = {"grey": "gray", "purple": "pink"}.get(name, name)
    return name if name in PRINTED_COLORS else None


def _did_you_mean(word: str, choices) -> str:
    """" (did you mean "x"?)" for a key, variant or colour, or "" (no search on an overlong word)."""
    return "" if len(word) > MAX_TEXT else _hint(_closest(word, choices))


def _track(track: Track, board: Board) -> str:
    return f"{track.a}–{track.b}" + (f" ({track.color})" if board.double_of(track) else "")


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return _short(json.dumps(value, ensure_ascii=False)[1:-1])
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (int, float, bool, type(None))) else _short(value)


def _short(value: Any) -> str:
    if isinstance(value, (list, dict)) and len(value) > 20:  # never serialise a huge value to cut it
        value = list(value)[:20] if isinstance(value, list) else dict(list(value.items())[:20])
    try:
        text = json.dumps(value[:60] if isinstance(value, str) else value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value).__name__)
    # JSON escapes the control characters but not the other line breaks str.splitlines knows.
    text = text.translate(_LINE_BREAKS)
    return text if len(text) <= 40 else text[:37] + "..."


_LINE_BREAKS = {ord(c): f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")
