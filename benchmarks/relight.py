"""Real boards in other homes: each labelled photo re-lit and re-coloured as another copy of the
board under another light, taken by another phone, with other cars (`vision/synth/relight.py`).

    python3 benchmarks/relight.py SRC OUT [--seed S] [--per-photo N] [--only GLOB ...] [--all]
    python3 ../shared/eval/eval_real.py OUT --cmd "ttr detect --json"

SRC holds photos and gt/<photo stem>.json truths in the `eval_real.py` format (../shared/real/dev).
Output i of source photo k (its place among SRC's labelled photos, by name) is drawn from (S, k, i)
alone: its world (`world.random_world`, the ranges the renders' `--world varied` draws from), its
noise and its crop. Written: OUT/<stem>_rl<S>_<i>.jpg and OUT/gt/<same>.json, the source's truth
with the new corners and image size, "source", "world" (what was drawn) and "frame" (the crop and
scale). A `_small` copy whose full-size photo is in SRC is left out (the same board, light and
cars) unless `--all`; `--only` keeps the photos whose stem matches one of the patterns (e.g. one
photo session, to measure a fold on it).

Seeds 9000-9999 are kept for measuring (docs/data.md): never train on what they make. OUT is made of
the real photos: it is a measuring set, never committed (as the photos themselves). SRC is only read.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from vision.image_io import load_photo  # noqa: E402
from vision.synth.relight import relight  # noqa: E402
from vision.synth.render import default_model  # noqa: E402
from vision.synth.world import random_world  # noqa: E402


def sources(src: Path, only: list[str], every_copy: bool) -> list[tuple[int, Path, Path]]:
    """(k, photo, truth file) of each photo to relight, k its place among all of SRC's labelled
    photos (so a photo's outputs are the same whichever others are chosen)."""
    found = labelled_photos(src)
    stems = {p.stem for p, _ in found}
    keep = []
    for k, (photo, gt) in enumerate(found):
        if not every_copy and photo.stem.endswith("_small") and photo.stem[:-len("_small")] in stems:
            continue
        if only and not any(fnmatch.fnmatch(photo.stem, pattern) for pattern in only):
            continue
        keep.append((k, photo, gt))
    return keep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0, help="photo i of source k is drawn from (seed, k, i) (default 0)")
    ap.add_argument("--per-photo", type=int, default=2, help="outputs per source photo (default 2)")
    ap.add_argument("--only", action="append", default=[], metavar="GLOB",
                    help="keep the source photos whose stem matches (repeatable)")
    ap.add_argument("--all", action="store_true", help="also the _small copies of photos that are there in full")
    a = ap.parse_args(argv)
    if a.per_photo < 1:
        print("relight: --per-photo must be at least 1", file=sys.stderr)
        return 2
    if a.out.resolve() == a.src.resolve() or a.src.resolve() in a.out.resolve().parents:
        print(f"relight: {a.out} lies in {a.src}: the source folder is only read", file=sys.stderr)
        return 2
    found = sources(a.src, a.only, a.all)
    if not found:
        print(f"relight: {a.src}: no labelled photo (photos with gt/<stem>.json) to relight", file=sys.stderr)
        return 1
    (a.out / "gt").mkdir(parents=True, exist_ok=True)
    printed = default_model().printed_bgr
    for k, photo, gt in found:
        image = load_photo(str(photo))
        truth = json.loads(gt.read_text(encoding="utf-8"))
        for i in range(a.per_photo):
            world = random_world([a.seed, k, i], printed)
            r = relight(image, truth, world, np.random.default_rng([a.seed, k, i, 1]))
            name = f"{photo.stem}_rl{a.seed}_{i:02d}"
            (a.out / f"{name}.jpg").write_bytes(r.jpeg)
            r.truth.update(photo=f"{name}.jpg", source=photo.name)
            (a.out / "gt" / f"{name}.json").write_text(json.dumps(r.truth, indent=1) + "\n", encoding="utf-8")
            print(f"{name}.jpg  {world.light.kind:8s} {world.print_run.paper:8s} {world.phone.kind:9s} "
                  f"{r.size_wh[0]}x{r.size_wh[1]}  {r.truth['frame']['kind']}", flush=True)
    print(f"{len(found) * a.per_photo} photos of {len(found)} boards written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
