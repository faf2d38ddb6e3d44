"""Fit the reader's doubt on rendered photos, and show what it does on any labelled photos.

    python3 benchmarks/fit_doubt.py --fit DIR... [--check DIR...] [--budget-on DIR...] [--cache CACHE]

The shipped numbers (vision.settings.DoubtSettings, fitted in models/reader_settings.json) came from these renders (`ttr render --out DIR
--count N --seed S --empty-fraction 0.15`, plus `--backgrounds hostile`, `--players 5` or `--hands sloppy`):
    fit:   7100 x40, 7150 x40 (usual); 7200 x20, 7250 x20 (hostile); 7400 x30 (--players 5, no
           --empty-fraction); 7600 x30 (--hands sloppy)
    check: 7300 x20 (usual), 8383 x20 (--players 5 --hands sloppy --size 2016x1512, no
           --empty-fraction), ../shared/real/dev
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 --check F7300 F8383 ../shared/real/dev
    (--write: the fitted numbers into models/reader_settings.json, with this command and its data)
The standard of photos whose flash fired (ReaderSettings.doubt_flash, `--flash`; its mark held to
FLASH_DOUBT_BUDGET) likewise, on renders under a flash (`ttr render --out DIR --world varied
--light flash --count 30 --seed S`, seeds 7800, then 7850 and 7875 with --empty-fraction 0.15), read
with the flash photos' own weights of the sources (fitted before it: benchmarks/fit_fuse.py):
    python3 benchmarks/fit_doubt.py --flash --fit F7800 F7850 F7875
The calibration of one contest kind, which lane (a double's cars on one lane or the other), came
after the others (`--kinds`, the rest kept as shipped): on the usual renders plus 7650 x30 (--hands
crowded: cars laid between a double's lanes, the contest's own trouble; without them these renders
hold no such misread and the fit says none can happen), and on the flash renders:
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 F7650 F7700 --kinds "which lane"
    python3 benchmarks/fit_doubt.py --flash --fit F7800 F7850 F7875 --kinds "which lane"
The usual photos' standard on a photo hard to read as a whole (DoubtSettings.hard_below) came
last, the rest kept as shipped (`--hard-only`):
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 F7700 --hard-only
The calibration under glare (DoubtSettings.glare_bias and glare_slope, `--kinds "under glare"`)
likewise, on the usual renders and on the flash renders:
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 F7700 --kinds "under glare"
    python3 benchmarks/fit_doubt.py --flash --fit F7800 F7850 F7875 --kinds "under glare"
Glare found by the print's lost contrast (LightSettings.print_glare_loss, `--glare`: the lowest
loss, in twentieths, whose glare adds at most PRINT_GLARE_BUDGET checks a played photo to what the
usual doubt marks without it), on all of these renders; fitted first, the doubt after it:
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 F7700 F7800 F7850 F7875 --glare

Real cars as well (`--copies`, not shipped: `docs/ablation.md`): the development photos' re-lit and
re-photographed copies fitted with the renders, the two counting alike, each copy read by the
car-or-print check that left its session out (`--held-out-checks`); with `--folds`, per development
session the fit again without that session's copies, shown on its photos and its copies:
    python3 benchmarks/fit_doubt.py --fit F7100 F7150 F7200 F7250 F7400 F7600 F7700 --copies relit9128 re5656
        --held-out-checks checks --check ../shared/real/dev --kinds "two colours" --folds

Each DIR holds photos and gt/<photo stem>.json truths (`ttr render --out DIR` makes such a folder;
../shared/real/dev is one). Every photo is read once (CACHE/<folder name>/<stem>.npz keeps its
per-space evidence and the truth per track, so a second run takes seconds); the decision
(vision.decide) is then rerun on the evidence, as the reader does. The evidence is the reader's own
(`Reader.trace`).

The fit: per contest kind (vision.decide.doubt.DOUBT_KINDS), a logistic regression of "the track is
read wrong" on its evidence margin per space (vision.decide.doubt.evidence_margins / length, held to
DoubtSettings.margin_range): two numbers a kind, DoubtSettings.bias and slope. Then the
mark, DoubtSettings.below: the highest standard (in hundredths) that marks at most
DOUBT_BUDGET tracks a played photo of the fitting set (of `--budget-on`, when given); then the
mark on a photo hard to read as a whole (DoubtSettings.hard_photo doubtful tracks or more),
DoubtSettings.hard_below: the highest standard (in thousandths) that adds at most
HARD_PHOTO_BUDGET checks a played photo of that set (with --flash, --hard or --hard-only). Before the
mark, DoubtSettings.glare_bias and glare_slope: the same regression on the tracks under glare
(vision.decide.doubt.under_glare), whatever their contest. Fit on renders only: the
real photos are the check, and a check the model learnt from says nothing.

Printed: the fitted numbers (as DoubtSettings fields), then per folder, with the shipped DoubtSettings
(and the fitted numbers, where they differ), a SUMMARY line as benchmarks/eval_doubt.py gives (per track; a
one-colour double counts per lane), the doubtful tracks per played photo (one with a claimed track
in its truth) and per empty one, and how many tracks read at >= 0.99 are wrong; per board state
where the truth names states other than "synthetic" (the real photos: A, B, D, empty); tracks and
wrong ones per confidence band against the number the confidences expect; and per contest kind.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablate import check_left_out, held_out_checks, reader_for  # noqa: E402 (this folder: the scripts' own helpers)
from labelled import SESSIONS, labelled_photos, missing_folder, session_of  # noqa: E402

from calibration.template import load_template  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from vision.decide import decide  # noqa: E402
from vision.decide.doubt import (  # noqa: E402
    DOUBT_KINDS,
    hard_photo_marks,
    margin_per_space,
    track_confidence,
    track_contests,
    under_glare,
)
from vision.quality import MSG_FLASH  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.reading import SPACE_CLASSES  # noqa: E402
from vision.settings import DecideSettings, DoubtSettings, LightSettings, fitted_entries, write_fitted  # noqa: E402

# The most doubtful tracks a played photo may ask a player to check (issue 13: "at most 5").
DOUBT_BUDGET = 5.0
# ... and a photo whose flash fired (`--flash`): one the reading asks to be taken again without it
# and, until it is, must mark what it may have misread (issue 28): twice the checks.
FLASH_DOUBT_BUDGET = 10.0
# The checks a photo hard to read as a whole adds (DoubtSettings.hard_below), per played photo of
# the fitting set: one, whatever the standard.
HARD_PHOTO_BUDGET = 1.0
# ... and so does glare found by the print's lost contrast (LightSettings.print_glare_loss, `--glare`).
PRINT_GLARE_BUDGET = 1.0
# `--kinds`: the calibration of the tracks under glare (DoubtSettings.glare_bias and glare_slope),
# fitted like a contest kind's.
UNDER_GLARE = "under glare"


def truth_per_track(truth: dict, reader: Reader, owners_read: list) -> np.ndarray:
    """(100,) truth owner per track id as a SPACE_CLASSES index; within a group of tracks with the
    same cities and colour, a lane whose read owner is among the truth's owners keeps it."""
    want = defaultdict(list)
    for t in truth["tracks"]:
        want[(frozenset((t["a"], t["b"])), t["color"])].append(SPACE_CLASSES.index(t["owner"] or "empty"))
    out = np.full(len(reader.board.tracks), -1)
    groups = defaultdict(list)
    for t in reader.board.tracks:
        groups[(frozenset((t.a, t.b)), t.color)].append(t.id)
    for key, ids in groups.items():
        left = list(want[key])
        rest = []
        for i in ids:
            if owners_read[i] in left:
                left.remove(owners_read[i])
                out[i] = owners_read[i]
            else:
                rest.append(i)
        for i, o in zip(rest, left):
            out[i] = o
    return out


