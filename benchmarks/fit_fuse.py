"""Fit how much a photo whose flash fired counts each evidence source, on photos under a flash.

    python3 benchmarks/fit_fuse.py --fit DIR... [--held-out-checks DIR] [--check DIR...] [--cache CACHE] [--write]

The shipped weights (ReaderSettings.fuse_flash, in models/reader_settings.json) came from the renders
the flash photos' doubt is fitted on (`ttr render --out DIR --world varied --light flash --count 30
--seed S`, seeds 7800, then 7850 and 7875 with --empty-fraction 0.15) and the development photos
re-lit (`python3 benchmarks/relight.py ../shared/real/dev relit7900 --seed 7900 --per-photo 8`: 53 of
its 200 photos under a flash, real cars and real print), each copy read by the car-or-print check
that left its session out; before that doubt:
    python3 benchmarks/fit_fuse.py --fit F7800 F7850 F7875 relit7900 --held-out-checks CHECKS --write
    (then benchmarks/fit_doubt.py --flash ..., as its docstring says)

Each photo whose flash fired is read once with every source counted alike (weight 1), and per track
each source's log-likelihood of every owner (its spaces' sum) is kept with the truth
(CACHE/<folder name>/<stem>.npz). The fit: a multinomial logistic regression of the true owner on
the sources' sums, P(owner) proportional to exp(sum_k w_k S_k(owner) / temperature), the weights w
at least 0 (Newton's method: the loss is convex in w). The rules of the decision are left out: the
weights say which source to believe against which. Only their ratios are written, scaled to the
usual photos' sum, so that a track's margins keep the range the doubt is calibrated on; the flash
photos' doubt is fitted after these weights. Printed: the weights fitted on all of --fit, then
each --fit folder left out in turn and every --check folder, by the log loss and the tracks whose
likeliest owner is the truth, with every source counted alike and with the fitted weights.

No development photo was taken with a flash: they are not read here as taken, and their copies under
a flash are fitted on only with the checks that left their sessions out.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ablate import held_out_checks, reader_for  # noqa: E402
from fit_doubt import cache_dir, said_command, truth_per_track  # noqa: E402
from labelled import labelled_photos, missing_folder  # noqa: E402

from scoring.errors import TtrError  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.reading import SPACE_CLASSES  # noqa: E402
from vision.settings import FuseSettings, ReaderSettings, write_fitted  # noqa: E402

# FuseSettings' fields, and the names `Reader` gives their sources.
SOURCE_NAMES = {"colour": "colour", "net": "net", "occupancy": "occupancy", "car_colour": "car colour"}
SOURCES = tuple(SOURCE_NAMES)


def read_one(reader: Reader, photo: Path, truth: dict) -> dict | None:
    """Per track: each source's sum over its spaces (100, K, 6) and the true owner; None where the
    flash did not fire (or the board was refused)."""
    try:
        trace = reader.trace_path(str(photo))
    except TtrError as e:
        print(f"{photo.name}: FAILED {e}", file=sys.stderr)
        return None
    if not trace.view.flash_fired:
        return None
    ev = trace.evidence
    per_space = np.stack([ev.sources.get(SOURCE_NAMES[k], np.zeros_like(ev.loglik)) for k in SOURCES], axis=1)
    sums = np.zeros((len(reader.board.tracks),) + per_space.shape[1:])
    np.add.at(sums, reader.track_ids, per_space)
    owners_read = [SPACE_CLASSES.index(t.owner or "empty") for t in trace.tracks]
    return {"sums": sums, "truth": truth_per_track(truth, reader, owners_read)}


def collect(folder: Path, cache: Path, reader: Reader, checks: list = ()) -> tuple[np.ndarray, np.ndarray]:
    """(X (T, K, 6), y (T,)) over the tracks of `folder`'s photos whose flash fired, each photo read
    once and kept under `cache`; with `checks` (`ablate.held_out_checks`), a copy of a development
    photo read with the car-or-print check that left it out."""
    cache.mkdir(parents=True, exist_ok=True)
    xs, ys, readers = [], [], {}
    for photo, gt in labelled_photos(folder):
        target, skipped = cache / f"{photo.stem}.npz", cache / f"{photo.stem}.skipped"
        if skipped.exists():
            continue
        if not target.exists():
            d = read_one(reader_for(reader, photo.name, checks, readers), photo, json.loads(gt.read_text(encoding="utf-8")))
            if d is None:
                skipped.write_text("no flash, or refused", encoding="utf-8")
                continue
            np.savez_compressed(target, **d)
        d = np.load(target)
        keep = d["truth"] >= 0
        xs.append(d["sums"][keep])
        ys.append(d["truth"][keep])
    if not xs:
        return np.zeros((0, len(SOURCES), 6)), np.zeros(0, int)
    return np.concatenate(xs), np.concatenate(ys).astype(int)


def log_loss(w: np.ndarray, x: np.ndarray, y: np.ndarray, temperature: float) -> float:
    """The summed -log P(true owner) with weights `w` (per source) at the decision's temperature."""
    z = np.einsum("k,nkc->nc", w, x) / temperature
    z -= z.max(axis=1, keepdims=True)
    return float(-(z[np.arange(len(y)), y] - np.log(np.exp(z).sum(axis=1))).sum())


