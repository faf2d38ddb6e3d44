"""`ttr detect PHOTO... [--json] [--same-board] [--calibration DIR] [--overlay DIR]`: read who owns each track.

With --json: one JSON object per photo per line (JSON Lines); a photo that cannot be read gives
{"image": ..., "error": "..."} and the others are still read; without it, such a photo is one line
on stderr. Each error is said once. Exit status 1 if any photo failed.
With several photos, a progress bar runs on stderr (where a terminal shows it). --overlay writes
each flattened board with the reading and a legend drawn on it, and says where.
With --same-board the photos are of one board (from several sides): they are read together into
one reading (`vision.several`), printed as one JSON object with `images` and each photo's part; a
photo of another position is set aside, saying so, and the others are read.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cv2
from tqdm import tqdm

from app.state import track_label
from calibration.user import load_calibration
from scoring.board import load_board
from scoring.errors import TtrError
from scoring.files import atomic_write, writable_dir
from scoring.rules import PLAYER_COLORS
from vision.draw import draw_legend, draw_reading
from vision.read import Reader
from vision.reading import DOUBTFUL_TRACKS, Notice
from vision.several import read_same_board


def add_arguments(parser):
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="board photos (JPEG, PNG, WebP, HEIC)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per photo per line")
    parser.add_argument("--calibration", metavar="DIR", help="a folder made by `ttr calibrate`")
    parser.add_argument("--overlay", metavar="DIR", help="write each flattened board with the reading drawn on it")
    parser.add_argument("--same-board", action="store_true",
                        help="the photos show one board (from other sides): read them together into one reading")
    parser.add_argument("--no-classifier", action="store_true",
                        help="use the colour evidence alone (no trained model)")


def summary(reading) -> str:
    """A readable summary of one reading: each player's tracks (in the box's order), the
    warnings, and the tracks to check, each named with its lane where a double's look alike."""
    lines = [f"{reading.image}: board found (orientation {reading.location.orientation}°), "
             f"{reading.elapsed_ms:.0f} ms"]
    claims = reading.claims()
    by_id = {t.track_id: t for t in reading.tracks}
    for colour in (c for c in PLAYER_COLORS if c in claims):
        ids = claims[colour]
        trains = sum(by_id[i].length for i in ids)
        lines.append(f"  {colour:<7} {len(ids):>2} tracks, {trains:>2} trains: " +
                     ", ".join(f"{by_id[i].a}-{by_id[i].b}" for i in ids))
    if not claims:
        lines.append("  no claimed tracks")
    lines += [f"  warning: {w}" for w in other_warnings(reading)]
    if reading.doubtful:
        lines.append("  check these on the board:")
        lines += [f"    {line}" for line in doubt_lines(reading)]
    return "\n".join(lines)


def doubt_lines(reading) -> list[str]:
    """The reading's doubtful tracks, least sure first: the track (its lane where a double's look
    alike), the owner read, how sure, and why."""
    tracks = load_board().tracks
    return [f"{track_label(tracks[t.track_id])}: read as {t.owner or 'nobody'}, {t.confidence:.0%} sure"
            + (f": {t.reason}" if t.reason else "")
            for t in sorted(reading.doubtful, key=lambda t: t.confidence)]


def other_warnings(reading) -> list[str]:
    """The reading's warnings but the one naming the doubtful tracks (`doubt_lines` says more)."""
    return [str(w) for w in reading.warnings if Notice.of(w).code != DOUBTFUL_TRACKS]


def run(args) -> int:
    calibration = None
    if args.calibration:
        calibration = load_calibration(args.calibration)
    reader = Reader(calibration, use_classifier=not args.no_classifier)
    overlay_dir = None
    if args.overlay:  # made if missing; a file, or a folder that cannot be written, is one line

        overlay_dir = writable_dir(args.overlay, "overlay folder (--overlay)")

    if args.same_board:
        return _same_board(args, reader, overlay_dir)
    failed = 0
    bar = tqdm(args.photos, desc="reading", unit="photo", file=sys.stderr,
               disable=None if len(args.photos) > 1 else True)

    def say(line: str) -> None:  # stdout, without breaking the bar on stderr
        tqdm.write(line, file=sys.stdout)
        sys.stdout.flush()

    for photo in bar:
        try:
            reading = reader.read_path(photo)
        except TtrError as e:
            failed += 1
            _emit_error(args, photo, str(e), say)
            continue
        except Exception as e:  # one bad photo must not stop the batch
            failed += 1
            _emit_error(args, photo, f"internal error: {type(e).__name__}: {e}", say)
            continue
        written = None
        if overlay_dir:
            try:
                written = _write_overlay(overlay_dir, photo, reading)
            except TtrError as e:
                failed += 1
                _emit_error(args, photo, str(e), say)
                continue
        if args.json:
            say(json.dumps(reading.to_dict(), ensure_ascii=False))
            if written:  # (stdout stays JSON Lines)
                tqdm.write(f"ttr: overlay of {photo}: {written}", file=sys.stderr)
        else:
            say(summary(reading) + (f"\n  overlay: {written}" if written else ""))
    return 1 if failed else 0


def _same_board(args, reader: Reader, overlay_dir) -> int:
    """--same-board: one reading from all the photos (exit 1 when a photo was set aside)."""
    both = read_same_board(reader, args.photos)
    reading = both.reading
    written = _write_overlay(overlay_dir, args.photos[0], reading) if overlay_dir else None
    if args.json:
        print(json.dumps(both.to_dict(), ensure_ascii=False))
        if written:
            print(f"ttr: overlay: {written}", file=sys.stderr)
    else:
        lines = summary(reading).splitlines()
        lines[0] = f"{', '.join(both.images)}: one board, read together, {reading.elapsed_ms:.0f} ms"
        print("\n".join(lines) + (f"\n  overlay: {written}" if written else ""))
    return 0 if all(p.read for p in both.photos) else 1


def overlay_name(photo: str) -> str:
    """`<photo's stem>_overlay.jpg`, the stem cut so that the name fits in 255 bytes."""
    stem = Path(photo).stem
    while stem and len(os.fsencode(stem + "_overlay.jpg")) > 255:
        stem = stem[:-1]
    return stem + "_overlay.jpg"


def _write_overlay(overlay_dir: Path, photo: str, reading) -> Path:
    """The flattened board with the reading and a legend drawn, written atomically."""

    ok, jpg = cv2.imencode(".jpg", draw_legend(draw_reading(reading.flattened, reading), reading),
                           [cv2.IMWRITE_JPEG_QUALITY, 90])
    if not ok:
        raise TtrError("cannot encode the overlay image")
    return atomic_write(overlay_dir / overlay_name(photo), jpg.tobytes())


def _emit_error(args, photo: str, message: str, say=print) -> None:
    """The photo's error, once: with --json, the photo's JSON line on stdout (where a program
    reads it); otherwise one line on stderr, the photo named once (the reader's messages already
    start with the file name)."""
    if args.json:
        say(json.dumps({"image": photo, "error": message}, ensure_ascii=False))
        return
    named = message if message.startswith(f"{photo}:") else f"{photo}: {message}"
    tqdm.write(f"ttr: error: {named}", file=sys.stderr)
