"""Speed and memory of `ttr detect` on 12-megapixel photos.

    python3 benchmarks/bench_detect.py [PHOTO ...] [--repeat 3]

Reports:
- batch: median seconds per photo with the reader (template, ONNX session) loaded once;
- cold start: wall seconds of one `ttr detect --json PHOTO` process, start to exit;
- peak memory: the largest resident set of that process (and of a batch process over all photos);
- with --same-board: the photos read together as one board (`vision.several.read_same_board`)
  against the sum of reading each alone (issue 30: each added photo costs at most its own reading).

Without photos it renders three 4032x3024 boards with `vision.synth` (a fixed seed) to time.
The bar (issue 4): batch median <= 0.5 s, cold start <= 2 s, peak memory <= 1 GB.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def rendered_photos(out_dir: Path, n: int = 3) -> list[str]:
    import numpy as np

    from scoring.board import load_board
    from vision.synth.positions import random_position
    from vision.synth.render import render_photo

    paths = []
    for i in range(n):
        rng = np.random.default_rng(500 + i)
        photo = render_photo(rng, random_position(rng, load_board()), (4032, 3024))
        p = out_dir / f"render_{i}.jpg"
        p.write_bytes(photo.jpeg)
        paths.append(str(p))
    return paths


# `ttr detect` run so that it reports its own peak memory at exit: the high-water mark of its own
# memory map (VmHWM). The children's ru_maxrss is not that: a child started by vfork counts the
# parent's resident set, which here holds the reader and the rendered photos.
PEAK_WRAPPER = ("import atexit, re, runpy, sys\n"
                "def peak():\n"
                "    m = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())\n"
                "    sys.stderr.write(f'\\nPEAK_KB {m.group(1) if m else -1}\\n')\n"
                "atexit.register(peak)\n"
                "sys.argv = ['ttr'] + sys.argv[1:]\n"
                "runpy.run_module('app.cli', run_name='__main__')\n")


def run_detect(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MB; -1 where it cannot say) of one `ttr detect`
    process on `args`, start to exit (its output is printed where it fails)."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, "detect", *args], capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if r.returncode != 0:
        print(r.stdout[-500:], r.stderr[-500:])
    found = [line.split()[1] for line in r.stderr.splitlines() if line.startswith("PEAK_KB ")]
    return seconds, (int(found[-1]) / 1024.0 if found and int(found[-1]) >= 0 else -1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("photos", nargs="*")
    ap.add_argument("--repeat", type=int, default=3, help="passes over the photos in the batch timing")
    ap.add_argument("--same-board", action="store_true", help="also time the photos read together as one board")
    a = ap.parse_args()
    photos = a.photos or rendered_photos(Path(tempfile.mkdtemp(prefix="ttr_bench_")))

    # Batch, in this process: load once, then time each photo.
    from vision.read import Reader

    t0 = time.perf_counter()
    reader = Reader()
    load_s = time.perf_counter() - t0
    reader.read_path(photos[0])  # warm-up (first-call costs of OpenCV/onnxruntime)
    times = []
    for _ in range(a.repeat):
        for p in photos:
            t = time.perf_counter()
            reader.read_path(p)
            times.append(time.perf_counter() - t)
    batch = statistics.median(times)
    ratios = []
    if a.same_board:
        from vision.several import read_same_board

        # Each pass reads every photo alone, then all together, so that both are timed in the same
        # seconds: on a shared machine a photo's time moves by a third between passes.
        for _ in range(max(a.repeat, 5)):
            alone = 0.0
            for p in photos:
                t = time.perf_counter()
                reader.read_path(p)
                alone += time.perf_counter() - t
            t = time.perf_counter()
            read_same_board(reader, photos)
            ratios.append((time.perf_counter() - t, alone))

    # Cold start: a fresh `ttr detect` process on one photo, three times; then one on all photos.
    colds, cold_peaks = zip(*(run_detect(["--json", photos[0]]) for _ in range(3)))
    cold_rss = max(cold_peaks)
    batch_rss = run_detect(["--json", *photos])[1]

    print(f"photos: {len(photos)} ({', '.join(Path(p).name for p in photos[:4])}{' ...' if len(photos) > 4 else ''})")
    print(f"reader load: {load_s:.2f} s")
    print(f"batch: median {batch:.3f} s per photo (min {min(times):.3f}, max {max(times):.3f}, n={len(times)})")
    print(f"cold start (ttr detect, one photo): median {statistics.median(colds):.2f} s (runs {', '.join(f'{c:.2f}' for c in colds)})")
    print(f"peak memory: one photo {cold_rss:.0f} MB, all photos in one process {batch_rss:.0f} MB")
    if ratios:
        r = sorted(t / alone for t, alone in ratios)
        together, alone = statistics.median(t for t, _ in ratios), statistics.median(al for _, al in ratios)
        print(f"same board: {len(photos)} photos read together in median {together:.3f} s, each alone "
              f"{alone:.3f} s in all; together / alone in the same pass: median {statistics.median(r):.3f} "
              f"(min {r[0]:.3f}, max {r[-1]:.3f}, n={len(r)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