def right(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> int:
    """Tracks whose likeliest owner under weights `w` is the truth."""
    return int((np.einsum("k,nkc->nc", w, x).argmax(axis=1) == y).sum())


def fit_weights(x: np.ndarray, y: np.ndarray, temperature: float, steps: int = 100) -> np.ndarray:
    """The weights (K,), at least 0, that minimise `log_loss`: Newton's method, each step halved
    until the loss falls, a weight pushed below 0 held at 0."""
    k = x.shape[1]
    w = np.ones(k)
    xs = x / temperature
    loss = log_loss(w, x, y, temperature)
    for _ in range(steps):
        z = np.einsum("k,nkc->nc", w, xs)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        seen = np.einsum("nkc,nc->nk", xs, p)  # each source's expected sum under the model
        grad = (seen - xs[np.arange(len(y)), :, y]).sum(axis=0)
        hess = np.einsum("nkc,nc,njc->kj", xs, p, xs) - np.einsum("nk,nj->kj", seen, seen)
        step = np.linalg.solve(hess + 1e-9 * np.eye(k), grad)
        t = 1.0
        while t > 1e-6:
            trial = np.maximum(w - t * step, 0.0)
            trial_loss = log_loss(trial, x, y, temperature)
            if trial_loss < loss:
                break
            t /= 2
        if t <= 1e-6 or loss - trial_loss < 1e-9 * max(1.0, abs(loss)):
            w, loss = (trial, trial_loss) if trial_loss < loss else (w, loss)
            break
        w, loss = trial, trial_loss
    return w


def as_shipped(w: np.ndarray, usual: FuseSettings) -> dict[str, float]:
    """The fitted weights' ratios, scaled to the usual photos' sum, rounded to hundredths."""
    total = sum(getattr(usual, k) for k in SOURCES)
    scaled = w * total / max(w.sum(), 1e-12)
    return {k: round(float(v), 2) for k, v in zip(SOURCES, scaled)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", required=True, metavar="DIR",
                    help="photos to fit on (their photos whose flash fired): renders under a flash, re-lit copies of "
                         "the development photos")
    ap.add_argument("--check", nargs="*", default=[], metavar="DIR", help="photos to check the fit on")
    ap.add_argument("--held-out-checks", metavar="DIR",
                    help="car-or-print checks each trained leaving some real photos out (as benchmarks/ablate.py "
                         "takes them): copies of those photos are read with the check that left them out")
    ap.add_argument("--cache", default="/tmp/ttr_fuse_cache", help="where each photo's per-track evidence is kept")
    ap.add_argument("--write", action="store_true",
                    help="write the fitted weights (fuse_flash.*) into models/reader_settings.json with this command "
                         "and its data")
    args = ap.parse_args(argv)
    if (missing := missing_folder(args.fit + args.check)) is not None:
        ap.error(f"{missing}: no such folder")
    shipped = ReaderSettings()
    # Read with every source counted alike: what each says, not what the shipped weights let it say.
    reader = Reader(settings=replace(shipped, fuse_flash=shipped.fuse))
    temperature = shipped.decide.temperature
    checks = held_out_checks(Path(args.held_out_checks)) if args.held_out_checks else []
    data = {d: collect(Path(d), cache_dir(Path(args.cache), Path(d), checks), reader, checks)
            for d in dict.fromkeys(args.fit + args.check)}
    x = np.concatenate([data[d][0] for d in args.fit])
    y = np.concatenate([data[d][1] for d in args.fit])
    if not len(y):
        print("no photo whose flash fired in --fit", file=sys.stderr)
        return 2
    alike = np.array([getattr(shipped.fuse, k) for k in SOURCES])
    w = fit_weights(x, y, temperature)
    weights = as_shipped(w, shipped.fuse)
    print(f"fitted on {len(args.fit)} folders, {len(y)} tracks: " + " ".join(f"{k}={v}" for k, v in weights.items())
          + "  (shipped: " + " ".join(f"{k}={getattr(shipped.fuse_flash, k)}" for k in SOURCES) + ")")

    def line(name, w_fit, xs, ys):
        print(f"  {name}: {len(ys)} tracks, log loss {log_loss(alike, xs, ys, temperature):.1f} alike -> "
              f"{log_loss(w_fit, xs, ys, temperature):.1f} fitted, likeliest owner right {right(alike, xs, ys)} -> "
              f"{right(w_fit, xs, ys)}")

    for d in args.fit if len(args.fit) > 1 else []:
        rest = [e for e in args.fit if e != d]
        w_rest = fit_weights(np.concatenate([data[e][0] for e in rest]), np.concatenate([data[e][1] for e in rest]),
                             temperature)
        ratios = as_shipped(w_rest, shipped.fuse)
        print(f"left out {d} (fitted " + " ".join(f"{k}={v}" for k, v in ratios.items()) + "):")
        line(Path(d).name, w_rest, *data[d])
    for d in args.check:
        if len(data[d][1]):
            print("check:")
            line(Path(d).name, w, *data[d])
    if args.write:
        folders = ", ".join(Path(d).name for d in args.fit)
        photos = sum(len(list(cache_dir(Path(args.cache), Path(d), checks).glob("*.npz"))) for d in args.fit)
        write_fitted({f"fuse_flash.{k}": v for k, v in weights.items()},
                     said_command(argv if argv is not None else sys.argv[1:], "benchmarks/fit_fuse.py"),
                     f"{photos} photos of {folders} whose flash fired, {len(y)} tracks, read with every source "
                     f"counted alike")
        print("written to models/reader_settings.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
