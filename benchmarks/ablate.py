"""Does each source and rule of the reader earn its place? Each switched off in turn, measured on
labelled photo sets it was not fitted to.

    python3 benchmarks/ablate.py SET [SET ...] [--variants NAME,...] [--cache DIR] [--markdown FILE]

Each SET holds photos and gt/<photo stem>.json truths (the `eval_real.py` layout: the development
photos, `ttr render --out DIR` sets, `benchmarks/rephotograph.py` and `benchmarks/relight.py`
sets). Every photo is located and flattened once (CACHE keeps each `BoardView`); each variant then
reads every board from the light stage on with its own settings (`Reader.trace_view`), so the
locator, which no variant changes, is paid once. A variant that changes only the decision and the
doubt (`DECIDING`) decides the shipped reader's evidence again instead of reading every board anew
(but a photo whose flash fired, whose doubt weighs two readings).

Per variant and set: tracks right on played boards (the lanes of a double printed alike compared as
a pair, as `eval_real.py` does), photos read exactly, tracks claimed on empty boards, wrong tracks
not marked doubtful, and doubtful tracks per played photo. On the development photos each session
is a row of its own too (`labelled.SESSIONS`): nothing in the reader is fitted on them (the net
learnt from renders, the fitted settings on renders), so each session is a left-out fold. Then,
for each variant, the tracks it reads otherwise than the shipped reader: what switching the rule
off would change.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labelled import compare_tracks, labelled_photos, session_of  # noqa: E402 (this folder: the scripts' own helper)

from scoring.errors import TtrError  # noqa: E402
from vision.read import BoardView, Reader  # noqa: E402
from vision.reading import BoardLocation  # noqa: E402
from vision.settings import ReaderSettings  # noqa: E402

NEVER = 1e9  # a threshold nothing reaches: the rule it guards never fires
# The glare's doubt before it was calibrated on the margin: a track under glare at most as sure as
# the share of such tracks the renders read right (0.95; 0.83 under a flash), whatever its margin:
# sigmoid(bias) wrong.
GLARE_CAP_BIAS, GLARE_CAP_FLASH_BIAS = float(np.log(0.05 / 0.95)), float(np.log(0.17 / 0.83))
DECIDING = ("decide", "doubt", "doubt_flash")  # the settings only the decision and the doubt read


def variants() -> dict[str, tuple[str, ReaderSettings, bool]]:
    """{name: (what is switched off, settings, whether the net is used)}."""
    s = ReaderSettings()
    r = lambda **k: replace(s, **k)  # noqa: E731
    return {
        "shipped": ("nothing", s, True),
        "no net": ("the space classifier (colours alone)", s, False),
        "no colour": ("the colour evidence (the net alone)", r(fuse=replace(s.fuse, colour=0.0)), True),
        "no car-or-print check": ("the car-or-print check (models/occupancy.py)",
                                  r(fuse=replace(s.fuse, occupancy=0.0)), True),
        "no car-colour net": ("the car-colour net (models/car_colour.py)",
                              r(fuse=replace(s.fuse, car_colour=0.0)), True),
        "car colour everywhere": ("the car-colour net asked only where a car may stand (asked everywhere)",
                                  r(fuse=replace(s.fuse, car_colour_from=0.0)), True),
        "colour alone learns": ("the net's first look in the colours' adaptation",
                                r(colour=replace(s.colour, learns_from_net=False)), True),
        "colours learn without the check": ("the car-or-print check in the colours' adaptation",
                                            r(colour=replace(s.colour, learns_from_check=False)), True),
        "colours first learn by themselves": ("the colours' first round told print from cars by the nets alone",
                                              r(colour=replace(s.colour, first_from_others=False)), True),
        "no print gloss": ("print (and cars) mixed with the light's white", r(colour=replace(s.colour, max_glare=0.0)),
                           True),
        "no partial cover": ("a car covering part of its space",
                             r(colour=replace(s.colour, min_cover=1.0)), True),
        "no colour adaptation": ("the photo's own print and car colours (EM rounds)",
                                 r(colour=replace(s.colour, rounds=0)), True),
        "car in the middle": ("cars looked for at places across the space",
                              r(sample=replace(s.sample, car_across_steps=0)), True),
        "check at full sharpness": ("the car-or-print check asked at one sharpness",
                                    r(net=replace(s.net, check_px_per_mm=None)), True),
        "no second look": ("the half-turned second look", r(refine=replace(s.refine, second_look=False)), True),
        "no lanes alone": ("lanes judged again beside a claimed lane", r(refine=replace(s.refine, lanes_alone=False)),
                           True),
        "net says car only": ("the net's colour answer", r(net=replace(s.net, colour_trust=0.0)), True),
        "net colour half trusted": ("the net's colour answer in full (counted half, as before)",
                                    r(net=replace(s.net, colour_trust=0.5)), True),
        "no registration": ("spaces registered on the board", r(light=replace(s.light, register=False)), True),
        "no glare": ("glare found on the board (colours and doubt)",
                     r(light=replace(s.light, glare_paper_level=NEVER, print_glare_loss=0.0)), True),
        "no print glare": ("glare found by the print's lost contrast (colours and doubt)",
                           r(light=replace(s.light, print_glare_loss=0.0)), True),
        "print glare only marks": ("the colours read again under the print's glare",
                                   r(light=replace(s.light, print_glare_colours=False)), True),
        "no flash veil": ("a flash photo read again with the veil its print shows taken off",
                          r(light=replace(s.light, flash_veil=False)), True),
        "no flash weights": ("a photo whose flash fired weighing its sources by their own weights",
                             r(fuse_flash=s.fuse), True),
        "no flash standard": ("a photo whose flash fired doubted by its own standard", r(doubt_flash=s.doubt), True),
        "no glare doubt": ("a track under glare doubted by its own calibration",
                         r(doubt=replace(s.doubt, glare_share=NEVER),
                           doubt_flash=replace(s.doubt_flash, glare_share=NEVER)), True),
        "no hard-photo standard": ("a photo with many doubtful tracks marks its surer ones too",
                                   r(doubt=replace(s.doubt, hard_photo=NEVER),
                                     doubt_flash=replace(s.doubt_flash, hard_photo=NEVER)), True),
        "no unseen-player prior": ("the prior against a player seen only on their own print",
                                   r(decide=replace(s.decide, unseen_player_prior=False)), True),
        "no few-cars prior": ("a player with too few cars for a finished game weighed against the game's odds",
                              r(decide=replace(s.decide, few_cars_prior=())), True),
        "no own-print check": ("a player read on most tracks of their own print colour doubted",
                               r(doubt=replace(s.doubt, own_print_most=NEVER),
                                 doubt_flash=replace(s.doubt_flash, own_print_most=NEVER)), True),
        "no which-lane contest": ("a double's lanes swapped doubted as a contest of its own",
                                  r(doubt=replace(s.doubt, which_lane=False),
                                    doubt_flash=replace(s.doubt_flash, which_lane=False)), True),
        "glare as a cap": ("the doubt of a track under glare calibrated on its margin (else one cap "
                           "whatever the margin)",
                           r(doubt=replace(s.doubt, glare_bias=GLARE_CAP_BIAS, glare_slope=0.0),
                             doubt_flash=replace(s.doubt_flash, glare_bias=GLARE_CAP_FLASH_BIAS,
                                                 glare_slope=0.0)), True),
        "no spill": ("an empty lane may show its neighbour's cars", r(decide=replace(s.decide, spill=NEVER)), True),
        "no car bound": ("at most the box's cars a colour", r(decide=replace(s.decide, max_trains=10 ** 6)), True),
    }


def board_views(folder: Path, cache: Path, reader: Reader) -> list[tuple[str, dict, BoardView | None]]:
    """(photo name, truth, its BoardView or None where the locator refused it) for every photo."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for photo, gt in labelled_photos(folder):
        truth = json.loads(gt.read_text(encoding="utf-8"))
        f = cache / f"{photo.stem}.npz"
        if f.exists() and "flash_fired" not in str(np.load(f).get("meta", "flash_fired")):
            f.unlink()  # kept before the photo's flash was: located again
        if not f.exists():
            try:
                v = reader.view_path(str(photo))
                np.savez_compressed(f, flattened=v.flattened, corners=v.location.corners_xy,
                                    meta=json.dumps({"orientation": v.location.orientation,
                                                     "confidence": v.location.confidence,
                                                     "seen": v.seen_px_per_mm,
                                                     "warnings": [str(x) for x in v.warnings],
                                                     "flash_fired": v.flash_fired}),
                                    camera=v.camera_mm)
            except TtrError as e:
                np.savez_compressed(f, refused=str(e))
        d = np.load(f)
        if "refused" in d:
            out.append((photo.name, truth, None))
            continue
        meta = json.loads(str(d["meta"]))
        loc = BoardLocation(d["corners"], meta["orientation"], meta["confidence"])
        out.append((photo.name, truth, BoardView(loc, d["flattened"], d["camera"], meta["seen"],
                                                 tuple(meta["warnings"]), meta["flash_fired"])))
    return out


