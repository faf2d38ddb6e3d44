"""Where the doubt comes from: per contest kind, how many tracks fall under the mark and how many
of those, and of the rest, are read wrong, on labelled photo sets.

    python3 benchmarks/doubt_margins.py SET [SET ...] [--cache DIR] [--held-out-checks DIR]
                                        [--standards B,B,...]

Each SET holds photos and gt/<photo stem>.json truths (the `eval_real.py` layout). Every photo is
located once (CACHE, as `benchmarks/ablate.py` keeps it) and read by the shipped reader; with
--held-out-checks, a development photo (or a set made from one) is read with the car-or-print check
that left it out (`ablate.held_out_checks`). Per track: its contest kind (vision.decide.doubt:
own print, two colours, car or not), its evidence margin per space and whether it is read wrong.
The mark's margin per kind is where the calibrated confidence crosses the photo's standard
(`DoubtSettings.below`; a photo whose flash fired has its own). Of the tracks under it, how many
are a lane of a double (where the cars of the lane beside may be taken for this one's), and of
the doubles' lanes, how many fall under it by where the camera saw the lane from: beyond its
neighbour (the neighbour's car tops, leaning away from the camera, are seen over it), before it,
or side on (`lean_towards`).

Why: the doubt asks a player to check the tracks whose margin is as small as those the renders
it is fitted on misread. If a set's tracks fall under that margin as often as the renders' do,
its doubt is where the calibration puts it, and only evidence that sets the hypotheses further
apart lowers it; if they fall under it more often, the set's evidence is weaker than the renders'.
Ends with one SUMMARY line a set.

With --standards B,B,...: what the doubt would mark with each other standard in place of the
usual photos' `below` (a photo whose flash fired keeps its own standard): per played photo the
doubtful tracks, and the wrong tracks left unmarked, counted as `eval_real.py` counts them (a
double printed alike as a pair). One STANDARD line a set and standard. Why: the doubt's bar asks
for few marks and every wrong track marked; this shows what the one costs in the other at today's
evidence.

With --by-track N: the N tracks that fall under the mark on the most played photos of a set, each
with its contest kind, the reading and its runner-up most often met there, and how many of those
photos read it wrong. One TRACK line a track. Why: photos of one position repeat its hard tracks,
so a set's doubt may rest on a few places on the board (a car laid between a double's lanes) that
more photos of the same position cannot make plainer.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablate import board_views, held_out_checks, reader_for  # noqa: E402 (this folder: the scripts' own helpers)
from fit_doubt import truth_per_track  # noqa: E402
from labelled import compare_tracks  # noqa: E402

from vision.decide.doubt import DOUBT_KINDS, track_contests  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.reading import SPACE_CLASSES  # noqa: E402
from vision.rectify import parallax_mm  # noqa: E402
from vision.settings import DoubtSettings  # noqa: E402
from vision.synth.trains import CAR_MM  # noqa: E402

# A share of the lanes' gap (~1.4 mm of 9): the reader's estimate of the camera puts a car's top
# about 0.9 mm off (the median on renders, against their true cameras), so less is side on.
LEAN_BIN = 0.15
LEANS = ("beyond", "side", "before")  # the lane seen beyond its neighbour, side on, before it


def lean_towards(lane_mm: np.ndarray, neighbour_mm: np.ndarray, camera_mm) -> float:
    """How far a car on the neighbouring lane (centre `neighbour_mm`) is seen leaning towards this
    lane (centre `lane_mm`) from `camera_mm`, as a share of the lanes' gap: its top's parallax
    across the lanes (negative: away from this lane; 0 without a camera)."""
    if camera_mm is None:
        return 0.0
    gap = np.asarray(lane_mm, float) - np.asarray(neighbour_mm, float)
    g2 = max(float(gap @ gap), 1e-9)
    return float(parallax_mm(neighbour_mm, camera_mm, CAR_MM[2])[0] @ gap) / g2


def lean_bin(lean: float) -> int:
    """Index into LEANS of a lane whose neighbour's cars lean towards it by `lean`."""
    return 0 if lean >= LEAN_BIN else 2 if lean <= -LEAN_BIN else 1


def mark_margin(kind: int, cfg: DoubtSettings) -> float:
    """The margin per space at which a track of contest `kind` reaches `cfg.below` confidence:
    1 - sigmoid(bias - slope * m) = below."""
    wrong = 1.0 - cfg.below
    return float((cfg.bias[kind] - np.log(wrong / (1.0 - wrong))) / cfg.slope[kind])


def played_views(views) -> list:
    """The photos of `views` (ablate.board_views) read, and with a claimed track in their truth."""
    return [(name, truth, view) for name, truth, view in views
            if view is not None and any(t.get("owner") for t in truth["tracks"])]


