"""Write docs/results.md: how well the shipped reader reads, each figure with the command that makes it.

    python3 benchmarks/results.py --dev ../shared/real/dev --set NAME=DIR [--set NAME=DIR ...]
                                  [--pairs PAIRS_LOG] [--ablation ABLATION_MD] [--speed SPEED_LOG] [--out FILE]

The sets are labelled photo folders (the `eval_real.py` layout) made by the commands this script
prints beside them (`--set` takes NAME=DIR, NAME=DIR=COMMAND to name the command too). The
development photos are read per session, each a left-out fold (nothing in the reader is fitted on
them). The figures of `benchmarks/eval_pairs.py`, `benchmarks/ablate.py` (its --markdown file)
and `benchmarks/bench_detect.py` are copied in from their outputs where given, with their
commands. Everything is measured again on each run; nothing is typed by hand.
"""
from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ablate import board_views, cell, held_out_checks, read_set, summary  # noqa: E402 (this folder)
from labelled import session_of  # noqa: E402

from vision.locate import LocateConfig  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.rectify import photo_px_per_mm  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def too_small(views) -> set[str]:
    """The photos refused (no view) whose board, by its true corners, is seen coarser than the city
    dots need (`LocateConfig.min_px_per_mm`)."""
    bound = LocateConfig().min_px_per_mm
    return {name for name, truth, view in views
            if view is None and truth.get("corners") and photo_px_per_mm(truth["corners"]) < bound}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dev", required=True, help="the development photos (../shared/real/dev)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=DIR[=COMMAND]", help="another labelled set")
    ap.add_argument("--pairs", type=Path, help="the output of benchmarks/eval_pairs.py")
    ap.add_argument("--ablation", type=Path, help="the --markdown file of benchmarks/ablate.py")
    ap.add_argument("--speed", type=Path, help="the output of benchmarks/bench_detect.py")
    ap.add_argument("--cache", default="/tmp/ttr_ablate_cache", help="where each photo's located board is kept")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results.md")
    ap.add_argument("--held-out-checks", type=Path, metavar="DIR",
                    help="as ablate.py's: the real photos and the sets made from them read with the car-or-print "
                         "check that left them out")
    args = ap.parse_args(argv)
    checks = held_out_checks(args.held_out_checks)
    reader = Reader()
    sets = [("development photos", args.dev, f"`../shared/real/dev` ({Path(args.dev).name})")]
    for s in args.set:
        name, folder, *command = s.split("=", 2)
        sets.append((name, folder, f"`{command[0]}`" if command else f"`{folder}`"))
    lines = ["# How well ttr reads", "",
             f"Measured at {commit()} on {datetime.date.today().isoformat()} by `python3 benchmarks/results.py "
             + " ".join(argv if argv is not None else sys.argv[1:]) + "`. A refused photo counts all its tracks "
             "wrong; \"unmarked\" is a track read wrong and not marked doubtful; \"doubtful\" is per played "
             "photo. The last column sets aside the photos refused whose board is seen coarser than the city "
             f"dots need ({LocateConfig().min_px_per_mm} px/mm by the true corners): refusing those is what a "
             "photo too small to read should get.", "",
             "| set | made by | tracks right, exact photos, doubt | without boards refused as too small |",
             "|---|---|---|---|"]
    dev_rows = None
    for name, folder, made in sets:
        views = board_views(Path(folder), Path(args.cache) / Path(folder).resolve().name, reader)
        rows = read_set(reader, views, checks)
        if folder == args.dev:
            dev_rows = rows
        small = too_small(views)
        rest = cell(summary([r for r in rows if r["name"] not in small])) if small else "the same"
        lines.append(f"| {name} | {made} | {cell(summary(rows))} | {rest} |")
    if dev_rows:
        lines += ["", "The development photos per session, each a fold left out (the net learnt from renders "
                  "only, the fitted settings on renders, and with --held-out-checks the car-or-print check without "
                  "the photo's board state; `../shared/real/README.md` names the sessions):", "",
                  "| session | tracks right, exact photos, doubt |", "|---|---|"]
        by: dict = {}
        for r in dev_rows:
            by.setdefault(session_of(r["name"]), []).append(r)
        for session, rows in by.items():
            lines.append(f"| {session} | {cell(summary(rows))} |")
        if checks:
            lines += ["", f"Each fold is read with the car-or-print check (and the car-colour net beside it) of "
                      f"`{args.held_out_checks}` trained leaving its board state out (`ttr train "
                      "--occupancy|--car-colour --real ../shared/real/dev --leave-out STATES --out DIR/FOLD`; "
                      "each check's JSON keeps its command)."]
        wrong = [f"{r['name']}: {w[0]}-{w[1]} ({w[2]}) truth {w[3]} read {w[4]}{'' if w[5] else ', NOT marked'}"
                 for r in dev_rows for w in r["wrong"]]
        if wrong:
            lines += ["", "Tracks read wrong on the development photos:", ""] + [f"- {w}" for w in wrong]
    pairs_command = "python3 benchmarks/eval_pairs.py ../shared/real/dev" + (
        f" --held-out-checks {args.held_out_checks}" if args.held_out_checks else "")
    for title, path, command in (("Photos of one board read together", args.pairs, pairs_command),
                                 ("Each rule switched off", args.ablation,
                                  "python3 benchmarks/ablate.py ../shared/real/dev SETS... --markdown FILE"),
                                 ("Speed", args.speed, "python3 benchmarks/bench_detect.py PHOTOS")):
        if path is None:
            continue
        text = path.read_text(encoding="utf-8")
        if title == "Speed":  # the repeats the measurement names
            command += "".join(f" {m}" for m in re.findall(r"--repeat \d+", text)[:1])
        if title.startswith("Photos"):
            text = "\n".join(line for line in text.splitlines() if line.startswith(("SUMMARY", "MIXED", "same")) and
                             ("SUMMARY" in line or "MIXED" in line or "together 100/100" not in line))
        lines += ["", f"## {title}", "", f"`{command}`:", "", "```" if not title.startswith("Each") else "",
                  text.rstrip(), "```" if not title.startswith("Each") else ""]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