def read_one(reader: Reader, path: Path) -> dict:
    trace = reader.trace_path(str(path))
    ev = trace.evidence
    return {"loglik": ev.loglik, "probs": ev.probs, "lab": ev.lab, "paper_glare": trace.lit.glare,
            "warnings": np.array(json.dumps([str(w) for w in trace.view.warnings])),
            "seen": np.array(float(trace.view.seen_px_per_mm)),
            "owners_read": np.array([SPACE_CLASSES.index(t.owner or "empty") for t in trace.tracks])}


def collect(folder: Path, cache: Path, reader: Reader | None = None, checks: list = ()) -> list[Path]:
    """Each labelled photo of `folder` read once, its evidence kept under `cache`; with `checks`
    (`ablate.held_out_checks`), a development photo or a copy of one read with the car-or-print
    check that left it out."""
    cache.mkdir(parents=True, exist_ok=True)
    out, readers = [], {}
    for photo, gt in labelled_photos(folder):
        target = cache / f"{photo.stem}.npz"
        failed = cache / f"{photo.stem}.failed"
        if failed.exists():
            continue
        if not target.exists():
            reader = reader or Reader()
            try:
                d = read_one(reader_for(reader, photo.name, checks, readers), photo)
            except TtrError as e:
                print(f"{photo.name}: FAILED {e}", file=sys.stderr)
                failed.write_text(str(e), encoding="utf-8")
                continue
            truth = json.loads(gt.read_text(encoding="utf-8"))
            d["truth"] = truth_per_track(truth, reader, list(d["owners_read"]))
            d["state"] = np.array(str(truth.get("board_state", "")))
            np.savez_compressed(target, **d)
            print(f"{photo.name}: cached", file=sys.stderr)
        out.append(target)
    return out

