"""Hostile input through the real command line: odd paths, broken and odd images, adversarial game
files and calibrations, bad output folders (issue 15).

Every case is made here, in a temporary folder, and run through `app.cli.main(argv)` in one child
process (tests/app/hostile_child.py: imports paid once, each case under a 5 s alarm, the address space
capped at 4 GB as a backstop). The bar for each: it returns (no hang, no traceback), with the exit
status the README gives (2 for a bad input, 1 for `ttr detect` with a photo it could not read),
every line on stderr starting `ttr: `, the message naming what is wrong, within 5 s; and the child's
peak memory over all the cases stays under 500 MB. A few good inputs run beside them, so a check
that refused everything would fail too.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.template import FLAT_PX_PER_MM as PX_PER_MM
from calibration.user import Calibration, EmptyView
from vision.rectify import flattened_size

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "board.jpg"
GAME = ROOT / "examples" / "game.json"
SECONDS = 5  # the bar for a hostile case
GOOD_SECONDS = 60  # a good photo is read in ~1-3 s; a busy CI machine must not turn that into a failure
PEAK_MB = 500

# id -> (argv, exit status, a phrase the message must hold (lower case)); paths filled in below
CASES: dict[str, tuple[list[str], int, str]] = {}


def _case(cid: str, argv: list, rc: int, phrase: str) -> None:
    assert cid not in CASES
    CASES[cid] = ([str(a) for a in argv], rc, phrase.lower())


def _png_header_only(w: int, h: int) -> bytes:
    """A PNG whose header claims w x h pixels, with one tiny IDAT (a decompression-bomb header)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def _build(d: Path) -> None:
    """Write the corpus under `d` and fill CASES."""
    CASES.clear()
    jpg = EXAMPLE.read_bytes()
    rng = np.random.default_rng(15)

    # ---- paths that are not a readable regular file, for every command that reads a file
    fifo = d / "pipe"
    os.mkfifo(fifo)
    folder = d / "a_folder"
    folder.mkdir()
    a_file = d / "a_file"
    a_file.write_text("x")
    loop = d / "loop"
    os.symlink(loop, loop)
    sparse = d / "sparse_200mb.jpg"  # 200 MB by its size, no disk used: refused by the size cap
    with open(sparse, "wb") as f:
        f.truncate(200_000_000)
    link_to_fifo = d / "link_to_pipe.jpg"
    os.symlink(fifo, link_to_fifo)
    paths = {
        "fifo": (fifo, "fifo"), "symlink_to_fifo": (link_to_fifo, "fifo"), "dev_zero": ("/dev/zero", "device"), "dev_urandom": ("/dev/urandom", "device"),
        "folder": (folder, "folder"), "missing": (d / "nope.jpg", "no such file"),
        "under_a_file": (a_file / "x.jpg", "no such file"), "long_name": (d / ("n" * 300 + ".jpg"), "too long"),
        "symlink_loop": (loop, "symbolic links"), "sparse_200mb": (sparse, "too large"),
    }
    out = d / "cal_out"
    for pid, (p, phrase) in paths.items():
        _case(f"detect/{pid}", ["detect", p], 1, phrase)
        _case(f"score/{pid}", ["score", p], 2, phrase)
        _case(f"score_game/{pid}", ["score", EXAMPLE, "--game", p], 2, phrase)
        _case(f"tally/{pid}", ["tally", p], 2, phrase)
        _case(f"calibrate/{pid}", ["calibrate", p, "--out", out], 2, phrase)
        _case(f"calibration/{pid}", ["detect", EXAMPLE, "--calibration", p], 2,
              "no calibration" if pid == "missing" else phrase)

    # ---- images: degenerate shapes, damage, not images
    def img_file(name: str, data: bytes) -> Path:
        (d / name).write_bytes(data)
        return d / name

    images = {
        "2x50000": (img_file("tall.png", cv2.imencode(".png", np.zeros((50000, 2, 3), np.uint8))[1].tobytes()),
                    "64 pixels"),
        "50000x2": (img_file("wide.png", cv2.imencode(".png", np.zeros((2, 50000, 3), np.uint8))[1].tobytes()),
                    "64 pixels"),
        "10x10": (img_file("tiny.jpg", cv2.imencode(".jpg", np.full((10, 10, 3), 99, np.uint8))[1].tobytes()),
                  "64 pixels"),
        "aspect_10": (img_file("strip.png", cv2.imencode(".png", np.full((100, 1000, 3), 99, np.uint8))[1].tobytes()),
                      "aspect ratio"),
        "png_bomb_header": (img_file("bomb.png", _png_header_only(60000, 60000)), "too large"),
        "truncated_jpeg": (img_file("cut.jpg", jpg[: len(jpg) // 2]), "truncated"),
        "damaged_middle": (img_file("damaged.jpg", jpg[: len(jpg) // 2]
                                    + rng.integers(0, 256, 2000, dtype=np.uint8).tobytes()
                                    + jpg[len(jpg) // 2 + 2000:]), "damaged"),
        "text_as_jpg": (img_file("notes.jpg", b"milk, eggs, bread\n" * 10), "not an image"),
        "empty_file": (img_file("empty.jpg", b""), "empty"),
        "jpeg_magic_noise": (img_file("noise.jpg", b"\xff\xd8\xff\xe0" + rng.integers(0, 256, 5000, dtype=np.uint8)
                                      .tobytes()), "damaged"),
    }
    for iid, (p, phrase) in images.items():
        _case(f"detect_image/{iid}", ["detect", p], 1, phrase)
        _case(f"score_image/{iid}", ["score", p], 2, phrase)
        _case(f"calibrate_image/{iid}", ["calibrate", p, "--out", out], 2, phrase)
    noise = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    _case("calibrate/no_board", ["calibrate", img_file("no_board.png", cv2.imencode(".png", noise)[1].tobytes()),
                                 "--out", out], 2, "board")
    _case("calibrate/played_board", ["calibrate", EXAMPLE, "--out", out], 2, "look claimed")

    # ---- game files
    good = json.loads(GAME.read_text())

    def game_file(name: str, text: str | bytes) -> Path:
        p = d / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        return p

    games = {
        "nested_1000_lists": ('{"players": ' + "[" * 1000 + "]" * 1000 + "}", "nested"),
        "nested_5000_objects": ('{"a": ' * 5000 + "1" + "}" * 5000, "nested"),
        "score_5000_digits": ('{"players": [{"color": "red", "score_track": ' + "9" * 5000 + "}]}", "number"),
        "score_huge_int": (json.dumps({"players": [{"color": "red", "score_track": 10 ** 20}]}), "score_track"),
        "nan": ('{"players": [{"color": "red", "score_track": NaN}]}', "number"),
        "city_1mb": (json.dumps({"players": [{"color": "red", "routes": [["D" * 999_000, "Omaha"]]}]}),
                     "no city name is longer"),
        "unknown_cities_10mb": (json.dumps({"players": [{"color": "red", "routes": [["Xq%dz" % i, "Yq%dz" % i]
                                                                                    for i in range(600_000)]}]}),
                                "too large"),
        "unknown_cities_under_cap": (json.dumps({"players": [{"color": c, "routes": [
            ["".join(rng.choice(list("abcdefghijklmnop"), 30)), "Zzyzx%d" % i] for i in range(100)]}
            for c in ("red", "blue", "green", "yellow", "black")]}), "unknown city"),
        "many_players": (json.dumps({"players": [{"color": "red"}] * 50_000}), "at most 5"),
        "players_object": (json.dumps({"players": {"red": {"routes": []}}}), "not an object"),
        "typo_tickts": (json.dumps({"players": [{"color": "red", "tickts": [["Denver", "El Paso"]]}]}),
                        'did you mean "tickets"'),
        "unknown_top_key": (json.dumps({**good, "expansion": "europe"}), 'unknown key "expansion"'),
        "top_level_list": ("[1, 2, 3]", "json object"),
        "latin1": (b'{"players": [{"color": "red", "name": "Ren\xe9"}]}', "not a text file"),
        "binary": (bytes(range(256)) * 10, "not a text file"),
    }
    for gid, (text, phrase) in games.items():
        p = game_file(f"game_{gid}.json", text)
        _case(f"tally_game/{gid}", ["tally", p], 2, phrase)
    for gid in ("nested_1000_lists", "score_5000_digits", "players_object", "typo_tickts"):
        _case(f"score_game_file/{gid}", ["score", EXAMPLE, "--game", d / f"game_{gid}.json"], 2, games[gid][1])
    many = json.loads(GAME.read_text())
    many["players"][0]["tickts"] = []
    many["variantt"] = "1910"
    many["players"][0]["routes"].append(["Denvr", "Omaha"])
    _case("tally_game/every_problem_at_once", ["tally", game_file("game_many.json", json.dumps(many))], 2,
          'unknown key "variantt"')

    # ---- calibrations: one good one, then each part broken
    w, h = flattened_size(PX_PER_MM)
    board = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    view = EmptyView(board, rng.uniform(0, 255, (309, 3)), rng.uniform(0, 20, (309, 3)), "empty.jpg")
    good_cal = d / "cal_good"
    Calibration((view,)).save(good_cal)
    base = json.loads((good_cal / "calibration.json").read_text())
    board_name = base["views"][0]["board"]

    def cal(name: str, change) -> Path:
        c = d / f"cal_{name}"
        c.mkdir()
        (c / board_name).write_bytes((good_cal / board_name).read_bytes())
        data = json.loads(json.dumps(base))
        text = change(data, c)
        if text is not False:
            (c / "calibration.json").write_text(text if isinstance(text, str) else json.dumps(data))
        return c

    def set_lab(value):
        def change(data, c):
            data["views"][0]["lab"] = value
        return change

    cals = {
        "lab_309x2": (cal("309x2", set_lab([[1.0, 2.0]] * 309)), "309x3"),
        "lab_10x3": (cal("10x3", set_lab([[1.0, 2.0, 3.0]] * 10)), "309x3"),
        "lab_text": (cal("text", set_lab("red")), "lab is not a table of numbers"),
        "lab_out_of_range": (cal("range", set_lab([[1e9, 0.0, 0.0]] * 309)), "outside"),
        "views_1000": (cal("1000", lambda data, c: data.__setitem__("views", [{"board": board_name}] * 1000)),
                       "at most 32"),
        "views_1000_full": (cal("1000_full", lambda data, c: data.__setitem__("views", data["views"] * 1000)),
                            "too large"),
        "views_none": (cal("none", lambda data, c: data.__setitem__("views", [])), "no views"),
        "views_object": (cal("obj", lambda data, c: data.__setitem__("views", {"a": 1})), "malformed"),
        "folder_as_json": (cal("folder", lambda data, c: ((c / "calibration.json").mkdir(), False)[1]), "folder"),
        "board_missing": (cal("noboard", lambda data, c: (c / board_name).unlink()), "no such file"),
        "board_wrong_size": (cal("small", lambda data, c: (c / board_name).write_bytes(
            cv2.imencode(".png", board[::2, ::2])[1].tobytes())), "not the flattened board"),
        "board_elsewhere": (cal("escape", lambda data, c: data["views"][0].__setitem__(
            "board", "../../../../../../etc/passwd")), "no such file"),
        "board_fifo": (cal("fifo", lambda data, c: ((c / board_name).unlink(), os.mkfifo(c / board_name))), "fifo"),
        "board_dev_zero": (cal("zero", lambda data, c: ((c / board_name).unlink(),
                                                        os.symlink("/dev/zero", c / board_name))), "device"),
        "deep": (cal("deep", lambda data, c: '{"views": ' + "[" * 3000 + "]" * 3000 + "}"), "nested"),
    }
    nan_lab = [[float("nan"), 0.0, 0.0]] + base["views"][0]["lab"][1:]
    cals["nan"] = (cal("nan", lambda data, c: json.dumps({**data, "views": [{**data["views"][0], "lab": nan_lab}]})),
                   "number")  # json.dumps writes NaN, as a careless tool would
    for cid, (c, phrase) in cals.items():
        _case(f"calibration_file/{cid}", ["detect", EXAMPLE, "--calibration", c], 2, phrase)
        if cid in ("nan", "lab_309x2", "views_1000", "folder_as_json"):
            _case(f"score_calibration/{cid}", ["score", EXAMPLE, "--calibration", c], 2, phrase)

    # ---- output folders
    _case("overlay/a_file", ["detect", EXAMPLE, "--overlay", a_file], 2, "is a file")
    _case("overlay/under_a_file", ["detect", EXAMPLE, "--overlay", a_file / "sub"], 2, "a part of the path is a file")
    _case("overlay/long_name", ["detect", EXAMPLE, "--overlay", d / ("o" * 300)], 2, "too long")
    _case("out/a_file", ["calibrate", EXAMPLE, "--out", a_file], 2, "is a file")
    _case("out/under_a_file", ["calibrate", EXAMPLE, "--out", a_file / "sub"], 2, "a part of the path is a file")
    _case("template_out/under_a_file", ["template", "overlay", EXAMPLE, "--out", a_file / "x.png"], 2, "a_file")
    _case("out/unwritable", ["calibrate", EXAMPLE, "--out", "/proc/ttr-no-such/cal"], 2, "cannot make")

    # ---- good inputs beside them (the checks must not refuse these)
    _case("good/tally", ["tally", GAME], 0, "")
    red = json.loads(GAME.read_text())
    for p in red["players"]:
        p["color"] = p["color"].capitalize()
    _case("good/tally_capitalised_colours", ["tally", game_file("game_Red.json", json.dumps(red))], 0, "")
    _case("good/detect_with_calibration_and_new_overlay_folder",
          ["detect", EXAMPLE, "--calibration", good_cal, "--overlay", d / "new" / "overlays"], 0, "")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    _build(d)
    cases_file = d / "cases.json"
    cases_file.write_text(json.dumps([{"id": k, "argv": v[0], "seconds": GOOD_SECONDS if k.startswith("good/") else SECONDS}
                                      for k, v in CASES.items()]))
    out_file = d / "results.json"
    env = {**os.environ, "HOSTILE_SECONDS": str(SECONDS), "HOSTILE_MAX_GB": "4"}
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("hostile_child.py")), str(cases_file),
                           str(out_file)], cwd=d, env=env, capture_output=True, text=True,
                          timeout=SECONDS * len(CASES) + 3 * GOOD_SECONDS)
    got = {r["id"]: r for r in json.loads(out_file.read_text())} if out_file.exists() else {}
    assert proc.returncode == 0 and len(got) == len(CASES), (proc.returncode, proc.stderr[-3000:])
    return d, got


def test_the_corpus_covers_every_class_of_the_issue(results):
    _, got = results
    prefixes = {k.split("/")[0] for k in got}
    assert {"detect", "score", "score_game", "tally", "calibrate", "calibration", "detect_image",
            "calibrate_image", "tally_game", "score_game_file", "calibration_file", "overlay", "out",
            "template_out", "good"} <= prefixes
    assert len(got) >= 120


def _check(cid: str, r: dict) -> list[str]:
    argv, rc, phrase = CASES[cid]
    bad = []
    if r["status"] != "returned":
        bad.append(f"{r['status']} after {r['seconds']:.1f} s")
    if r["rc"] != rc:
        bad.append(f"exit status {r['rc']}, expected {rc}")
    if "Traceback" in r["stderr"] or "internal error" in (r["stderr"] + r["stdout"]):
        bad.append("a traceback or internal error")
    lines = r["stderr"].splitlines()
    if rc and not lines:
        bad.append("nothing on stderr")
    if any(not line.startswith("ttr: ") for line in lines):
        bad.append("a stderr line not starting 'ttr: '")
    if phrase and phrase not in r["stderr"].lower():
        bad.append(f"no {phrase!r} in the message")
    if r["seconds"] > (GOOD_SECONDS if cid.startswith("good/") else SECONDS):
        bad.append(f"took {r['seconds']:.1f} s")
    return [f"{cid}: {b}: {r['stderr'][-300:]!r}" for b in bad]


def test_every_hostile_case_is_one_clear_line_in_time(results):
    _, got = results
    problems = [p for cid, r in got.items() for p in _check(cid, r)]
    assert not problems, "\n".join(problems)


def test_peak_memory_over_all_cases(results):
    _, got = results
    peak = max(r["peak_mb"] for r in got.values())
    first = next(cid for cid, r in got.items() if r["peak_mb"] == peak)
    assert peak < PEAK_MB, f"peak {peak:.0f} MB, reached by {first}"


def test_messages_are_one_line_each_except_every_problem_of_a_game(results):
    _, got = results
    for cid, r in got.items():
        lines = r["stderr"].splitlines()
        if cid == "tally_game/every_problem_at_once":
            assert lines == ['ttr: error: game file: unknown key "variantt" (did you mean "variant"?)',
                             'ttr: error: player red: unknown key "tickts" (did you mean "tickets"?)',
                             'ttr: error: player red: unknown city "Denvr" (did you mean "Denver"?)'], lines
        elif cid == "tally_game/unknown_cities_under_cap":  # 1000 problems: the first 30, then a count
            assert len(lines) == 31 and lines[-1] == "ttr: error: ... and 970 more problems", lines[-3:]
            assert all("unknown city" in line for line in lines[:-1])
        elif CASES[cid][1] == 2:
            assert len(lines) == 1, (cid, lines)


def test_good_inputs_still_work(results):
    d, got = results
    assert got["good/tally"]["stdout"] == got["good/tally_capitalised_colours"]["stdout"] != ""
    assert (d / "new" / "overlays" / "board_overlay.jpg").stat().st_size > 10_000
    assert not list((d / "new" / "overlays").glob(".tmp-*"))  # atomic write left no temporary file
    assert not (d / "cal_out").exists() or not list((d / "cal_out").iterdir())  # nothing half-written
