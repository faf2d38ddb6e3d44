"""Fit `vision.settings.DecideSettings.lone_claim` on the truths of labelled sets (their photos are
not read): how much less likely a track is a player's when it touches none of their other claims.

    python3 benchmarks/fit_lone_claim.py --fit DIR [DIR ...] [--write]

For every played position and every player in it, each track is counted by whether the player
owns it and whether the player owns a track sharing a city with it. The fitted cost is the log of
the odds ratio: odds(owned | a neighbour owned) / odds(owned | no neighbour owned). Prints the
counts and a FIT line; --write puts it into models/reader_settings.json with this command and its data.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos, missing_folder  # noqa: E402 (this folder: the scripts' own helper)

from scoring.board import Board, load_board  # noqa: E402
from vision.decide.priors import touching  # noqa: E402
from vision.settings import write_fitted  # noqa: E402


def owners(truth: dict, board: Board) -> list[str | None]:
    """Each track's owner in a truth file (the lanes of a double in the order the board lists them)."""
    lanes: dict[tuple, list[int]] = {}
    for t in board.tracks:
        lanes.setdefault((*sorted((t.a, t.b)), t.color), []).append(t.id)
    out: list[str | None] = [None] * len(board.tracks)
    seen: Counter = Counter()
    for t in truth["tracks"]:
        key = (*sorted((t["a"], t["b"])), t["color"])
        out[lanes[key][seen[key]]] = t.get("owner")
        seen[key] += 1
    return out


def count(positions: list[list[str | None]], board: Board) -> Counter:
    """{(a neighbour is the player's, the track is the player's): count} over every position's
    players and every track."""
    near = touching(board)
    counts: Counter = Counter()
    for owner in positions:
        for player in {o for o in owner if o}:
            mine = np.array([o == player for o in owner])
            beside = near @ mine > 0
            for b in (False, True):
                for m in (False, True):
                    counts[(b, m)] += int(np.sum((beside == b) & (mine == m)))
    return counts


def lone_cost(counts: Counter) -> float:
    """log(odds(owned | a neighbour owned) / odds(owned | none)); every count must be non-zero."""
    if min(counts[k] for k in ((False, False), (False, True), (True, False), (True, True))) == 0:
        raise ValueError("too few positions: some case never occurs")
    return math.log((counts[(True, True)] / counts[(True, False)]) / (counts[(False, True)] / counts[(False, False)]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fit", nargs="+", required=True, metavar="DIR", help="labelled sets (photos with gt/*.json)")
    ap.add_argument("--write", action="store_true",
                    help="write the fitted cost into models/reader_settings.json with this command and its data")
    args = ap.parse_args(argv)
    if (missing := missing_folder(args.fit)) is not None:
        ap.error(f"{missing}: no such folder")
    board = load_board()
    positions = [owners(json.loads(gt.read_text(encoding="utf-8")), board)
                 for d in args.fit for _, gt in labelled_photos(Path(d))]
    positions = [p for p in positions if any(p)]
    counts = count(positions, board)
    try:
        cost = lone_cost(counts)
    except ValueError as e:
        print(f"fit_lone_claim: {e} ({len(positions)} played positions)", file=sys.stderr)
        return 1
    print(f"played positions {len(positions)}: owned beside a claim {counts[(True, True)]} of "
          f"{counts[(True, True)] + counts[(True, False)]}, owned alone {counts[(False, True)]} of "
          f"{counts[(False, True)] + counts[(False, False)]}")
    print(f"FIT lone_claim={cost:.2f}")
    if args.write:
        write_fitted({"decide.lone_claim": round(cost, 2)},
                     by="benchmarks/fit_lone_claim.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                     data=f"the truths of {len(positions)} played positions of {', '.join(Path(d).name for d in args.fit)} "
                          "(renders: the renderer's games); no photo read, none real")
    return 0


if __name__ == "__main__":
    sys.exit(main())
