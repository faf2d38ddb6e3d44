"""Real boards on other tables: each sharp labelled photo's board, flattened through its true corners,
photographed again by the renderer's camera over another table, in other light.

    python3 benchmarks/rephotograph.py SRC OUT [--per-photo 4] [--seed 4545] [--backgrounds hostile]
    python3 ../shared/eval/eval_real.py OUT --cmd "ttr detect --json"

SRC holds photos and gt/<photo stem>.json truths in the `eval_real.py` format (../shared/real/dev).
Every photo whose board is at least `--min-px-per-mm` sharp (the 12 MP and pre-flattened ones of
the development set) is flattened at its own scale (at most 4 px/mm) and laid, `--per-photo`
times, under `vision.synth.camera.random_camera` (any side of the table, tilted up to ~35
degrees, 40-95 % of the frame) on the renderer's tables (`--backgrounds`: usual, hostile or one
hostile kind; hostile: checked cloths, stone, red-brown wood, a table edge, tiles, with hands and
cards over the board's edge), with its light, lens, sensor and JPEG effects. The truth is the
photo's, with the new corners. Photo i of source photo k depends on (seed, k, i) alone.

What it measures that the renders cannot: the real print (which the locator's print match and
the reader's colours know) on tables it was not seen on, under light it was not seen in. What it
cannot: the cars are flat in the old photo, so they lean as the old camera saw them, not the new
one, and the old light stays under the new. OUT is a measuring set: keep it out of the repository
(it is made of the real photos).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from vision.image_io import load_photo  # noqa: E402
from vision.rectify import photo_px_per_mm  # noqa: E402
from vision.synth.render import photograph_again  # noqa: E402


def sources(src: Path, min_px_per_mm: float) -> list[tuple[Path, dict]]:
    out = []
    for photo, gt in labelled_photos(src):
        truth = json.loads(gt.read_text(encoding="utf-8"))
        if photo_px_per_mm(truth["corners"]) >= min_px_per_mm:
            out.append((photo, truth))
    return out


def rephotograph(photo: Path, truth: dict, rng: np.random.Generator, backgrounds: str):
    """(JPEG bytes, truth) of one new photo of `photo`'s board."""
    again = photograph_again(rng, load_photo(str(photo)), truth["corners"], backgrounds)
    out = dict(truth)
    out.update({"image_size": list(again.size_wh), "corners": np.round(again.corners_xy, 2).tolist(),
                "source": photo.name, "background": again.scene.kind})
    return again.jpeg, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--per-photo", type=int, default=4)
    ap.add_argument("--seed", type=int, default=4545)
    ap.add_argument("--backgrounds", default="hostile")
    ap.add_argument("--min-px-per-mm", type=float, default=1.5)
    a = ap.parse_args(argv)
    src, out = Path(a.src), Path(a.out)
    (out / "gt").mkdir(parents=True, exist_ok=True)
    found = sources(src, a.min_px_per_mm)
    if not found:
        print(f"{src}: no labelled photo with a board of {a.min_px_per_mm} px/mm or more", file=sys.stderr)
        return 1
    n = 0
    for k, (photo, truth) in enumerate(found):
        for i in range(a.per_photo):
            rng = np.random.default_rng([a.seed, k, i])
            data, t = rephotograph(photo, truth, rng, a.backgrounds)
            name = f"{photo.stem}_re{a.seed}_{i:02d}"
            (out / f"{name}.jpg").write_bytes(data)
            t["photo"] = f"{name}.jpg"
            (out / "gt" / f"{name}.json").write_text(json.dumps(t, indent=1), encoding="utf-8")
            n += 1
    print(f"{n} photos of {len(found)} boards written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
