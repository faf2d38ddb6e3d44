"""Photos of one board read together (`vision.several`): are pairs of one position exact, and never
worse than their better photo alone? Are pairs of different positions refused?

    python3 benchmarks/eval_pairs.py [DIR] [--limit N]

DIR holds photos and gt/<photo stem>.json truths with a "board_state" each (default
../shared/real/dev). Every photo is read once; then every pair of photos of one state that are not
copies of one scene (a photo and its `_small` or `_rectified` copy) is read together, and every pair
of photos of different states. Per pair of one position: tracks right alone (each photo) and
together, and the doubtful tracks together (the SUMMARY adds the wrong ones not marked). Per pair
of different positions: refused (one photo set aside, the less sure), or each track the two truths
differ on marked doubtful, or neither (mixed: the failure). Ends with SUMMARY lines.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablate import held_out_checks, reader_for  # noqa: E402 (this folder: the scripts' own helpers)
from labelled import compare_tracks, labelled_photos  # noqa: E402

from scoring.errors import TtrError  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.several import PhotoPart, combine, disagreeing_tracks  # noqa: E402


def scene(name: str) -> str:
    """A photo's scene: its copies (`_small`, `_rectified`) are one scene."""
    stem = Path(name).stem
    for tail in ("_small", "_rectified", "_blank"):
        stem = stem.split(tail)[0]
    return stem


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=str(Path(__file__).resolve().parents[2] / "shared" / "real" / "dev"))
    ap.add_argument("--limit", type=int, default=0, help="at most this many pairs of each kind (0: all)")
    ap.add_argument("--held-out-checks", type=Path, metavar="DIR",
                    help="as ablate.py's: each photo read with the car-or-print check that left it out")
    args = ap.parse_args(argv)
    checks, readers = held_out_checks(args.held_out_checks), {}
    reader = Reader()
    photos = []
    for photo, gt in labelled_photos(Path(args.dir)):
        truth = json.loads(gt.read_text(encoding="utf-8"))
        try:
            part = PhotoPart(str(photo), reader_for(reader, photo.name, checks, readers).trace_path(str(photo)))
        except TtrError as e:
            part = PhotoPart(str(photo), error=str(e))
        alone = compare_tracks(truth, part.trace.tracks) if part.read else None
        photos.append((photo.name, truth, part, alone))
        print(f"{photo.name}: read alone {alone['right'] if alone else 'refused'}", file=sys.stderr, flush=True)
    same, other = [], []
    for a, b in itertools.combinations(photos, 2):
        if scene(a[0]) == scene(b[0]) or not (a[2].read and b[2].read):
            continue
        (same if a[1].get("board_state") == b[1].get("board_state") else other).append((a, b))
    if args.limit:
        same, other = same[:args.limit], other[:args.limit]
    exact = worse = unmarked_same = doubtful_same = 0
    differ_same, differ_other = [], []
    for a, b in same:
        differ_same.append(len(disagreeing_tracks(a[2].trace.tracks, b[2].trace.tracks, reader)))
        got = combine(reader, [a[2], b[2]])
        together = compare_tracks(a[1], got.reading.tracks)
        best = max(a[3]["right"], b[3]["right"])
        refused = [p.image for p in got.photos if not p.read]
        exact += together["right"] == together["total"]
        worse += together["right"] < best
        unmarked_same += sum(not w[5] for w in together["wrong"])
        doubtful_same += together["doubtful"]
        print(f"same {a[0]} + {b[0]}: {differ_same[-1]} sure tracks differ; alone {a[3]['right']} / {b[3]['right']}, together {together['right']}"
              f"/{together['total']}, {together['doubtful']} doubtful"
              + (f", REFUSED {refused}" if refused else "")
              + (f", wrong {[w[:3] for w in together['wrong']]}" if together["wrong"] else ""))
    refused_n = marked = mixed = 0
    for a, b in other:
        differ_other.append(len(disagreeing_tracks(a[2].trace.tracks, b[2].trace.tracks, reader)))
        got = combine(reader, [a[2], b[2]])
        if not all(p.read for p in got.photos):  # one set aside (the less sure), never both mixed
            refused_n += 1
            continue
        differ = compare_tracks(b[1], [{"a": t["a"], "b": t["b"], "color": t["color"], "owner": t.get("owner"),
                                         "doubtful": False} for t in a[1]["tracks"]])["wrong"]
        keys = {(w[0], w[1], w[2]) for w in differ}
        unmarked = [t for t in got.reading.tracks if (*sorted((t.a, t.b)), t.color) in keys and not t.doubtful]
        if unmarked:
            mixed += 1
            print(f"MIXED {a[0]} + {b[0]}: {len(unmarked)} of {len(keys)} differing tracks unmarked")
        else:
            marked += 1
    print(f"SUMMARY same_position_pairs={len(same)} exact={exact} worse_than_better_alone={worse} "
          f"wrong_unmarked={unmarked_same} doubtful_per_pair={doubtful_same / max(len(same), 1):.1f} "
          f"most_sure_tracks_differing={max(differ_same, default=0)}")
    print(f"SUMMARY other_position_pairs={len(other)} refused={refused_n} every_difference_marked={marked} "
          f"mixed={mixed} fewest_sure_tracks_differing={min(differ_other, default=0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
