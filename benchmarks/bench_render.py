"""Rendering speed: seconds per synthetic photo (`ttr render`'s work, files not written).

    python3 benchmarks/bench_render.py [--count 30] [--size 1600x1200]

Prints the mean and median over `count` photos once every print run's board art is cached
(the steady state of a long `ttr render`), and the cost of filling that cache.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from scoring.board import load_board
from vision.synth.board_art import N_LOOKS, board_image, register_model
from vision.synth.positions import random_position
from vision.synth.render import PX_PER_MM_STEPS, default_model, render_photo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=30)
    ap.add_argument("--size", default="1600x1200")
    a = ap.parse_args()
    size = tuple(int(v) for v in a.size.split("x"))
    board, model = load_board(), default_model()
    key = register_model(model)
    t0 = time.perf_counter()
    for look in range(N_LOOKS):
        for ppm in PX_PER_MM_STEPS[:3]:
            board_image(look, ppm, key)
    fill = time.perf_counter() - t0
    times, cpu = [], []
    for i in range(a.count):
        rng = np.random.default_rng([12345, i])
        t, c = time.perf_counter(), time.process_time()
        render_photo(rng, random_position(rng, board), size)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    # CPU time too: on a shared machine the wall time also counts other people's work.
    print(f"{a.count} photos at {size[0]}x{size[1]}: wall mean {statistics.mean(times):.3f} s, "
          f"median {statistics.median(times):.3f} s, max {max(times):.3f} s; "
          f"CPU mean {statistics.mean(cpu):.3f} s per photo "
          f"(board art cache: {N_LOOKS} looks x 3 scales filled once in {fill:.1f} s)")


if __name__ == "__main__":
    main()
