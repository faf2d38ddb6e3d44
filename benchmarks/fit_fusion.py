"""Fit the fusion's weights on labelled real photos, leaving one board state out at a time.

    python3 benchmarks/fit_fusion.py [DIR] [--cache CACHE] [--confirm]
    python3 benchmarks/fit_fusion.py detect [--w-colour W] [--trust T] [--floor F] [--sigma S] PHOTO...

DIR holds photos and gt/<photo stem>.json truths with a "board_state" each (default
../shared/real/dev relative to the repository: states A, B, D and empty). The fused per-space
log-likelihood (vision.read.Reader._fused) is

    w_colour * ColourModel(sigmas * S).loglik + w_classifier * SpaceClassifier.loglik(p, floor, trust)

with w_classifier = 1 (only the ratio matters to which hypothesis wins; the decision's temperature
stays). Every photo is read once with the shipped ReaderConfig, keeping what the colour model was
given and the classifier's probabilities (CACHE/<stem>.npz); each point of the grid then fuses them
again and reruns the decision (vision.decide.decide_choice, the rules and priors included). The
classifier's probabilities depend a little on the fused evidence (its second looks and the lanes
judged alone are chosen by it), so the cached ones are those of the shipped weights: --confirm
reads each held-out state again with its fold's parameters, for real.

Two criteria are printed, each choosing its own parameters. "clipped", fixed first: the mean over
the fitting photos' tracks of log P(true owner), P the softmax of the decision's tempered track
scores (after the unseen-player prior), each track's term held to >= -7 (P = 0.001) so that one
hopeless track cannot steer the fit. It rewards sheer confidence: the clip makes a wrong track
cost at most 7 while every right one gains from sharper evidence, so on the dev photos it chose,
with state D held out, parameters that read 2 tracks of its own fitting photos wrong that the
defaults read right. "tempered", the one to use: the same log P unclipped (a proper score), at
the best of a few scales TAUS on the track scores, so that it judges how the fused evidence ranks
the hypotheses and not how sure it sounds (the decision itself hangs on the scale only through
its priors; the confidence shown to a player is calibrated separately, benchmarks/fit_doubt.py).
A one-colour double's two lanes take whichever pairing of the truth suits them. Tracks right
(the gray doubles compared as pairs, as ../shared/eval/eval_real.py does) and false claims on empty
boards are printed beside it.

Folds: each board state is held out in turn (a state's small, rectified and full-size copies are
one scene and go together); the parameters are chosen on the other states' photos, and the
held-out state is scored with them, beside the shipped defaults on the same photos. Then the
parameters chosen on all the photos.

The grid takes ~6 minutes on 2 cores (its table is kept in CACHE), --confirm ~1 more.

`detect` prints `ttr detect --json` lines read with the given parameters (for eval_real.py --cmd).
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import pickle
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import labelled_photos  # noqa: E402 (this folder: the scripts' own helper)

from scoring.errors import TtrError  # noqa: E402
from vision.classify import ColourModel, ColourModelConfig  # noqa: E402
from vision.decide import decide_choice  # noqa: E402
from vision.read import Reader, ReaderConfig  # noqa: E402
from vision.reading import SPACE_CLASSES  # noqa: E402

STATES = ("A", "B", "D", "empty")
LOGP_FLOOR = -7.0
CRITERIA = {
    "clipped": "mean log P(truth) per track, each held to >= -7, at the decision's own temperature",
    "tempered": "mean log P(truth) per track, unclipped, at the best of TAUS x the track scores",
}
TAUS = (0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0)  # scales on the track scores for the "tempered" criterion

# The grid: w_colour (w_classifier = 1), classifier_colour_trust, classifier_floor, sigma scale.
GRID = {
    "w_colour": (0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8),
    "trust": (0.25, 0.5, 0.75, 1.0),  # 1: the net's colour answer as it says it (no more than that)
    "floor": (0.002, 0.005, 0.02, 0.05),
    "sigma": (0.8, 1.0, 1.25, 1.5, 2.0),
}
_SHIPPED = ReaderConfig()
# The shipped parameters (the sigma scale is on ColourModelConfig's sigmas), always in the grid.
DEFAULT = (_SHIPPED.w_colour, _SHIPPED.classifier_colour_trust, _SHIPPED.classifier_floor, _SHIPPED.colour_sigma_scale)


def scaled_colour(sigma: float) -> ColourModel:
    return ColourModel(ColourModelConfig().scaled(sigma))


def make_reader(w_colour: float, trust: float, floor: float, sigma: float) -> Reader:
    return Reader(config=replace(ReaderConfig(), w_colour=w_colour, classifier_colour_trust=trust,
                                 classifier_floor=floor, colour_sigma_scale=sigma))


# -- reading once, keeping the fusion's inputs --------------------------------------------------
def read_and_keep(reader: Reader, photo: Path) -> dict:
    """Read `photo` as the reader does, keeping the colour model's inputs and the net's answer."""
    kept = {}
    colour_loglik = reader.colour.loglik

    def spy(lab, printed, track_ids, reference=None, lab_car=None, car_isolated=None):
        if reference is not None or car_isolated is not None:
            raise RuntimeError("fit_fusion reads without a calibration")
        kept["lab"] = np.asarray(lab, float)
        kept["lab_car"] = np.asarray(lab if lab_car is None else lab_car, float)
        out = colour_loglik(lab, printed, track_ids, reference, lab_car, car_isolated)
        kept["colour_ll"] = out
        return out

    fused = reader._fused

    def spy_fused(*a, **k):
        ev = fused(*a, **k)
        kept["cprobs"] = np.asarray(ev.classifier_probs, float)
        return ev

    reader.colour.loglik = spy
    reader._fused = spy_fused
    try:
        reading = reader.read_path(str(photo))
    finally:
        del reader.colour.loglik
        del reader._fused
    kept["owners_read"] = np.array([SPACE_CLASSES.index(t.owner or "empty") for t in reading.tracks])
    return kept


def truth_groups(truth: dict, reader: Reader) -> list[tuple[list[int], list[int]]]:
    """[(track ids, truth owners as SPACE_CLASSES indices)] per group of tracks with the same cities
    and printed colour (a one-colour double is one group of two)."""
    want = defaultdict(list)
    for t in truth["tracks"]:
        want[(frozenset((t["a"], t["b"])), t["color"])].append(SPACE_CLASSES.index(t["owner"] or "empty"))
    ids = defaultdict(list)
    for t in reader.board.tracks:
        ids[(frozenset((t.a, t.b)), t.color)].append(t.id)
    return [(ids[k], want[k]) for k in ids]


def collect(folder: Path, cache: Path) -> list[dict]:
    cache.mkdir(parents=True, exist_ok=True)
    reader = None
    photos = []
    for photo, gt in labelled_photos(folder):
        target = cache / f"{photo.stem}.npz"
        if not target.exists():
            reader = reader or Reader()
            d = read_and_keep(reader, photo)
            np.savez_compressed(target, **d)
            print(f"{photo.name}: read and cached", file=sys.stderr)
        d = dict(np.load(target))
        truth = json.loads(gt.read_text(encoding="utf-8"))
        d.update(photo=photo, state=truth["board_state"], truth=truth)
        photos.append(d)
    return photos


# -- the grid --------------------------------------------------------------------------------------
class Scorer:
    def __init__(self, photos: list[dict]):
        self.reader = Reader(config=ReaderConfig())
        self.board = self.reader.board
        self.tid = self.reader.track_ids
        self.printed = self.reader.printed
        self.photos = photos
        for d in photos:
            d["groups"] = truth_groups(d["truth"], self.reader)
        self._colour = {}

    def colour_ll(self, i: int, sigma: float) -> np.ndarray:
        key = (i, sigma)
        if key not in self._colour:
            d = self.photos[i]
            self._colour[key] = (d["colour_ll"] if sigma == DEFAULT[3] else
                                 scaled_colour(sigma).loglik(d["lab"], self.printed, self.tid, None, d["lab_car"]))
        return self._colour[key]

    def score(self, i: int, params) -> dict:
        """One photo under (w_colour, trust, floor, sigma): the criterion's sum, tracks right of all,
        claims (tracks read owned), and the decision."""
        w, trust, floor, sigma = params
        d = self.photos[i]
        ll = w * self.colour_ll(i, sigma) + self.reader.classifier.loglik(d["cprobs"], floor, trust)
        per_track = [ll[self.tid == t.id] for t in self.board.tracks]
        scores, choice = decide_choice(per_track, self.board, self.reader.config.decide)
        logp = scores - np.logaddexp.reduce(scores, axis=1, keepdims=True)
        crit = 0.0
        logp_tau = [s - np.logaddexp.reduce(s, axis=1, keepdims=True) for s in (scores * tau for tau in TAUS)]
        nll_tau = np.zeros(len(TAUS))
        for ids, owners in d["groups"]:
            perms = set(itertools.permutations(owners))
            crit += max(sum(max(logp[t, o], LOGP_FLOOR) for t, o in zip(ids, perm)) for perm in perms)
            nll_tau += [max(sum(lp[t, o] for t, o in zip(ids, perm)) for perm in perms) for lp in logp_tau]
        right, total = tracks_right(choice, d["groups"])
        return {"crit": crit, "nll_tau": nll_tau, "right": right, "total": total,
                "claims": int(np.count_nonzero(choice)), "choice": choice}


def tracks_right(choice: np.ndarray, groups) -> tuple[int, int]:
    """(tracks read right, tracks) of a photo: `choice` the owner read per track, `groups` its truth
    as (track ids, owners) per group of like-printed lanes, compared as pairs (eval_real.py's way)."""
    right = total = 0
    for ids, owners in groups:
        read = [int(choice[t]) for t in ids]
        for o in owners:
            if o in read:
                read.remove(o)
                right += 1
        total += len(owners)
    return right, total


def summarise(rows: list[dict], photos: list[dict]) -> dict:
    played = [r for r, d in zip(rows, photos) if d["state"] != "empty"]
    empty = [r for r, d in zip(rows, photos) if d["state"] == "empty"]
    n_tracks = sum(r["total"] for r in rows)
    tau = np.sum([r["nll_tau"] for r in rows], axis=0) / max(n_tracks, 1) if "nll_tau" in rows[0] else None
    return {"crit": sum(r["crit"] for r in rows) / max(n_tracks, 1),
            "tcrit": float(tau.max()) if tau is not None else float("nan"),
            "tau": TAUS[int(tau.argmax())] if tau is not None else float("nan"),
            "right": sum(r["right"] for r in played), "total": sum(r["total"] for r in played),
            "exact": sum(r["right"] == r["total"] for r in played), "played": len(played),
            "false": sum(r["claims"] for r in empty), "empty": len(empty)}


def line(s: dict) -> str:
    return (f"crit={s['crit']:.4f} tempered={s['tcrit']:.4f} (x{s['tau']}) tracks={s['right']}/{s['total']} exact={s['exact']}/{s['played']} "
            f"empty_false_claims={s['false']} (on {s['empty']} empty photos)")


def fmt(p) -> str:
    return f"w_colour={p[0]} trust={p[1]} floor={p[2]} sigma={p[3]}"


def confirm(params, photos: list[dict]) -> dict:
    """Read `photos` again for real with `params` (not from the cache) and score them."""
    reader = make_reader(*params)
    rows = []
    for d in photos:
        reading = reader.read_path(str(d["photo"]))
        choice = np.array([SPACE_CLASSES.index(t.owner or "empty") for t in reading.tracks])
        right, total = tracks_right(choice, d["groups"])
        rows.append({"crit": float("nan"), "right": right, "total": total, "claims": int(np.count_nonzero(choice))})
    return summarise(rows, photos)


def fit_main(args) -> int:
    # The cache holds readings made with the shipped parameters: a change to them reads again.
    tag = hashlib.sha1(repr((_SHIPPED, ColourModelConfig(), Path(args.dir).resolve())).encode()).hexdigest()[:10]
    cache = Path(args.cache) / tag
    photos = collect(Path(args.dir), cache)
    scorer = Scorer(photos)
    grid = list(itertools.product(*GRID.values()))
    grid += [DEFAULT] if DEFAULT not in grid else []
    # Sanity: at the shipped parameters the cached evidence gives the decision the reader gave.
    for i, d in enumerate(photos):
        if not np.array_equal(scorer.score(i, DEFAULT)["choice"], d["owners_read"]):
            print(f"{d['photo'].name}: the decision from the cache differs from the reading", file=sys.stderr)
    print(f"{len(photos)} photos, grid of {len(grid)} points: " + ", ".join(f"{k} {v}" for k, v in GRID.items()))
    table_file = cache / "table.pkl"
    table = pickle.loads(table_file.read_bytes()) if table_file.exists() else {}
    if set(table) != set(grid):
        table = {p: [scorer.score(i, p) for i in range(len(photos))] for p in grid}
        table_file.write_bytes(pickle.dumps(table))
    everything = list(range(len(photos)))

    def summary(p, sel):
        return summarise([table[p][i] for i in sel], [photos[i] for i in sel])

    for criterion in CRITERIA:
        key = "crit" if criterion == "clipped" else "tcrit"
        print(f"\n=== criterion: {criterion} ({CRITERIA[criterion]})")

        def best(sel: list[int]):
            return max(grid, key=lambda p: summary(p, sel)[key])

        folds = []
        for state in STATES:
            held = [i for i, d in enumerate(photos) if d["state"] == state]
            fit_on = [i for i, d in enumerate(photos) if d["state"] != state]
            p = best(fit_on)
            print(f"\nfold {state} held out ({len(held)} photos; fit on {len(fit_on)}): chosen {fmt(p)}")
            print(f"  fit photos:  chosen  {line(summary(p, fit_on))}")
            print(f"  fit photos:  default {line(summary(DEFAULT, fit_on))}")
            print(f"  held out (cached evidence): chosen  {line(summary(p, held))}")
            print(f"  held out (cached evidence): default {line(summary(DEFAULT, held))}")
            print("  held out, tracks right per photo (chosen/default): " + ", ".join(
                f"{photos[i]['photo'].stem} {table[p][i]['right']}/{table[DEFAULT][i]['right']}" for i in held))
            folds.append((state, held, p))
        p_all = best(everything)
        print(f"\nall photos: chosen {fmt(p_all)}")
        print(f"  chosen  {line(summary(p_all, everything))}")
        print(f"  default {line(summary(DEFAULT, everything))}")
        # The neighbourhood of the all-data choice along each axis (how sharp the optimum is).
        for k, (name, values) in enumerate(GRID.items()):
            cells = []
            for v in values:
                s = summary(tuple(v if j == k else p_all[j] for j in range(4)), everything)
                cells.append(f"{v}: {s[key]:.4f} {s['right']}/{s['total']} fc={s['false']}")
            print(f"  along {name}: " + "; ".join(cells))
        if args.confirm:
            print("\nconfirmed by reading again (held-out photos, each fold's parameters; not from the cache):")
            for state, held, p in folds:
                print(f"  fold {state}: {fmt(p)}: {line(confirm(p, [photos[i] for i in held]))}")
    return 0


def detect_main(args) -> int:
    reader = make_reader(args.w_colour, args.trust, args.floor, args.sigma)
    failed = 0
    for photo in args.photos:
        try:
            print(json.dumps(reader.read_path(photo).to_dict(), ensure_ascii=False), flush=True)
        except TtrError as e:
            failed += 1
            print(json.dumps({"image": photo, "error": str(e)}), flush=True)
    return 1 if failed else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["detect"]:
        ap = argparse.ArgumentParser(description="ttr detect --json with other fusion parameters")
        ap.add_argument("photos", nargs="+")
        d = ReaderConfig()
        ap.add_argument("--w-colour", type=float, default=d.w_colour)
        ap.add_argument("--trust", type=float, default=d.classifier_colour_trust)
        ap.add_argument("--floor", type=float, default=d.classifier_floor)
        ap.add_argument("--sigma", type=float, default=DEFAULT[3], help="scale on the colour model's sigmas (ColourModelConfig)")
        return detect_main(ap.parse_args(argv[1:]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=str(Path(__file__).resolve().parents[2] / "shared" / "real" / "dev"))
    ap.add_argument("--cache", default="/tmp/ttr_fusion_cache")
    ap.add_argument("--confirm", action="store_true", help="read each held-out state again with its fold's parameters")
    return fit_main(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