def contests(reader: Reader, views, checks, belows: tuple[float, ...] = ()
             ) -> tuple[list[tuple[int, float, float, bool, int | None, int, int, int]], np.ndarray]:
    """(contest kind, margin per space, the mark's margin per space, read wrong, for a lane of a
    double its `lean_bin`, else None, track id, hypothesis read, runner-up (SPACE_CLASSES
    indices)) of every track of every photo of `views` (`played_views`),
    and (len(belows), 2) the doubtful tracks and the wrong tracks left unmarked of all of them with
    each standard of `belows` in place of the usual photos' own (`doubt_counts`; a photo whose
    flash fired keeps its own)."""
    out, readers = [], {}
    counts = np.zeros((len(belows), 2), int)
    lanes_mm = np.stack([reader.centres_mm[r].mean(axis=0) for r in reader.rows])
    for name, truth, view in views:
        r = reader_for(reader, name, checks, readers)
        trace = r.trace_view(view, name)
        cfg = r.doubt_settings(view.flash_fired)
        counts += doubt_counts(r, trace, truth, [cfg if view.flash_fired else replace(cfg, below=b) for b in belows])
        owners = [SPACE_CLASSES.index(t.owner or "empty") for t in trace.tracks]
        truth_ix = truth_per_track(truth, r, owners)
        margin, runner, kinds = track_contests(trace.decision.scores, trace.decision.choice, r.board,
                                               r.settings.decide.spill, cfg)
        for t in r.board.tracks:
            kind = int(kinds[t.id])
            o = r.board.double_ids[t.id]
            lean = lean_bin(lean_towards(lanes_mm[t.id], lanes_mm[o], view.camera_mm)) if o >= 0 else None
            out.append((kind, float(margin[t.id]) / t.length, mark_margin(kind, cfg),
                        bool(truth_ix[t.id] != owners[t.id]), lean, t.id, owners[t.id], int(runner[t.id])))
    return out, counts


def doubt_counts(reader: Reader, trace, truth: dict, standards: list[DoubtSettings]) -> np.ndarray:
    """(len(standards), 2): with each doubt standard, the tracks a photo's reading (`trace`, of
    `reader`) marks doubtful and its wrong tracks left unmarked (`compare_tracks`)."""
    out = np.zeros((len(standards), 2), int)
    for i, cfg in enumerate(standards):
        c = compare_tracks(truth, reader.decide_evidence(trace.evidence, cfg)[1])
        out[i] = c["doubtful"], sum(1 for w in c["wrong"] if not w[5])
    return out


def standards(text: str) -> tuple[float, ...]:
    """--standards: confidences strictly between 0 and 1, comma-separated."""
    try:
        out = tuple(float(b) for b in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not numbers: {text!r}") from None
    if not all(0.0 < b < 1.0 for b in out):
        raise argparse.ArgumentTypeError(f"standards are confidences between 0 and 1: {text!r}")
    return out


def count(text: str) -> int:
    """--by-track: a whole number, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"not a whole number of tracks: {text!r}")
    return int(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="labelled photo folders")
    ap.add_argument("--cache", default="/tmp/ttr_ablate_cache", help="where each photo's located board is kept")
    ap.add_argument("--held-out-checks", type=Path, metavar="DIR",
                    help="car-or-print checks each trained leaving some real photos out (as ablate.py takes them)")
    ap.add_argument("--standards", type=standards, default=(), metavar="B,B,...",
                    help="standards (confidences between 0 and 1) to mark the doubt by instead")
    ap.add_argument("--by-track", type=count, default=0, metavar="N",
                    help="also the N tracks under the mark on the most photos")
    args = ap.parse_args(argv)
    belows = args.standards
    checks = held_out_checks(args.held_out_checks)
    reader = Reader()
    for s in args.sets:
        folder = Path(s)
        views = played_views(board_views(folder, Path(args.cache) / folder.resolve().name, reader))
        rows, counts = contests(reader, views, checks, belows)
        # tracks, under the mark, of those a double's lane, wrong under the mark, wrong above it
        per = defaultdict(lambda: [0, 0, 0, 0, 0])
        by_lean = np.zeros((len(LEANS), 2), int)  # doubles' lanes: all, under the mark
        for kind, m, mark, wrong, lean, *_ in rows:
            p = per[kind]
            p[0] += 1
            p[1] += m < mark
            p[2] += lean is not None and m < mark
            p[3] += wrong and m < mark
            p[4] += wrong and m >= mark
            if lean is not None:
                by_lean[lean] += (1, m < mark)
        parts = []
        for kind in sorted(per):
            n, under, lanes, w_under, w_above = per[kind]
            parts.append(f"{DOUBT_KINDS[kind].replace(' ', '_')}={n}:under={under}({100 * under / n:.1f}%)"
                         f":doubles_under={lanes}:wrong_under={w_under}:wrong_above={w_above}")
        leans = ",".join(f"{name}:{u}/{n}" for name, (n, u) in zip(LEANS, by_lean))
        print(f"SUMMARY set={folder.name} played_photos={len(views)} " + " ".join(parts)
              + f" doubles_under_by_lean={leans}", flush=True)
        for below, (doubtful, unmarked) in zip(belows, counts):
            print(f"STANDARD set={folder.name} below={below:g} doubtful_per_played_photo="
                  f"{doubtful / max(len(views), 1):.1f} wrong_unmarked={unmarked}", flush=True)
        for line in by_track(rows, reader.board, args.by_track):
            print(f"TRACK set={folder.name} {line}", flush=True)
    return 0


def by_track(rows, board, top: int) -> list[str]:
    """--by-track: the `top` tracks under the mark on the most photos of `rows` (`contests`), one line
    each: the track, on how many photos it is under the mark, the contest kind and the reading
    against its runner-up most often met there, and how many of those photos read it wrong."""
    marks: dict[int, list] = defaultdict(list)
    for kind, m, mark, wrong, _, track, read, runner in rows:
        if m < mark:
            marks[track].append((kind, read, runner, wrong))
    out = []
    for track, seen in sorted(marks.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:top]:
        t = board.tracks[track]
        (kind, read, runner), _ = Counter(s[:3] for s in seen).most_common(1)[0]
        out.append(f"track={t.a.replace(' ', '_')}-{t.b.replace(' ', '_')}({t.color}) under={len(seen)} "
                   f"kind={DOUBT_KINDS[kind].replace(' ', '_')} read={SPACE_CLASSES[read]} "
                   f"runner_up={SPACE_CLASSES[runner]} wrong={sum(s[3] for s in seen)}")
    return out


if __name__ == "__main__":
    sys.exit(main())
