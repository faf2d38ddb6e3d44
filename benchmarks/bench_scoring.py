"""Speed of the scoring engine: exact longest path and `ttr tally` end to end.

    python3 benchmarks/bench_scoring.py

Prints one line per figure:
- the longest path of a full 45-train network packed into the most loop-rich part of the map
  (Chicago, Pittsburgh, New York, Washington, Raleigh, Atlanta, Nashville, Saint Louis, with
  Toronto, Montréal and Charleston), the target being under 10 ms per player;
- the longest path of random legal networks of up to 45 trains (median and worst): anywhere on
  the map, inside that east region, and inside random connected regions;
- `ttr tally --json` of a 5-player game in a fresh process, and the same parse + score in-process.
"""
from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.board import load_board  # noqa: E402
from scoring.game import Game, parse_game  # noqa: E402
from scoring.longest_path import longest_path  # noqa: E402
from scoring.rules import PLAYER_COLORS, TRAINS_PER_PLAYER, VARIANTS  # noqa: E402
from scoring.score import score_game  # noqa: E402

# One track per city pair (a player may hold only one track of a double): 18 tracks, 45 trains.
PACKED = [
    ("Chicago", "Pittsburgh"), ("Chicago", "Saint Louis"), ("Chicago", "Toronto"),
    ("Pittsburgh", "Toronto"), ("Pittsburgh", "New York"), ("Pittsburgh", "Washington"),
    ("Pittsburgh", "Raleigh"), ("Pittsburgh", "Nashville"), ("Pittsburgh", "Saint Louis"),
    ("New York", "Washington"), ("Raleigh", "Washington"), ("Atlanta", "Raleigh"),
    ("Atlanta", "Nashville"), ("Nashville", "Raleigh"), ("Nashville", "Saint Louis"),
    ("Atlanta", "Charleston"), ("Charleston", "Raleigh"), ("Montréal", "Toronto"),
]


def timed_ms(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


EAST = {c for pair in PACKED for c in pair}


def random_network(rng: random.Random, board, cities: set[str] | None = None) -> list[int]:
    """A legal network of up to 45 trains: random tracks (between `cities` if given), one per pair."""
    ids, pairs, trains = [], set(), 0
    pool = [t for t in board.tracks if cities is None or t.cities <= cities]
    for t in rng.sample(pool, len(pool)):
        if t.cities not in pairs and trains + t.length <= TRAINS_PER_PLAYER:
            ids.append(t.id)
            pairs.add(t.cities)
            trains += t.length
    return ids


def random_region(rng: random.Random, board, size: int) -> set[str]:
    """`size` cities grown from a random one along tracks."""
    region = {rng.choice(sorted(board.cities))}
    while len(region) < size:
        t = rng.choice(board.tracks)
        if (t.a in region) != (t.b in region):
            region |= {t.a, t.b}
    return region


def random_five_player_game(rng: random.Random, board) -> dict:
    """A legal 5-player classic game: tracks dealt round-robin until trains run out."""
    claims = {c: [] for c in PLAYER_COLORS}
    trains = dict.fromkeys(PLAYER_COLORS, 0)
    pair_owner = {}
    for n, t in enumerate(rng.sample(board.tracks, len(board.tracks))):
        color = PLAYER_COLORS[n % 5]
        if pair_owner.get((t.cities, color)) or trains[color] + t.length > TRAINS_PER_PLAYER:
            continue
        claims[color].append(t.id)
        pair_owner[(t.cities, color)] = True
        trains[color] += t.length
    deck = [k for k in board.tickets if VARIANTS["classic"].deck in k.decks]
    rng.shuffle(deck)
    tickets = {c: [(k.a, k.b) for k in deck[3 * i:3 * i + 3]] for i, c in enumerate(PLAYER_COLORS)}
    return Game.from_claims("classic", claims, tickets=tickets).to_dict()


def main() -> None:
    board = load_board()
    packed = [board.tracks_between(a, b)[0].id for a, b in PACKED]
    trains = sum(board.tracks[i].length for i in packed)
    assert trains <= TRAINS_PER_PLAYER
    times = timed_ms(lambda: longest_path(packed, board), 50)
    length = longest_path(packed, board)[0]
    print(f"longest path, packed east network ({len(packed)} tracks, {trains} trains, path {length}): "
          f"median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {len(times)} runs")

    for where, cities in (("anywhere on the map", None), ("inside the east region", EAST)):
        rng = random.Random(2026)
        per_network = []
        for _ in range(300):
            ids = random_network(rng, board, cities)
            per_network.append(min(timed_ms(lambda: longest_path(ids, board), 3)))
        print(f"longest path, 300 random legal networks {where} (up to 45 trains): "
              f"median {statistics.median(per_network):.2f} ms, worst {max(per_network):.2f} ms")

    rng = random.Random(3)
    per_network = []
    for _ in range(1000):
        ids = random_network(rng, board, random_region(rng, board, rng.randint(8, 18)))
        per_network.append(min(timed_ms(lambda: longest_path(ids, board), 1)))
    print(f"longest path, 1000 random legal networks in random connected regions of 8-18 cities: "
          f"median {statistics.median(per_network):.2f} ms, worst {max(per_network):.2f} ms")

    game = random_five_player_game(random.Random(7), board)
    times = timed_ms(lambda: score_game(parse_game(game, board), board=board), 20)
    print(f"parse + score, 5-player game in-process: median {statistics.median(times):.2f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "game5.json"
        path.write_text(json.dumps(game), encoding="utf-8")
        command = [sys.executable, "-m", "app.cli", "tally", str(path), "--json"]
        times = timed_ms(lambda: subprocess.run(command, check=True, capture_output=True), 5)
    print(f"ttr tally --json, 5-player game, fresh process: median {statistics.median(times):.0f} ms")


if __name__ == "__main__":
    main()