# -- the fit -----------------------------------------------------------------------------------
def track_rows(cached: list[Path], reader: Reader, cfg: DoubtSettings = DoubtSettings(),
               decide_cfg: DecideSettings = DecideSettings(), light: LightSettings | None = None
               ) -> dict[str, np.ndarray]:
    """Per track of every cached photo: photo, state, played, margin, length, kind, wrong; the
    glare found again from the cache (`Reader.glare`) under `light` (default: the reader's), so one
    cache serves any glare setting."""
    board = load_board()
    track_ids = load_template().all_spaces().track_ids
    cols = defaultdict(list)
    for path in cached:
        d = np.load(path)
        if "paper_glare" not in d:
            raise SystemExit(f"{path}: cached before the paper's glare was kept; delete the cache and run again")
        glare = reader.glare(d["paper_glare"], d["lab"], d["loglik"], light)
        per_track = [d["loglik"][track_ids == t.id] for t in board.tracks]
        decision = decide(per_track, board, decide_cfg)
        scores, choice = decision.scores, decision.choice
        if not np.array_equal(choice, d["owners_read"]):
            print(f"{path.stem}: the decision differs from when it was cached", file=sys.stderr)
        margin, runner, kinds = track_contests(scores, choice, board, decide_cfg.spill, cfg)
        truth = d["truth"]
        for t in board.tracks:
            cols["photo"].append(path.stem)
            cols["state"].append(str(d["state"]))
            cols["played"].append(bool(np.any(truth > 0)))
            cols["margin"].append(margin[t.id])
            cols["length"].append(t.length)
            cols["kind"].append(int(kinds[t.id]))
            cols["glared"].append(under_glare(glare[track_ids == t.id], cfg))
            cols["wrong"].append(bool(choice[t.id] != truth[t.id]))
            cols["owner"].append(int(choice[t.id]))
            cols["runner"].append(int(runner[t.id]))
            cols["seen"].append(float(d["seen"]) if "seen" in d else np.nan)
    return {k: np.array(v) for k, v in cols.items()}


def per_space(rows: dict, cfg: DoubtSettings) -> np.ndarray:
    return margin_per_space(rows["margin"], rows["length"], cfg)


def logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-2,
             weight: np.ndarray | None = None) -> tuple[float, float]:
    """(bias, slope) of P(y) = sigmoid(bias - slope * x), by Newton's method (a little ridge keeps a
    kind with no errors finite); each row counted `weight` times (default once)."""
    X = np.stack([np.ones_like(x), -x], axis=1)
    c = np.ones_like(x) if weight is None else np.asarray(weight, float)
    w = np.zeros(2)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-X @ w))
        g = X.T @ (c * (p - y)) + ridge * w
        h = X.T @ (X * (c * p * (1 - p))[:, None]) + ridge * np.eye(2)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return float(w[0]), float(w[1])