def held_out_checks(folder: Path | None) -> list[tuple[list[str], Path]]:
    """(stems of the photos it left out, its ONNX file) of each car-or-print check under `folder`
    (made by `ttr train --occupancy --real DIR --leave-out STATES --out folder/NAME`; a car-colour
    net trained leaving the same states out, `ttr train --car-colour ... --out folder/NAME`, is read
    with it)."""
    if folder is None:
        return []
    out = []
    for cfg in sorted(Path(folder).glob("*/space_occupancy.json")):
        stems = [Path(p).stem for p in json.loads(cfg.read_text(encoding="utf-8"))["real"]["photos_left_out"]]
        out.append((stems, cfg.with_suffix(".onnx")))
    if not out:
        raise SystemExit(f"{folder}: no car-or-print check (*/space_occupancy.json) there")
    return out


def check_left_out(photo: str, checks: list) -> Path | None:
    """The check of `checks` that left out the real photo `photo` is (or was made from: a re-lit or
    re-photographed copy is named after it), else None."""
    stem = Path(photo).stem
    for stems, onnx in checks:
        if any(stem == s or stem.startswith(s + "_") for s in stems):
            return onnx
    return None


def reader_for(reader: Reader, photo: str, checks: list, readers: dict) -> Reader:
    """The reader to read `photo` with: `reader`, or where a check of `checks` left it out
    (`check_left_out`), `reader`'s settings with that check, since the packaged check learnt from
    every development photo."""
    onnx = check_left_out(photo, checks)
    if onnx is None:
        return reader
    if onnx not in readers:
        # A car-colour net trained leaving the same photos out, where one lies beside the check.
        colour = onnx.parent / "space_car_colour.onnx"
        readers[onnx] = Reader(use_classifier=reader.net is not None, settings=reader.settings,
                               model_path=str(reader.net.path) if reader.net else None,
                               occupancy_path=str(onnx), car_colour_path=str(colour) if colour.is_file() else None)
    return readers[onnx]


