"""Photos of one board read together, on renders: one position in one home (its copy of the board,
its light) photographed by two cameras, read alone and together (`vision.several.combine`).

    python3 benchmarks/render_pairs.py --seed S --count N [--settings NAME=VALUE ...]

Position i is drawn from [S, i], its home from [S, i, 1] (`ttr render --world varied`'s worlds),
camera k's photo from [S, i, 2 + k]. A pair whose photo a locator refuses is left out. Per pair:
tracks right alone (each photo) and together. Then a SUMMARY line: tracks right together, and
alone with the better and the worse photo, pairs exact, pairs worse than their better photo alone,
wrong tracks not marked doubtful, doubtful tracks a pair. `--settings several.NAME=VALUE` reads
with another `SeveralSettings` (e.g. `several.by_certainty=false`). Seeds below 9000 are for
choosing how photos are combined; 9000 and up for testing it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import compare_tracks  # noqa: E402 (this folder: the scripts' own helper)

from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.settings import ReaderSettings, with_values  # noqa: E402
from vision.several import PhotoPart, combine  # noqa: E402
from vision.synth.positions import random_position  # noqa: E402
from vision.synth.render import default_model, render_photo  # noqa: E402
from vision.synth.world import random_world  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=30, help="positions (default 30)")
    ap.add_argument("--settings", nargs="*", default=[], metavar="NAME=VALUE",
                    help="reader settings to change, dotted (JSON values)")
    args = ap.parse_args(argv)
    values = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.settings)}
    reader = Reader(settings=with_values(ReaderSettings(), values))
    board = load_board()
    printed = default_model().printed_bgr
    n = together = better = worse_alone = exact = worse = unmarked = doubtful = 0
    for i in range(args.count):
        world = random_world([args.seed, i, 1], printed)
        claims = random_position(np.random.default_rng([args.seed, i]), board)
        parts, truth = [], None
        for k in (0, 1):
            photo = render_photo(np.random.default_rng([args.seed, i, 2 + k]), claims, world.phone.size_wh,
                                 world=world)
            truth = photo.truth
            try:
                parts.append(PhotoPart(f"{i}/{k}", reader.trace(photo.image_bgr)))
            except TtrError:
                break
        if len(parts) < 2:
            print(f"position {i}: a photo refused, left out")
            continue
        alone = [compare_tracks(truth, p.trace.tracks)["right"] for p in parts]
        got = compare_tracks(truth, combine(reader, parts).reading.tracks)
        n += 1
        together += got["right"]
        better += max(alone)
        worse_alone += min(alone)
        exact += got["right"] == got["total"]
        worse += got["right"] < max(alone)
        unmarked += sum(not w[5] for w in got["wrong"])
        doubtful += got["doubtful"]
        print(f"position {i}: alone {alone[0]} / {alone[1]}, together {got['right']}/{got['total']}, "
              f"{got['doubtful']} doubtful", flush=True)
    print(f"SUMMARY pairs={n} together={together} better_alone={better} worse_alone={worse_alone} exact={exact} "
          f"worse_than_better_alone={worse} wrong_unmarked={unmarked} doubtful_per_pair={doubtful / max(n, 1):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