def fit(rows: dict, cfg: DoubtSettings = DoubtSettings(), budget_rows: dict | None = None,
        budget: float = DOUBT_BUDGET, hard: bool = True, kinds: list[int] | None = None,
        glare: bool = False, hard_only: bool = False) -> DoubtSettings:
    """DoubtSettings with the doubt fitted on `rows` (see the module doc); the mark's standard held
    to `budget` doubtful tracks a played photo of `budget_rows` (default: `rows`), and with `hard`
    the standard of a photo hard to read as a whole (else `cfg`'s is kept). `kinds` (contest kinds,
    DOUBT_KINDS indices): only their calibration is fitted (and with `glare` the calibration under
    glare), everything else kept as `cfg` has it. `hard_only`: only the standard of a photo hard to
    read as a whole, with `cfg`'s calibration and mark."""
    b_rows = rows if budget_rows is None else budget_rows
    n_played = max(len(set(b_rows["photo"][b_rows["played"]])), 1)
    if hard_only:
        return hard_standard(b_rows, cfg, n_played)
    m = per_space(rows, cfg)
    weight = rows.get("weight")
    bias, slope = list(cfg.bias), list(cfg.slope)
    bias += [0.0] * (len(DOUBT_KINDS) - len(bias))
    slope += [0.0] * (len(DOUBT_KINDS) - len(slope))
    for k in range(len(DOUBT_KINDS)) if kinds is None else kinds:
        sel = rows["kind"] == k
        bias[k], slope[k] = (round(v, 2) for v in logistic(m[sel], rows["wrong"][sel].astype(float),
                                                             weight=None if weight is None else weight[sel]))
    cfg = replace(cfg, bias=tuple(bias), slope=tuple(slope))
    if kinds is None or glare:
        # Under glare: the same regression on the tracks under glare, whatever their contest (few
        # photos hold glare the light normalisation leaves: too few such errors to fit per kind).
        g = rows["glared"]
        glare_bias, glare_slope = (round(v, 2) for v in logistic(m[g], rows["wrong"][g].astype(float),
                                                                 weight=None if weight is None else weight[g]))
        cfg = replace(cfg, glare_bias=glare_bias, glare_slope=glare_slope)
    if kinds is not None:
        return cfg
    # The mark: the surest standard (highest `below`, in hundredths) that asks a player to
    # check at most `budget` tracks a played photo of the budget set.
    conf = 1.0 - p_wrong_of(b_rows, cfg)
    below = 0.5
    for b in np.arange(0.50, 0.995, 0.01):
        if np.sum((conf < b) & b_rows["played"]) / n_played <= budget:
            below = round(float(b), 2)
    cfg = replace(cfg, below=below)
    return hard_standard(b_rows, cfg, n_played) if hard else cfg


def hard_standard(b_rows: dict, cfg: DoubtSettings, n_played: int) -> DoubtSettings:
    """`cfg` with the standard of a photo hard to read as a whole (`hard_below`): the surest (in
    thousandths, at least the mark) that adds at most HARD_PHOTO_BUDGET checks a played photo of
    `b_rows`."""
    conf = 1.0 - p_wrong_of(b_rows, cfg)
    hard_below = cfg.below
    for b in np.arange(cfg.below, 0.9995, 0.001):
        added = marked(b_rows, replace(cfg, hard_below=float(b)), conf) & (conf >= cfg.below) & b_rows["played"]
        if added.sum() / n_played <= HARD_PHOTO_BUDGET:
            hard_below = round(float(b), 3)
    return replace(cfg, hard_below=hard_below)


def fit_print_glare(cached: list[Path], cfg: DoubtSettings, reader: Reader) -> float:
    """LightSettings.print_glare_loss: the lowest loss of the print's contrast (in twentieths)
    whose glare adds at most PRINT_GLARE_BUDGET checks a played photo of `cached` to those the
    doubt `cfg` marks without it."""
    light = reader.settings.light
    before = track_rows(cached, reader, cfg, light=replace(light, print_glare_loss=0.0))
    base = marked(before, cfg)
    n_played = max(len(set(before["photo"][before["played"]])), 1)
    chosen = 0.0
    for loss in np.arange(2.0, 0.0, -0.05):
        rows = track_rows(cached, reader, cfg, light=replace(light, print_glare_loss=float(loss)))
        added = marked(rows, cfg) & ~base & rows["played"]
        if added.sum() / n_played > PRINT_GLARE_BUDGET:
            break
        chosen = round(float(loss), 2)
    return chosen


