"""How few cars a player of a finished game has: the prior behind `DecideSettings.few_cars_prior`.

    python3 benchmarks/fit_few_cars.py [--positions 3000] [--seed 0] [--write]

Plays POSITIONS games of the game model (`vision.synth.positions.random_position`, 2-5 players,
position i from (SEED, i)) and counts each player's cars on the board at the end. The prior for a
count n is the log odds against a player having n cars or fewer: -log(share of players with at
most n), the share held to at least one player in all those counted (a count never seen is as
unlikely as the rarest seen). The table runs to the first count that at least 5 % of players have
(log odds under 3): past it a player's claims outweigh the prior on any photo. No photo is used.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.board import load_board  # noqa: E402
from vision.settings import write_fitted  # noqa: E402
from vision.synth.positions import random_position  # noqa: E402

LAST_SHARE = 0.05  # the table ends at the first count this share of players have or fewer


def cars_per_player(positions: int, seed: int) -> np.ndarray:
    """Every player's cars at the end of `positions` games of the game model."""
    board = load_board()
    length = {t.id: t.length for t in board.tracks}
    cars = []
    for i in range(positions):
        game = random_position(np.random.default_rng([seed, i]), board)
        cars += [sum(length[t] for t in tracks) for tracks in game.values()]
    return np.array(cars)


def few_cars_prior(cars: np.ndarray) -> list[float]:
    """-log(share of players with at most n cars) for n = 0, 1, ... until that share reaches
    `LAST_SHARE`; a share of 0 counts as one player."""
    out = []
    for n in range(int(cars.max()) + 1):
        share = max(float((cars <= n).mean()), 1.0 / len(cars))
        out.append(round(-float(np.log(share)), 2))
        if share >= LAST_SHARE:
            break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--positions", type=int, default=3000, help="games played (default 3000)")
    ap.add_argument("--seed", type=int, default=0, help="game i is drawn from (seed, i) (default 0)")
    ap.add_argument("--write", action="store_true",
                    help="write the table into models/reader_settings.json with this command and its data")
    a = ap.parse_args(argv)
    if a.positions < 1:
        print("fit_few_cars: --positions must be at least 1", file=sys.stderr)
        return 2
    cars = cars_per_player(a.positions, a.seed)
    prior = few_cars_prior(cars)
    for n, odds in enumerate(prior):
        print(f"{n:2d} cars or fewer: {float((cars <= n).mean()):.5f} of players, log odds against {odds:.2f}")
    print(f"FIT few_cars_prior={prior} (players={len(cars)}, games={a.positions})")
    if a.write:
        write_fitted({"decide.few_cars_prior": prior}, by="benchmarks/fit_few_cars.py " + " ".join(sys.argv[1:]),
                     data=f"{len(cars)} players of {a.positions} games of vision.synth.positions from seed {a.seed}; "
                          "no photo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
