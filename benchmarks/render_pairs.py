"""Photos of one board read together, on renders: one position in one home (its copy of the board,
its light) photographed by two cameras, read alone and together (`vision.several.combine`).

    python3 benchmarks/render_pairs.py --seed S --count N [--second-flash] [--against NAME=VALUE ...]

Position i is drawn from [S, i], its home from [S, i, 1] (`ttr render --world varied`'s worlds),
camera k's photo from [S, i, 2 + k]; each is read from its JPEG file, as a phone's photo is (its
EXIF says whether the flash fired). With `--second-flash` the second photo is taken with the
phone's flash (its light drawn from [S, i, 4] as a flash in a room; the copy of the board, the
phone and the cars stay) and the first without it (a home whose light was drawn as a flash takes
it from [S, i, 5], not a flash): the pairs that weigh a flash photo against one without. A pair
whose photo the locator refuses is left out. Per pair: whether each photo's flash fired (its EXIF),
tracks right alone (each photo) and together. Then a SUMMARY line: tracks right together, and alone with the better and the worse
photo, pairs exact, pairs worse than their better photo alone, wrong tracks not marked doubtful,
doubtful tracks a pair. `--against several.NAME=VALUE ...`
combines the same photos again with those settings changed (e.g. `several.by_certainty=false`)
and gives its SUMMARY line too; given again, once more with other settings. Seeds below 9000 are for choosing how photos are combined; 9000
and up for testing it.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import compare_tracks  # noqa: E402 (this folder: the scripts' own helper)

from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.settings import with_values  # noqa: E402
from vision.several import PhotoPart, combine  # noqa: E402
from vision.synth.positions import random_position  # noqa: E402
from vision.synth.render import default_model, render_photo  # noqa: E402
from vision.synth.world import LIGHTS, random_light, random_world  # noqa: E402

NOT_FLASH = [kind for kind in LIGHTS if kind != "flash"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=30, help="positions (default 30)")
    ap.add_argument("--second-flash", action="store_true",
                    help="the second photo with the flash, the first without")
    ap.add_argument("--against", action="append", nargs="+", default=[], metavar="NAME=VALUE",
                    help="reader settings to combine with too, dotted (JSON values); again for another")
    args = ap.parse_args(argv)
    reader = Reader()
    readers = {"shipped": reader}
    for group in args.against:
        values = {k: json.loads(v) for k, v in (a.split("=", 1) for a in group)}
        readers[" ".join(group)] = Reader(settings=with_values(reader.settings, values))
    board = load_board()
    printed = default_model().printed_bgr
    sums = {name: dict.fromkeys(("together", "exact", "worse", "unmarked", "doubtful"), 0) for name in readers}
    n = better = worse_alone = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.count):
            world = random_world([args.seed, i, 1], printed)
            worlds = [world, world]
            if args.second_flash:
                if world.light.kind == "flash":
                    rng = np.random.default_rng([args.seed, i, 5])
                    worlds[0] = replace(world, light=random_light(rng, NOT_FLASH[rng.integers(len(NOT_FLASH))]))
                worlds[1] = replace(world, light=random_light(np.random.default_rng([args.seed, i, 4]), "flash"))
            claims = random_position(np.random.default_rng([args.seed, i]), board)
            parts, truth = [], None
            for k in (0, 1):
                photo = render_photo(np.random.default_rng([args.seed, i, 2 + k]), claims, world.phone.size_wh,
                                     world=worlds[k])
                truth = photo.truth
                path = Path(tmp) / f"{i}_{k}.jpg"
                path.write_bytes(photo.jpeg)
                try:
                    parts.append(PhotoPart(str(path), reader.trace_path(str(path))))
                except TtrError:
                    break
            if len(parts) < 2:
                print(f"position {i}: a photo refused, left out")
                continue
            alone = [compare_tracks(truth, p.trace.tracks)["right"] for p in parts]
            n += 1
            better += max(alone)
            worse_alone += min(alone)
            said = []
            for name, r in readers.items():
                got = compare_tracks(truth, combine(r, parts).reading.tracks)
                s = sums[name]
                s["together"] += got["right"]
                s["exact"] += got["right"] == got["total"]
                s["worse"] += got["right"] < max(alone)
                s["unmarked"] += sum(not w[5] for w in got["wrong"])
                s["doubtful"] += got["doubtful"]
                said.append(f"{got['right']}/{got['total']} ({got['doubtful']} doubtful)")
            flash = " / ".join("yes" if p.trace.view.flash_fired else "no" for p in parts)
            print(f"position {i}: flash {flash}, alone {alone[0]} / {alone[1]}, together " + " | ".join(said),
                  flush=True)
    for name, s in sums.items():
        print(f"SUMMARY {name}: pairs={n} together={s['together']} better_alone={better} worse_alone={worse_alone} "
              f"exact={s['exact']} worse_than_better_alone={s['worse']} wrong_unmarked={s['unmarked']} "
              f"doubtful_per_pair={s['doubtful'] / max(n, 1):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