def p_wrong_of(rows: dict, cfg: DoubtSettings) -> np.ndarray:
    """Each track's chance of being wrong as vision.decide.doubt.doubt_tracks gives it."""
    return np.array([1.0 - track_confidence(m, n, k, g, cfg)
                     for m, n, k, g in zip(rows["margin"], rows["length"], rows["kind"], rows["glared"])])


def marked(rows: dict, cfg: DoubtSettings, conf: np.ndarray | None = None) -> np.ndarray:
    """Each track marked doubtful as vision.decide.doubt.doubt_tracks marks it by its confidence
    (`conf`, computed when not given): under the mark, or on a photo hard to read as a whole
    (hard_photo_marks)."""
    conf = 1.0 - p_wrong_of(rows, cfg) if conf is None else conf
    doubtful = conf < cfg.below
    out = doubtful.copy()
    for photo in set(rows["photo"]):
        sel = rows["photo"] == photo
        out[sel] |= hard_photo_marks(conf[sel], doubtful[sel], cfg)
    return out


def report(name: str, rows: dict, cfg: DoubtSettings) -> None:
    p_wrong = p_wrong_of(rows, cfg)
    doubtful = marked(rows, cfg, 1.0 - p_wrong)
    groups = [("all", np.ones(len(doubtful), bool))]
    states = sorted(set(rows["state"]) - {"synthetic"})
    groups += [(f"state {s}", rows["state"] == s) for s in states]
    for label, sel in groups:
        photos = set(rows["photo"][sel])
        played = set(rows["photo"][sel & rows["played"]])
        wrong, flag = rows["wrong"] & sel, doubtful & sel
        sure = sel & (p_wrong <= 0.01)
        print(f"  {name} {label}: SUMMARY photos={len(photos)} wrong={wrong.sum()} "
              f"wrong_marked_doubtful={(wrong & flag).sum()} doubtful={flag.sum()} "
              f"doubtful_per_photo={flag.sum() / max(len(photos), 1):.1f} "
              f"per_played_photo={(flag & rows['played']).sum() / max(len(played), 1):.1f} "
              f"per_empty_photo={(flag & ~rows['played']).sum() / max(len(photos - played), 1):.1f} "
              f"sure(>=0.99)={sure.sum()} sure_wrong={(sure & wrong).sum()}")
    conf = 1.0 - p_wrong
    edges = tuple(sorted({0.0, 0.5, 0.9, cfg.below, 0.99, 1.0001}))  # the mark is one edge, wherever it lies
    bins = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (conf >= lo) & (conf < hi)
        bins.append(f"[{lo:.2f},{min(hi, 1):.2f}{']' if hi > 1 else ')'} {sel.sum()} tracks "
                    f"{rows['wrong'][sel].sum()} wrong (expected {p_wrong[sel].sum():.1f})")
    print("    confidence: " + "; ".join(bins))
    for k, kind in enumerate(DOUBT_KINDS):
        sel = rows["kind"] == k
        print(f"    {kind:12s} tracks={sel.sum():5d} wrong={(rows['wrong'] & sel).sum():3d} "
              f"doubtful={(doubtful & sel).sum():4d} wrong_doubtful={(rows['wrong'] & sel & doubtful).sum():3d}")
    g = rows["glared"]
    print(f"    {'under glare':12s} tracks={g.sum():5d} wrong={(rows['wrong'] & g).sum():3d} "
          f"doubtful={(doubtful & g).sum():4d} wrong_doubtful={(rows['wrong'] & g & doubtful).sum():3d}")


# -- real copies ----------------------------------------------------------------------------------
def cache_dir(cache: Path, folder: Path, checks: list) -> Path:
    """Where `folder`'s evidence is kept: apart when held-out checks read some of its photos."""
    name = folder.resolve().name
    held = any(check_left_out(photo.name, checks) is not None for photo, _ in labelled_photos(folder))
    return cache / (f"{name}.held-out" if held else name)


def flash_fired(cached: Path) -> bool:
    """Whether the photo's file said its flash fired (it is doubted by its own standard)."""
    return MSG_FLASH in str(np.load(cached)["warnings"])


def subset(rows: dict, sel: np.ndarray) -> dict:
    return {k: v[sel] for k, v in rows.items()}


