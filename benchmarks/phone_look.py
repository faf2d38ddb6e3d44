"""Other phones' processing: each labelled photo finished again with a phone's own look (vivid
colours, HDR tone mapping; `vision/synth/phone_look.py`), its pixels otherwise as taken.

    python3 benchmarks/phone_look.py SRC OUT [--seed S] [--look KIND]
    python3 benchmarks/ablate.py OUT --variants shipped

SRC holds photos and gt/<photo stem>.json truths in the `eval_real.py` layout (the development
photos, `ttr render` sets, the re-lit sets). Photo k's look (its place among SRC's labelled photos,
by name) is drawn from (S, k) alone (`--look`: that kind for every photo). The stored pixels are
changed and the file's EXIF kept (its orientation and its record of the flash hold for them as
before). Written: OUT/<stem>.jpg (JPEG quality 92) and OUT/gt/<stem>.json, the source's truth with
"look" (what was drawn). Seeds 9000-9999 are kept for measuring (docs/data.md). A set made of the
development photos is never committed (as the photos themselves).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from vision.synth.phone_look import LOOKS, apply_look, random_look  # noqa: E402

JPEG_QUALITY = 92


def finish_again(photo: Path, out: Path, look) -> None:
    """`photo`'s stored pixels with `look`, written to `out` with the photo's EXIF."""
    with Image.open(photo) as im:
        exif = im.info.get("exif", b"")
        bgr = np.asarray(im.convert("RGB"))[..., ::-1]
    rgb = apply_look(np.ascontiguousarray(bgr), look)[..., ::-1]
    Image.fromarray(np.ascontiguousarray(rgb)).save(out, quality=JPEG_QUALITY, exif=exif)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=8600)
    ap.add_argument("--look", choices=LOOKS, help="this look for every photo (default: drawn per photo)")
    a = ap.parse_args(argv)
    src, out = Path(a.src), Path(a.out)
    found = labelled_photos(src)
    if not found:
        print(f"{src}: no labelled photo (photos with gt/<stem>.json)", file=sys.stderr)
        return 1
    (out / "gt").mkdir(parents=True, exist_ok=True)
    for k, (photo, gt) in enumerate(found):
        look = random_look(np.random.default_rng([a.seed, k]), a.look)
        name = f"{photo.stem}.jpg"
        finish_again(photo, out / name, look)
        truth = json.loads(gt.read_text(encoding="utf-8"))
        truth.update({"photo": name, "look": look.to_dict()})
        (out / "gt" / f"{photo.stem}.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
        print(f"{name:28s} {look.kind}", flush=True)
    print(f"{len(found)} photos written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