def read_set(reader: Reader, views, checks: list = (), keep: list | None = None) -> list[dict]:
    """Per photo: its comparison with the truth (labelled.compare_tracks) and what was read (with the
    car-or-print check of `checks` that left the photo out, where one did: `held_out_checks`).
    `keep`: a list each read photo's evidence is added to, for `decide_set`."""
    rows, readers = [], {}
    for name, truth, view in views:
        trace = None if view is None else reader_for(reader, name, checks, readers).trace_view(view, name)
        if trace is not None and keep is not None:
            keep.append(trace.evidence)
        rows.append(photo_row(name, truth, None if trace is None else trace.tracks))
    return rows


def photo_row(name: str, truth: dict, tracks: list | None) -> dict:
    """One photo's row: its tracks compared with the truth, and their owners (None: refused, every
    track of a played board then counted wrong, as eval_real.py counts it)."""
    row = compare_tracks(truth, tracks or [])
    row.update(name=name, owners=None if tracks is None else [t.owner for t in tracks])
    return row


def decides_only(settings: ReaderSettings, shipped: ReaderSettings) -> bool:
    """Whether `settings` differ from `shipped` only in what the decision and the doubt read: the
    evidence (light, samples, net, check, colours) is then the shipped reader's."""
    return all(getattr(settings, f.name) == getattr(shipped, f.name) for f in fields(shipped) if f.name not in DECIDING)


def decide_set(reader: Reader, views, kept: list, checks: list = ()) -> list[dict]:
    """`read_set`'s rows for `reader`, deciding and doubting the evidence `kept` by `read_set` (one per
    read photo of `views`, in order) by `reader`'s settings instead of reading the boards again. A
    photo whose flash fired is read anew (with `checks` as `read_set` takes them): where its print
    shows a veil it is read twice and its doubt weighs both readings (`Reader._veil_off`), which
    its kept evidence, the second reading's, does not hold."""
    evidence, readers, rows = iter(kept), {}, []
    for name, truth, view in views:
        tracks = None
        if view is not None:
            kept_evidence = next(evidence)
            if view.flash_fired and reader.settings.light.flash_veil:
                tracks = reader_for(reader, name, checks, readers).trace_view(view, name).tracks
            else:
                tracks = reader.decide_evidence(kept_evidence, reader.doubt_settings(view.flash_fired))[1]
        rows.append(photo_row(name, truth, tracks))
    return rows