def with_copies(render_rows: dict, copy_rows: dict) -> dict:
    """The renders' tracks and the copies', each track weighed so that the two count alike."""
    n_r, n_c = len(render_rows["wrong"]), max(len(copy_rows["wrong"]), 1)
    out = {k: np.concatenate([render_rows[k], copy_rows[k]]) for k in render_rows}
    out["weight"] = np.concatenate([np.ones(n_r), np.full(len(copy_rows["wrong"]), n_r / n_c)])
    return out


def folds(render_rows: dict, copy_rows: dict, check_rows: dict, shipped: DoubtSettings, kinds: list | None) -> None:
    """Per development session: the calibration fitted again without that session's copies, and
    its photos (of `check_rows`) and copies doubted by that fit and by the shipped one."""
    kind_ids = None if not kinds else [DOUBT_KINDS.index(k) for k in kinds if k in DOUBT_KINDS]
    copy_session = np.array([session_of(p) for p in copy_rows["photo"]])
    totals = defaultdict(lambda: np.zeros(4))
    for session in SESSIONS:
        cfg = fit(with_copies(render_rows, subset(copy_rows, copy_session != session)), shipped, render_rows,
                  hard=False, kinds=kind_ids, glare=UNDER_GLARE in (kinds or ()))
        print(f"fold {session}: fitted without its copies: bias={cfg.bias} slope={cfg.slope} below={cfg.below}")
        shown = [(Path(d).name, subset(r, np.array([session_of(p) == session for p in r["photo"]])))
                 for d, r in check_rows.items()]
        for name, rows in shown + [("its copies", subset(copy_rows, copy_session == session))]:
            if not len(rows["wrong"]):
                continue
            for label, c in (("fold", cfg), ("shipped", shipped)):
                flag = marked(rows, c)
                played = len(set(rows["photo"][rows["played"]]))
                w = rows["wrong"]
                print(f"  {session} {name} ({label}): SUMMARY photos={len(set(rows['photo']))} wrong={w.sum()} "
                      f"wrong_marked_doubtful={(w & flag).sum()} per_played_photo="
                      f"{(flag & rows['played']).sum() / max(played, 1):.2f}")
                totals[(name if name == "its copies" else "photos", label)] += (
                    played, (flag & rows["played"]).sum(), w.sum(), (w & flag).sum())
    for (name, label), (played, flagged, wrong, wm) in sorted(totals.items()):
        print(f"folds, {name} ({label}): SUMMARY played={int(played)} wrong={int(wrong)} "
              f"wrong_marked_doubtful={int(wm)} per_played_photo={flagged / max(played, 1):.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", nargs="+", required=True, metavar="DIR", help="rendered photos to fit on")
    ap.add_argument("--check", nargs="*", default=[], metavar="DIR", help="photos to check the fit on")
    ap.add_argument("--budget-on", nargs="*", metavar="DIR",
                    help="the fit folders whose played photos hold the doubt budget (default: all of --fit)")
    ap.add_argument("--flash", action="store_true",
                    help="fit the standard of photos whose flash fired (doubt_flash; FLASH_DOUBT_BUDGET)")
    ap.add_argument("--hard", action="store_true",
                    help="also fit the standard on a photo hard to read with the calibration (the usual photos' "
                         "shipped one came from --hard-only)")
    ap.add_argument("--hard-only", action="store_true",
                    help="fit only the usual photos' standard on a photo hard to read (hard_below), keeping the "
                         "shipped calibration and mark (with --flash: the flash photos')")
    ap.add_argument("--glare", action="store_true",
                    help="fit only LightSettings.print_glare_loss (PRINT_GLARE_BUDGET), with the shipped doubt")
    ap.add_argument("--kinds", nargs="+", choices=DOUBT_KINDS + (UNDER_GLARE,), metavar="KIND",
                    help="fit only these contest kinds' calibration (or the glare's), keeping the rest as "
                         "shipped: " + ", ".join(DOUBT_KINDS + (UNDER_GLARE,)))
    ap.add_argument("--copies", nargs="*", default=[], metavar="DIR",
                    help="re-lit or re-photographed copies of the development photos (benchmarks/relight.py, "
                         "rephotograph.py), fitted with the renders, the two counting alike (not --flash: their "
                         "photos whose flash fired are left out)")
    ap.add_argument("--held-out-checks", metavar="DIR",
                    help="car-or-print checks each trained leaving some real photos out (as benchmarks/ablate.py "
                         "takes them): those photos and their copies are read with the check that left them out")
    ap.add_argument("--folds", action="store_true",
                    help="with --copies: per development session, the fit again without that session's copies, "
                         "shown on that session's photos of --check and on its copies")
    ap.add_argument("--cache", default="/tmp/ttr_doubt_cache", help="where the evidence is kept")
    ap.add_argument("--write", action="store_true",
                    help="write the fitted numbers into models/reader_settings.json with this command and its data")
    args = ap.parse_args(argv)
    if (missing := missing_folder(args.fit + args.check + (args.budget_on or []) + args.copies)) is not None:
        ap.error(f"{missing}: no such folder")
    if args.copies and (args.flash or args.glare):
        ap.error("--copies fits the usual photos' calibration: not with --flash or --glare")
    if args.folds and not args.copies:
        ap.error("--folds needs --copies")
    reader = Reader()
    cache = Path(args.cache)
    checks = held_out_checks(Path(args.held_out_checks)) if args.held_out_checks else []
    cached = {d: collect(Path(d), cache_dir(cache, Path(d), checks), reader, checks)
              for d in dict.fromkeys(args.fit + args.check + (args.budget_on or []) + args.copies)}
    shipped = reader.settings.doubt_flash if args.flash else reader.settings.doubt
    prefix = "doubt_flash" if args.flash else "doubt"
    if args.glare:
        fit_paths = [p for d in args.fit for p in cached[d]]
        loss = fit_print_glare(fit_paths, shipped, reader)
        print(f"print_glare_loss={loss} on {len(fit_paths)} photos (shipped {reader.settings.light.print_glare_loss})")
        for d in args.fit + args.check:
            for label, value in (("fitted", loss), ("none", 0.0)):
                rows = track_rows(cached[d], reader, shipped,
                                  light=replace(reader.settings.light, print_glare_loss=value))
                print(f"{d} (print glare {label}):")
                report(Path(d).name, rows, shipped)
        if args.write:
            write_fitted({"light.print_glare_loss": loss},
                         by="benchmarks/fit_doubt.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                         data=f"{len(fit_paths)} photos of {', '.join(Path(d).name for d in args.fit)}: the lowest "
                              f"loss that adds at most {PRINT_GLARE_BUDGET:g} check a played photo")
        return 0
    fit_rows = track_rows([p for d in args.fit for p in cached[d]], reader, shipped)
    budget_rows = None
    folder_rows: dict[str, dict] = {}  # each --fit and --check folder's tracks, for the fold and the report

    def rows_of(d: str) -> dict:
        if d not in folder_rows:
            folder_rows[d] = track_rows(cached[d], reader, shipped)
        return folder_rows[d]

    if args.copies:
        copy_rows = track_rows([p for d in args.copies for p in cached[d] if not flash_fired(p)], reader, shipped)
        budget_rows = fit_rows  # the mark's budget stays the renders'
        if args.folds:
            folds(fit_rows, copy_rows, {d: rows_of(d) for d in args.check}, shipped, args.kinds)
        fit_rows = with_copies(fit_rows, copy_rows)
    if args.budget_on:
        budget_rows = track_rows([p for d in args.budget_on for p in cached[d]], reader, shipped)
    kinds = None if not args.kinds else [DOUBT_KINDS.index(k) for k in args.kinds if k in DOUBT_KINDS]
    fitted = fit(fit_rows, shipped, budget_rows, FLASH_DOUBT_BUDGET if args.flash else DOUBT_BUDGET,
                 hard=args.flash or args.hard, kinds=kinds, glare=UNDER_GLARE in (args.kinds or ()),
                 hard_only=args.hard_only)
    g = fit_rows["glared"]
    print(f"fitted on {len(set(fit_rows['photo']))} photos, {len(fit_rows['wrong'])} tracks, "
          f"{fit_rows['wrong'].sum()} wrong: bias={fitted.bias} slope={fitted.slope} "
          f"below={fitted.below} hard_below={fitted.hard_below} glare={fitted.glare_bias}/{fitted.glare_slope} "
          f"({g.sum()} tracks under glare, {(g & fit_rows['wrong']).sum()} wrong) (kinds {DOUBT_KINDS})")
    print(f"shipped: bias={shipped.bias} slope={shipped.slope} "
          f"below={shipped.below} hard_below={shipped.hard_below} glare={shipped.glare_bias}/{shipped.glare_slope} "
          f"margin_range={shipped.margin_range}")
    same = fitted == shipped
    if not same:
        print("the fit differs from the shipped DoubtSettings: each folder is shown with both")
    for d in args.fit + args.check:
        rows = rows_of(d)
        role = "fit" if d in args.fit else "check"
        for label, cfg in (("shipped", shipped),) if same else (("fitted", fitted), ("shipped", shipped)):
            print(f"{role} {d} ({label}):")
            report(Path(d).name, rows, cfg)
    if args.write:
        by = said_command(argv if argv is not None else sys.argv[1:])
        data = (f"{len(set(fit_rows['photo']))} photos of {', '.join(Path(d).name for d in args.fit + args.copies)}, "
                f"{int(fit_rows['wrong'].sum())} tracks read wrong")
        if kinds is not None:
            if UNDER_GLARE in args.kinds:
                write_fitted({f"{prefix}.glare_bias": fitted.glare_bias, f"{prefix}.glare_slope": fitted.glare_slope},
                             by=by, data=f"{data}; {int(g.sum())} tracks under glare, {int((g & fit_rows['wrong']).sum())} "
                                         f"of them read wrong")
            if kinds:
                # Only these kinds' numbers are new: each list says which command fitted which kind.
                was = fitted_entries()
                named = [DOUBT_KINDS[k] for k in kinds]
                for name in (f"{prefix}.bias", f"{prefix}.slope"):
                    write_fitted({name: getattr(fitted, name.split(".")[1])},
                                 by=said_merged(was[name]["by"], named, by),
                                 data=said_merged(was[name]["data"], named, data))
            return 0
        if args.hard_only:
            write_fitted({f"{prefix}.hard_below": fitted.hard_below}, by=by,
                         data=f"{data}, with the shipped calibration and mark: the surest standard that adds at most "
                              f"{HARD_PHOTO_BUDGET:g} check a played photo")
            return 0
        values = {f"{prefix}.bias": fitted.bias, f"{prefix}.slope": fitted.slope, f"{prefix}.below": fitted.below,
                  f"{prefix}.glare_bias": fitted.glare_bias, f"{prefix}.glare_slope": fitted.glare_slope}
        if args.flash or args.hard:
            values[f"{prefix}.hard_below"] = fitted.hard_below
        write_fitted(values, by=by, data=data)
    return 0


