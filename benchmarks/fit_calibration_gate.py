"""Fit `vision.settings.CalibrationGate.max_false_change` on rendered boards (no real photo is used).

    python3 benchmarks/fit_calibration_gate.py [--boards 10] [--played 3] [--seed 7100] [--rows FILE]

For each board: one print run (the renderer's looks, with their ink drift), photographed EMPTY twice
in one light (light A, two cameras) and calibrated from those two photos as `ttr calibrate` does;
then photographed played, each game three times: in light A from another camera ("same"), in
another of the renderer's lights ("other"), and in another light with a veiling glare mixed in
("veil": a share of 15-35 % of white over the whole photo, as a glossy board under a broad lamp
shows; the colour change that paper normalisation cannot undo), and once EMPTY in another light with
and without a veil. Each photo is read without the calibration and with it forced on (the gate off),
and the gate's statistic is kept: the share of the spaces read surely empty without the
calibration on which the view sees a change.

The fitted threshold is the one that maximises, over all photos whose share is at most it, the gain
of reading with the calibration (tracks right, less false claims on empty boards); ties go to the
lower threshold. Prints one row per photo, the gain curve and a FIT line.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scoring.board import load_board
from scoring.errors import TtrError
from vision.calibrate import fit_from_flattened
from vision.read import Reader
from vision.settings import CalibrationGate, ReaderSettings, write_fitted
from vision.synth.camera import jpeg, photograph_scene, random_camera
from vision.synth.positions import random_position
from vision.synth.render import _light, _printed_board, default_model
from vision.synth.trains import draw_cars, place_cars

SIZE = (2016, 1512)
PPM = 2.0
VEIL_LEVEL = 225.0  # the veil's white in the photo (a bright paper's level)


def shoot(printed: np.ndarray, claims: dict, rng: np.random.Generator, light_seed, veil: float = 0.0):
    """One photo of the print `printed` with `claims` on it, in the light drawn from `light_seed`;
    returns the photo as the camera gives it (JPEG)."""
    model = default_model()
    cam = random_camera(rng, SIZE, tilt_deg=float(rng.uniform(0, 25)))
    flat = printed.copy()
    if claims:
        cars = place_cars(rng, model, claims)
        flat = draw_cars(flat, PPM, cars, cam.position_mm, _light(rng), rng, float(rng.uniform(0.3, 0.6)))
    img, _ = photograph_scene(np.random.default_rng(light_seed), flat, PPM, cam, "usual")
    if veil:
        img = np.clip(img.astype(np.float32) * (1 - veil) + veil * VEIL_LEVEL, 0, 255).astype(np.uint8)
    return cv2.imdecode(np.frombuffer(jpeg(rng, img, 90), np.uint8), cv2.IMREAD_COLOR)


def score(tracks, owner: dict) -> tuple[int, int]:
    """(tracks right, false claims on an empty board)."""
    right = sum(1 for t in tracks if t.owner == owner.get(t.track_id))
    false = sum(1 for t in tracks if t.owner) if not owner else 0
    return right, false


def rows_for_board(seed: int, n_played: int, plain: Reader, fitter: Reader) -> list[dict]:
    board = load_board()
    printed = _printed_board(np.random.default_rng([seed, 0]), default_model(), PPM)
    light_a = [seed, 100]
    cal_flats = [fitter.view(shoot(printed, {}, np.random.default_rng([seed, 2, j]), light_a)).flattened for j in range(2)]
    cal, _ = fit_from_flattened(cal_flats, ["empty_a0", "empty_a1"], fitter)
    forced = Reader(cal, settings=replace(ReaderSettings(), calibration=CalibrationGate(max_false_change=1.0,
                                                                               min_judged_spaces=0)))
    jobs = []
    for j in range(n_played):
        claims = random_position(np.random.default_rng([seed, 1, j]), board)
        veil = float(np.random.default_rng([seed, 3, j]).uniform(0.15, 0.35))
        jobs += [(f"same{j}", claims, light_a, 0.0), (f"other{j}", claims, [seed, 200 + j], 0.0),
                 (f"veil{j}", claims, [seed, 300 + j], veil)]
    jobs += [("empty_other", {}, [seed, 401], 0.0), ("empty_veil", {}, [seed, 400], 0.25)]
    rows = []
    for k, (kind, claims, light, veil) in enumerate(jobs):
        try:
            view = plain.view(shoot(printed, claims, np.random.default_rng([seed, 4, k]), light, veil))
        except TtrError as e:  # a board the locator refuses: nothing to compare
            print(f"board {seed} {kind}: not read ({e})", flush=True)
            continue
        owner = {tid: p for p, ids in claims.items() for tid in ids}
        base = score(plain.read_view(view).tracks, owner)
        trace = forced.trace_view(view)
        with_cal = score(trace.tracks, owner)
        m = trace.calibration
        row = {"board": seed, "photo": kind, "aligned": m.verdict != "not aligned", "judged": m.judged,
               "false_change": m.false_change, "share": round(m.false_share, 4),
               "base": base, "calibrated": with_cal,
               "gain": (with_cal[0] - with_cal[1]) - (base[0] - base[1])}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def fit(rows: list[dict], min_judged: int) -> tuple[float, list[tuple[float, int, int, int]]]:
    """(threshold, curve of (threshold, photos passed, gain, photos worse))."""
    ok = [r for r in rows if r["aligned"] and r["judged"] >= min_judged]
    curve = []
    for t in np.round(np.arange(0.0, 0.51, 0.01), 2):
        passed = [r for r in ok if r["share"] <= t]
        curve.append((float(t), len(passed), sum(r["gain"] for r in passed), sum(r["gain"] < 0 for r in passed)))
    best = max(curve, key=lambda c: (c[2], -c[0]))
    return best[0], curve


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", type=int, default=10)
    ap.add_argument("--played", type=int, default=3, help="games per board (each photographed three ways)")
    ap.add_argument("--seed", type=int, default=7100, help="first board's seed")
    ap.add_argument("--rows", type=Path, help="write (or, if it exists, read) the per-photo rows here")
    ap.add_argument("--write", action="store_true",
                    help="write the fitted threshold into models/reader_settings.json with this command and its data")
    args = ap.parse_args()
    if args.rows and args.rows.exists():
        rows = [json.loads(line) for line in args.rows.read_text().splitlines() if line.strip()]
    else:
        plain, fitter = Reader(None), Reader(None, use_classifier=False)
        rows = []
        for b in range(args.boards):
            rows += rows_for_board(args.seed + b, args.played, plain, fitter)
        if args.rows:
            args.rows.write_text("".join(json.dumps(r) + "\n" for r in rows))
    min_judged = CalibrationGate().min_judged_spaces
    t, curve = fit(rows, min_judged)
    print("threshold  photos_passed  gain  photos_worse")
    for c in curve:
        print(f"{c[0]:9.2f}  {c[1]:13d}  {c[2]:4d}  {c[3]:12d}")
    by_kind: dict[str, list[float]] = {}
    for r in rows:
        by_kind.setdefault(r["photo"].rstrip("0123456789"), []).append(r["share"])
    print("share by kind: " + ", ".join(f"{k} median {np.median(v):.3f} (n={len(v)})" for k, v in sorted(by_kind.items())))
    print(f"FIT max_false_change={t:.2f} (photos={len(rows)}, min_judged_spaces={min_judged})")
    if args.write:
        write_fitted({"calibration.max_false_change": round(float(t), 2)},
                     by="benchmarks/fit_calibration_gate.py " + " ".join(sys.argv[1:]),
                     data=f"{len(rows)} rendered photos of {args.boards} boards from seed {args.seed}; none real")
    return 0


if __name__ == "__main__":
    sys.exit(main())