def summary(rows: list[dict]) -> dict:
    """A set's figures: a refused photo counts all its tracks wrong (as eval_real.py counts them)
    but none unmarked (it was not read, and said so)."""
    read = [r for r in rows if r["owners"] is not None]
    played = [r for r in rows if r["played"]]
    empty = [r for r in read if not r["played"]]
    return {"right": sum(r["right"] for r in played), "total": sum(r["total"] for r in played),
            "exact": sum(r["right"] == r["total"] for r in played), "played": len(played),
            "false": sum(r["claims"] for r in empty), "empty": len(empty), "refused": len(rows) - len(read),
            "wrong": sum(len(r["wrong"]) for r in read),
            "unmarked": sum(1 for r in read for w in r["wrong"] if not w[-1]),
            "doubtful": sum(r["doubtful"] for r in read if r["played"]) / max(sum(r["played"] for r in read), 1)}


def cell(s: dict) -> str:
    out = []
    if s["played"]:
        out.append(f"{s['right']}/{s['total']} ({100 * s['right'] / max(s['total'], 1):.2f} %), "
                   f"{s['exact']}/{s['played']} exact")
    if s["empty"]:
        out.append(f"{s['false']} false claims")
    out.append(f"{s['unmarked']} of {s['wrong']} wrong unmarked")
    if s["played"]:
        out.append(f"{s['doubtful']:.1f} doubtful")
    if s["refused"]:
        out.append(f"{s['refused']} refused")
    return ", ".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="labelled photo folders")
    ap.add_argument("--variants", help="comma-separated names (default: all): " + ", ".join(variants()))
    ap.add_argument("--cache", default="/tmp/ttr_ablate_cache", help="where each photo's located board is kept")
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    ap.add_argument("--rows", type=Path, help="keep every photo's comparison here (JSON) for another look")
    ap.add_argument("--model", help="another net (an ONNX file with its config beside it) for every variant")
    ap.add_argument("--held-out-checks", type=Path, metavar="DIR",
                    help="car-or-print checks each trained leaving some real photos out (DIR/*/space_occupancy.*): "
                         "those photos, and sets made from them, are read with the check that left them out")
    args = ap.parse_args(argv)
    checks = held_out_checks(args.held_out_checks)
    every = variants()
    names = ["shipped"] + [n for n in (args.variants.split(",") if args.variants else every) if n != "shipped"]
    unknown = [n for n in names if n not in every]
    if unknown:
        ap.error(f"unknown variant(s) {unknown}")
    plain = Reader()
    sets = {Path(s).name: board_views(Path(s), Path(args.cache) / Path(s).resolve().name, plain) for s in args.sets}
    results: dict = {}
    kept: dict = {set_name: [] for set_name in sets}  # the shipped reader's evidence per photo
    for name in names:
        what, settings, net = every[name]
        reader = Reader(use_classifier=net, settings=settings, model_path=args.model)
        if name != "shipped" and net and decides_only(settings, every["shipped"][1]):
            results[name] = {k: decide_set(reader, views, kept[k], checks) for k, views in sets.items()}
        else:
            results[name] = {k: read_set(reader, views, checks, kept[k] if name == "shipped" else None)
                             for k, views in sets.items()}
        print(f"{name}: " + "; ".join(f"{k}: {cell(summary(v))}" for k, v in results[name].items()), flush=True)
        if args.rows:
            args.rows.write_text(json.dumps(results), encoding="utf-8")
    lines = ["| switched off | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    for name in names:
        lines.append(f"| {every[name][0] if name != 'shipped' else '**nothing (shipped)**'} | "
                     + " | ".join(cell(summary(results[name][k])) for k in sets) + " |")
    for set_name, views in sets.items():
        by_session: dict = {}
        for i, (photo, _, _) in enumerate(views):
            if session_of(photo):
                by_session.setdefault(session_of(photo), []).append(i)
        if not by_session:
            continue
        lines += ["", f"{set_name}, per session (each a left-out fold):", "",
                  "| switched off | " + " | ".join(by_session) + " |", "|---|" + "---|" * len(by_session)]
        for name in names:
            rows = results[name][set_name]
            lines.append(f"| {name} | " + " | ".join(cell(summary([rows[i] for i in idx]))
                                                     for idx in by_session.values()) + " |")
    lines += ["", "What each variant reads otherwise than the shipped reader (photo: track shipped -> variant):", ""]
    board = plain.board
    for name in names[1:]:
        changes = []
        for set_name in sets:
            for a, b in zip(results["shipped"][set_name], results[name][set_name]):
                if a["owners"] is None or b["owners"] is None:
                    continue
                for t, (x, y) in enumerate(zip(a["owners"], b["owners"])):
                    if x != y:
                        tr = board.tracks[t]
                        changes.append(f"{a['name']}: {tr.a}-{tr.b} ({tr.color}) {x} -> {y}")
        lines.append(f"- **{name}** ({len(changes)} track readings change): " + ("; ".join(changes[:40]) or "none")
                     + (f"; and {len(changes) - 40} more" if len(changes) > 40 else ""))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