def said_command(argv: list[str], script: str = "benchmarks/fit_doubt.py") -> str:
    """A fitting script's command line as a fitted entry says it: quoted as a shell takes it, without
    where the evidence is kept (the same fit from any cache)."""
    args = list(argv)
    if "--cache" in args:
        i = args.index("--cache")
        del args[i:i + 2]
    return f"{script} {shlex.join(args)}"


def said_by_kind(said: str) -> dict[str, str]:
    """What a fitted entry's `by` or `data` says of each contest kind: "KINDS: said | KINDS: said"
    where kinds were fitted apart, else one saying for every kind."""
    out = {}
    for part in said.split(" | "):
        head, _, text = part.partition(": ")
        names = [k.strip() for k in head.split(",")]
        if not text or not all(k in DOUBT_KINDS for k in names):
            return dict.fromkeys(DOUBT_KINDS, said)
        out.update(dict.fromkeys(names, text))
    return {k: out.get(k, said) for k in DOUBT_KINDS}


def said_merged(was: str, fitted: list[str], said: str) -> str:
    """A fitted entry's `by` or `data` once the kinds `fitted` were fitted again as `said`: every
    other kind keeps what it said, kinds saying the same grouped."""
    per = said_by_kind(was)
    per.update(dict.fromkeys(fitted, said))
    groups: dict[str, list[str]] = {}
    for kind in DOUBT_KINDS:
        groups.setdefault(per[kind], []).append(kind)
    if len(groups) == 1:
        return next(iter(groups))
    return " | ".join(f"{', '.join(kinds)}: {text}" for text, kinds in groups.items())


if __name__ == "__main__":
    sys.exit(main())
