"""The fitting and measuring scripts stay alive: each runs through the reader's public trace on a
few renders and prints what it promises. Nothing is written outside the test's folder (no
--write: that would change models/reader_settings.json)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scoring.board import load_board

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-2000:])
    return r


@pytest.fixture(scope="module")
def renders(tmp_path_factory) -> Path:
    """Three labelled renders (one of them an empty board), in the real photos' layout."""
    tmp = tmp_path_factory.mktemp("renders")
    _run(["-c", "import sys; from app.cli import main; sys.exit(main())", "render", "--out", str(tmp / "set"),
          "--count", "3", "--seed", "31", "--size", "1600x1200", "--empty-fraction", "0.34"], cwd=tmp)
    return tmp / "set"


@pytest.fixture(scope="module")
def flash_renders(tmp_path_factory) -> Path:
    """Two labelled renders of other homes under a phone's flash (their EXIF says it fired)."""
    tmp = tmp_path_factory.mktemp("flash_renders")
    _run(["-c", "import sys; from app.cli import main; sys.exit(main())", "render", "--out", str(tmp / "set"),
          "--count", "2", "--seed", "31", "--size", "1600x1200", "--world", "varied", "--light", "flash"], cwd=tmp)
    return tmp / "set"


def test_fit_doubt_fits_and_checks_on_renders(renders, tmp_path):
    r = _run([str(ROOT / "benchmarks" / "fit_doubt.py"), "--fit", str(renders), "--check", str(renders),
              "--cache", str(tmp_path / "cache")], cwd=tmp_path)
    out = r.stdout
    assert "fitted on 3 photos, 300 tracks" in out or "fitted on 2 photos, 200 tracks" in out, out[:2000]
    summaries = [line for line in out.splitlines() if "all: SUMMARY photos=" in line]
    assert summaries and all("wrong_marked_doubtful=" in line for line in summaries)
    assert len(list((tmp_path / "cache").rglob("*.npz"))) >= 2  # each read photo's evidence kept


def test_fit_doubt_hard_only_keeps_the_calibration_and_the_mark(renders, tmp_path):
    r = _run([str(ROOT / "benchmarks" / "fit_doubt.py"), "--fit", str(renders), "--hard-only",
              "--cache", str(tmp_path / "cache")], cwd=tmp_path)
    fitted = re.search(r"^fitted on .*?(bias=.*? below=\S+) hard_below=(\S+)", r.stdout, re.M)
    shipped = re.search(r"^shipped: (bias=.*? below=\S+) hard_below=", r.stdout, re.M)
    assert fitted and shipped, r.stdout[:2000]
    assert fitted.group(1) == shipped.group(1)  # only the hard photo's standard is fitted
    below = float(fitted.group(1).rsplit("=", 1)[1])
    assert below <= float(fitted.group(2)) <= 0.999


def test_fit_calibration_gate_fits_a_threshold_on_a_rendered_board(tmp_path):
    rows = tmp_path / "rows.jsonl"
    r = _run([str(ROOT / "benchmarks" / "fit_calibration_gate.py"), "--boards", "1", "--played", "1",
              "--seed", "7100", "--rows", str(rows)], cwd=tmp_path)
    fit = [line for line in r.stdout.splitlines() if line.startswith("FIT max_false_change=")]
    assert len(fit) == 1
    threshold = float(fit[0].split("=")[1].split()[0])
    assert 0.0 <= threshold <= 0.5
    read = [json.loads(line) for line in rows.read_text().splitlines()]
    # two empty photos in other lights and three of the played game: whatever the locator reads
    assert read and {r["board"] for r in read} == {7100}
    assert all(0.0 <= r["share"] <= 1.0 and len(r["base"]) == 2 for r in read)


def test_ablate_switches_a_rule_off_and_writes_its_row(renders, tmp_path):
    md = tmp_path / "table.md"
    r = _run([str(ROOT / "benchmarks" / "ablate.py"), str(renders), "--variants", "shipped,no glare doubt",
              "--cache", str(tmp_path / "cache"), "--markdown", str(md)], cwd=tmp_path)
    table = md.read_text()
    assert "| **nothing (shipped)** |" in table
    assert "| a track under glare doubted by its own calibration |" in table
    assert re.search(r"\| \d+/200 \(", table)  # the two played boards, a hundred tracks each
    assert "false claims" in table  # and the empty one
    assert r.stdout.count("shipped:") == 1


@pytest.mark.parametrize("photos", ["renders", "flash_renders"])
def test_ablate_decides_the_shipped_evidence_again_as_reading_anew_would(photos, request, tmp_path):
    """A variant that changes only the decision and the doubt is measured on the shipped reader's
    evidence, and that gives the rows reading every board again with it gives: under a flash too,
    where a board is read twice (its print's veil taken off) and the doubt weighs both readings."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dataclasses import replace

    from ablate import board_views, decide_set, decides_only, read_set, variants

    from vision.read import Reader
    from vision.settings import ReaderSettings

    shipped = ReaderSettings()
    surer = replace(shipped, doubt=replace(shipped.doubt, below=0.99999),
                    doubt_flash=replace(shipped.doubt_flash, below=0.99999))
    assert decides_only(surer, shipped) and decides_only(variants()["no spill"][1], shipped)
    assert not decides_only(variants()["no glare"][1], shipped)  # the glare moves the colours too
    views = board_views(request.getfixturevalue(photos), tmp_path / "cache", Reader())
    kept: list = []
    first = read_set(Reader(settings=shipped), views, (), kept)
    assert len(kept) == sum(v is not None for _, _, v in views) >= 2
    assert decide_set(Reader(settings=shipped), views, kept) == first
    anew = read_set(Reader(settings=surer), views)
    assert decide_set(Reader(settings=surer), views, kept) == anew
    # not the shipped reader compared with itself: the surer standard marks more tracks
    assert sum(r["doubtful"] for r in anew) > sum(r["doubtful"] for r in first)


def test_held_out_checks_read_a_photo_and_its_copies_with_the_check_that_left_it_out(tmp_path):
    """A development photo, and a re-lit copy named after it, are read with the check trained without
    it; any other photo with the reader as given."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from ablate import held_out_checks, reader_for

    from vision.evidence.net import default_model_paths, load_occupancy
    from vision.read import Reader

    if load_occupancy() is None:
        pytest.skip("no packaged car-or-print check")
    onnx, cfg = default_model_paths("space_occupancy")
    for name, left_out in (("AB", ["IMG_4066_small", "IMG_4066_rectified"]), ("DD2", ["IMG_4134"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / onnx.name).write_bytes(onnx.read_bytes())
        config = json.loads(cfg.read_text())
        config["real"]["photos_left_out"] = [f"{s}.jpg" for s in left_out]
        (tmp_path / name / cfg.name).write_text(json.dumps(config))
    checks = held_out_checks(tmp_path)
    assert [len(stems) for stems, _ in checks] == [2, 1]
    plain, readers = Reader(), {}
    for photo, fold in (("IMG_4066_small.jpg", "AB"), ("IMG_4134_rl9128_01.jpg", "DD2"), ("IMG_4134.jpg", "DD2")):
        assert reader_for(plain, photo, checks, readers).occupancy.path == tmp_path / fold / onnx.name
    assert reader_for(plain, "IMG_41340.jpg", checks, readers) is plain
    assert reader_for(plain, "synthetic_003.jpg", checks, readers) is plain
    assert len(readers) == 2  # one reader per check, made once


def test_own_print_measures_every_source_on_the_spaces_of_a_players_print(renders, tmp_path):
    r = _run([str(ROOT / "benchmarks" / "own_print.py"), str(renders), "--cache", str(tmp_path / "cache")],
             cwd=tmp_path)
    head = re.search(r"set: (\d+) spaces, (\d+) with cars", r.stdout)
    assert head and 0 < int(head.group(2)) < int(head.group(1))  # two played boards: print and cars alike
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("  ")]
    assert [" ".join(row[:-12]) for row in rows] == ["net", "colours", "check", "fused", "lightness spread", "edges", "shadow"]
    for row in rows:
        assert row[-2] == "all" and 0.0 <= float(row[-1]) <= 1.0


def test_render_pairs_reads_two_cameras_alone_and_together(tmp_path):
    r = _run([str(ROOT / "benchmarks" / "render_pairs.py"), "--seed", "8600", "--count", "2",
              "--against", "several.by_certainty=false"], cwd=tmp_path)
    lines = [line for line in r.stdout.splitlines() if line.startswith("SUMMARY ")]
    assert [line.split(":")[0] for line in lines] == ["SUMMARY shipped", "SUMMARY several.by_certainty=false"]
    for line in lines:
        f = dict(kv.split("=") for kv in line.split(": ", 1)[1].split())
        n = int(f["pairs"])
        assert n >= 1  # seed 8600: its second position is read
        assert n == sum(1 for x in r.stdout.splitlines() if x.startswith("position ") and "together" in x)
        assert int(f["worse_alone"]) <= int(f["better_alone"]) <= 100 * n and int(f["together"]) <= 100 * n
    assert not list(tmp_path.iterdir())  # its photos lived in a folder of its own, now gone


def test_render_pairs_weighs_a_flash_photo_against_one_without(tmp_path):
    r = _run([str(ROOT / "benchmarks" / "render_pairs.py"), "--seed", "8600", "--count", "2", "--second-flash",
              "--against", "several.tilt_power=1.0", "--against", "several.by_certainty=false"], cwd=tmp_path)
    summaries = [line.split(":")[0] for line in r.stdout.splitlines() if line.startswith("SUMMARY ")]
    assert summaries == ["SUMMARY shipped", "SUMMARY several.tilt_power=1.0", "SUMMARY several.by_certainty=false"]
    read = [line for line in r.stdout.splitlines() if line.startswith("position ") and "together" in line]
    assert read and all(": flash no / yes, " in line for line in read)  # as each photo's EXIF says


def test_the_reading_path_names_its_numbers():
    """At most 8 bare numbers per 100 lines in the reading path (benchmarks/count_literals.py): the
    rest are named settings with their reasons."""
    r = _run([str(ROOT / "benchmarks" / "count_literals.py"), str(ROOT / "vision")], cwd=ROOT)
    total = r.stdout.splitlines()[-1]
    per_100 = float(re.search(r"([\d.]+) per 100 lines", total).group(1))
    assert per_100 <= 8.0, total


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc (Linux)")
def test_bench_detect_measures_the_readers_own_peak_memory_not_its_parents(tmp_path):
    """The bench process holds ~600 MB (the reader, the photos) when it starts `ttr detect`: the
    peak it reports is the child's own, not that."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_detect
    finally:
        sys.path.pop(0)
    held = np.ones(600 * 2**20, np.uint8)  # pages touched: resident in this process
    _, peak = bench_detect.run_detect(["--json", str(tmp_path / "no_such_photo.jpg")])
    assert held.sum() == held.size
    assert 20 < peak < 400


def test_results_sets_aside_only_refused_boards_too_small_for_the_dots():
    """`results.too_small`: a refused photo whose board, by its true corners, is coarser than the
    city dots need; not a refused board that was large enough, nor one that was read."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from results import too_small

    from vision.locate import LocateConfig
    from vision.rectify import BOARD_MM

    def corners(px_per_mm):
        w, h = BOARD_MM[0] * px_per_mm, BOARD_MM[1] * px_per_mm
        return [[0, 0], [w, 0], [w, h], [0, h]]

    bound = LocateConfig().min_px_per_mm
    views = [("tiny.jpg", {"corners": corners(bound * 0.9)}, None),
             ("large.jpg", {"corners": corners(bound * 1.1)}, None),
             ("read.jpg", {"corners": corners(bound * 0.5)}, object()),
             ("no board.jpg", {"corners": None}, None)]
    assert too_small(views) == {"tiny.jpg"}


def test_locate_sets_gives_each_photo_a_verdict(renders, tmp_path):
    rows = tmp_path / "rows.json"
    r = _run([str(ROOT / "benchmarks" / "locate_sets.py"), str(renders), "--rows", str(rows)], cwd=tmp_path)
    line = [x for x in r.stdout.splitlines() if "SUMMARY" in x]
    assert len(line) == 1 and "photos=3" in line[0], r.stdout
    verdicts = json.loads(rows.read_text())[renders.name]
    assert len(verdicts) == 3 and all(v == "right" or v.startswith(("refused", "wrong")) for v in verdicts.values())


def test_doubt_margins_counts_every_track_of_the_played_boards_by_contest(renders, tmp_path):
    r = _run([str(ROOT / "benchmarks" / "doubt_margins.py"), str(renders), "--cache", str(tmp_path / "cache"),
              "--standards", "0.5,0.99,0.999999", "--by-track", "100"], cwd=tmp_path)
    # Per standard: a surer standard marks at least as many tracks and leaves no more wrong ones
    # unmarked; the surest marks nearly every track of the two played boards.
    standards = re.findall(r"STANDARD set=\S+ below=([\d.]+) doubtful_per_played_photo=([\d.]+) wrong_unmarked=(\d+)",
                           r.stdout)
    assert [b for b, _, _ in standards] == ["0.5", "0.99", "0.999999"], r.stdout
    marks = [float(d) for _, d, _ in standards]
    unmarked = [int(u) for _, _, u in standards]
    assert marks == sorted(marks) and unmarked == sorted(unmarked, reverse=True)
    assert marks[-1] > 50 and unmarked[-1] == 0
    line = [x for x in r.stdout.splitlines() if x.startswith("SUMMARY set=")]
    assert len(line) == 1 and "played_photos=2 " in line[0]
    kinds = re.findall(r"(\w+)=(\d+):under=(\d+)\([\d.]+%\):doubles_under=(\d+):wrong_under=(\d+):wrong_above=(\d+)",
                       line[0])
    assert sum(int(k[1]) for k in kinds) == 200  # the two played boards, a hundred tracks each
    assert all(int(lanes) <= int(under) <= int(n) and int(w) <= int(under) for _, n, under, lanes, w, _ in kinds)
    leans = re.findall(r"(beyond|side|before):(\d+)/(\d+)", line[0].split("doubles_under_by_lean=")[1])
    assert [name for name, _, _ in leans] == ["beyond", "side", "before"]
    assert sum(int(n) for _, _, n in leans) == 2 * int(np.sum(np.array(load_board().double_ids) >= 0))  # every lane, twice
    assert sum(int(u) for _, u, _ in leans) == sum(int(k[3]) for k in kinds)  # the doubles under the mark, by lean
    assert all(int(u) <= int(n) for _, u, n in leans)
    # By track: every track under the mark once, most marked first, no more wrong than marked.
    tracks = re.findall(r"TRACK set=\S+ track=(\S+) under=(\d+) kind=(\w+) read=(\w+) runner_up=(\w+) wrong=(\d+)",
                        r.stdout)
    assert sum(int(u) for _, u, *_ in tracks) == sum(int(k[2]) for k in kinds)
    assert [int(u) for _, u, *_ in tracks] == sorted((int(u) for _, u, *_ in tracks), reverse=True)
    assert all(0 <= int(w) <= int(u) <= 2 and read != runner for _, u, _, read, runner, w in tracks)


def test_by_track_lists_the_tracks_marked_on_most_photos_first():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from doubt_margins import by_track

    from vision.reading import SPACE_CLASSES

    board = load_board()
    blue, black, empty = (SPACE_CLASSES.index(c) for c in ("blue", "black", "empty"))
    # (kind, margin, mark, wrong, lean, track, read, runner): track 5 under the mark on three
    # photos (once read wrong, once as another contest), track 9 on one, track 7 never.
    rows = [(1, 0.5, 1.0, False, None, 5, blue, black), (1, 0.2, 1.0, True, None, 5, blue, black),
            (2, 0.9, 1.0, False, None, 5, blue, empty), (2, 0.1, 1.0, False, None, 9, empty, blue),
            (1, 3.0, 1.0, True, None, 7, blue, black), (1, 1.0, 1.0, False, None, 9, black, blue)]
    lines = by_track(rows, board, 5)
    assert len(lines) == 2
    t5, t9 = board.tracks[5], board.tracks[9]
    assert lines[0].startswith(f"track={t5.a.replace(' ', '_')}-{t5.b.replace(' ', '_')}({t5.color}) under=3 ")
    assert lines[0].endswith("kind=two_colours read=blue runner_up=black wrong=1")
    assert lines[1] == (f"track={t9.a.replace(' ', '_')}-{t9.b.replace(' ', '_')}({t9.color}) under=1 "
                        "kind=car_or_not read=empty runner_up=blue wrong=0")
    assert by_track(rows, board, 1) == lines[:1]


def test_a_neighbours_cars_lean_towards_the_lane_seen_beyond_them():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from doubt_margins import lean_towards

    neighbour, lane = np.array([100.0, 50.0]), np.array([109.0, 50.0])  # lanes 9 mm apart
    from_left = lean_towards(lane, neighbour, np.array([0.0, 50.0, 500.0]))
    assert from_left > 0  # the lane lies beyond its neighbour: the car tops lean over it
    assert lean_towards(neighbour, lane, np.array([0.0, 50.0, 500.0])) < 0  # and away from the nearer lane
    assert lean_towards(lane, neighbour, np.array([104.5, 50.0, 500.0])) == pytest.approx(0.0, abs=0.02)  # above
    assert lean_towards(lane, neighbour, np.array([0.0, 50.0, 250.0])) > 2 * from_left * 0.99  # lower: more
    assert lean_towards(lane, neighbour, None) == 0.0


def test_the_marks_margin_is_where_a_track_reaches_the_standard():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from doubt_margins import mark_margin

    from vision.decide.doubt import DOUBT_KINDS, track_confidence
    from vision.settings import DoubtSettings

    cfg = DoubtSettings()
    for kind in range(len(DOUBT_KINDS)):
        m = mark_margin(kind, cfg)
        for length in (1, 4):
            assert track_confidence(m * length, length, kind, cfg=cfg) == pytest.approx(cfg.below, abs=1e-9)
            assert track_confidence((m - 0.05) * length, length, kind, cfg=cfg) < cfg.below


def test_fit_doubt_fits_one_contest_kind_keeping_the_rest_as_shipped():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_doubt import fit

    from vision.decide.doubt import DOUBT_KINDS, WHICH_LANE
    from vision.settings import DoubtSettings

    rng = np.random.default_rng(0)
    n = 4000
    kind = rng.integers(0, len(DOUBT_KINDS), n)
    margin = rng.uniform(-1.0, 8.0, n)
    wrong = rng.random(n) < 1.0 / (1.0 + np.exp(3.0 * margin / 2))  # more wrong at small margins
    rows = {"margin": margin, "length": np.full(n, 2), "kind": kind, "wrong": wrong, "glared": np.zeros(n, bool),
            "photo": np.repeat(np.arange(40), n // 40).astype(str), "played": np.ones(n, bool)}
    shipped = DoubtSettings()
    one = fit(rows, shipped, kinds=[WHICH_LANE])
    every = fit(rows, shipped)
    others = [k for k in range(len(DOUBT_KINDS)) if k != WHICH_LANE]
    assert [one.bias[k] for k in others] == [shipped.bias[k] for k in others]
    assert [one.slope[k] for k in others] == [shipped.slope[k] for k in others]
    assert (one.below, one.glare_bias, one.glare_slope) == (shipped.below, shipped.glare_bias, shipped.glare_slope)
    # ... and the kind fitted is the one a whole fit gives it, not the shipped one.
    assert (one.bias[WHICH_LANE], one.slope[WHICH_LANE]) == (every.bias[WHICH_LANE], every.slope[WHICH_LANE])
    assert one.slope[WHICH_LANE] > 0 and every.bias[0] != shipped.bias[0]


def test_fit_doubt_fits_the_glare_on_its_margin_keeping_the_kinds_as_shipped():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_doubt import fit

    from vision.decide.doubt import DOUBT_KINDS
    from vision.settings import DoubtSettings

    rng = np.random.default_rng(1)
    n = 4000
    margin = rng.uniform(-1.0, 8.0, n)
    glared = rng.random(n) < 0.3
    # Under glare, more wrong at the same margin (and fewer at a wide one).
    wrong = rng.random(n) < 1.0 / (1.0 + np.exp(3.0 * margin / 2 - np.where(glared, 2.0, 0.0)))
    rows = {"margin": margin, "length": np.full(n, 2), "kind": rng.integers(0, len(DOUBT_KINDS), n), "wrong": wrong,
            "glared": glared, "photo": np.repeat(np.arange(40), n // 40).astype(str), "played": np.ones(n, bool)}
    shipped = DoubtSettings()
    only = fit(rows, shipped, kinds=[], glare=True)
    every = fit(rows, shipped)
    assert (only.bias, only.slope, only.below) == (shipped.bias, shipped.slope, shipped.below)
    assert (only.glare_bias, only.glare_slope) == (every.glare_bias, every.glare_slope)
    assert only.glare_slope > 0 and (only.glare_bias, only.glare_slope) != (shipped.glare_bias, shipped.glare_slope)
    # The glare's calibration says more wrong than the kinds' at a narrow margin.
    m = 1.0
    assert only.glare_bias - only.glare_slope * m > max(b - s * m for b, s in zip(every.bias, every.slope))


def test_fit_doubt_counts_a_weighed_track_as_that_many():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_doubt import logistic

    rng = np.random.default_rng(2)
    x = rng.uniform(-1.0, 4.0, 300)
    y = (rng.random(300) < 1.0 / (1.0 + np.exp(2.0 * x))).astype(float)
    twice = logistic(np.concatenate([x, x[:100]]), np.concatenate([y, y[:100]]))
    weighed = logistic(x, y, weight=np.r_[np.full(100, 2.0), np.ones(200)])
    assert weighed == pytest.approx(twice, abs=1e-6)
    assert weighed != pytest.approx(logistic(x, y), abs=1e-3)


def test_fit_doubt_folds_leave_out_each_sessions_own_copies(capsys):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_doubt import fit, folds, subset, with_copies

    from vision.decide.doubt import DOUBT_KINDS
    from vision.settings import DoubtSettings

    rng = np.random.default_rng(3)

    def rows(photos: list[str], wrong_scale: float) -> dict:
        n = 100 * len(photos)
        margin = rng.uniform(-1.0, 6.0, n)
        return {"margin": margin, "length": np.full(n, 2), "kind": np.full(n, DOUBT_KINDS.index("two colours")),
                "wrong": rng.random(n) < 1.0 / (1.0 + np.exp(wrong_scale * margin)), "glared": np.zeros(n, bool),
                "photo": np.repeat(photos, 100), "played": np.ones(n, bool)}

    renders = rows([f"render_{i}" for i in range(8)], 1.5)
    # The D2 session's copies misread far more often than the other sessions': its fold must not see them.
    d2 = rows([f"IMG_4156_rl_0{i}" for i in range(4)], 0.3)
    others = rows([f"IMG_4066_rl_0{i}" for i in range(4)], 3.0)
    copies = {k: np.concatenate([d2[k], others[k]]) for k in d2}
    shipped = DoubtSettings()
    folds(renders, copies, {}, shipped, ["two colours"])
    out = capsys.readouterr().out
    kind = [DOUBT_KINDS.index("two colours")]
    without_d2 = fit(with_copies(renders, subset(copies, np.arange(len(copies["wrong"])) >= len(d2["wrong"]))),
                     shipped, renders, hard=False, kinds=kind)
    every = fit(with_copies(renders, copies), shipped, renders, hard=False, kinds=kind)
    line = next(ln for ln in out.splitlines() if ln.startswith("fold D2:"))
    assert f"bias={without_d2.bias}" in line and f"bias={every.bias}" not in line
    assert "D2 its copies (fold): SUMMARY photos=4 " in out and "A+B its copies (fold): SUMMARY photos=4 " in out


def test_fit_doubt_refitting_one_kind_keeps_what_the_others_were_fitted_by():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_doubt import said_by_kind, said_merged

    was = "own print, two colours, car or not: fit A | which lane: fit B"
    merged = said_merged(was, ["two colours"], "fit C")
    assert merged == "own print, car or not: fit A | two colours: fit C | which lane: fit B"
    assert said_by_kind(merged) == {"own print": "fit A", "two colours": "fit C", "car or not": "fit A",
                                    "which lane": "fit B"}
    # A saying for every kind (its own text may hold ": "), and every kind fitted again at once.
    assert said_merged("as doubt.bias: the mark", ["which lane"], "fit D") == \
        "own print, two colours, car or not: as doubt.bias: the mark | which lane: fit D"
    assert said_merged(was, ["own print", "two colours", "car or not", "which lane"], "fit E") == "fit E"


def test_phone_look_finishes_each_photo_again_keeping_its_flash_record(tmp_path):
    src = tmp_path / "src"
    _run(["-c", "import sys; from app.cli import main; sys.exit(main())", "render", "--out", str(src),
          "--count", "1", "--seed", "9701", "--world", "varied", "--light", "flash", "--size", "1600x1200"], cwd=tmp_path)
    _run([str(ROOT / "benchmarks" / "phone_look.py"), str(src), str(tmp_path / "out"), "--look", "vivid hdr"],
         cwd=tmp_path)
    from vision.image_io import load_photo, read_header
    (photo,) = sorted(src.glob("*.jpg"))
    again = tmp_path / "out" / photo.name
    assert read_header(str(photo)).flash_fired and read_header(str(again)).flash_fired
    truth = json.loads((tmp_path / "out" / "gt" / f"{photo.stem}.json").read_text())
    assert truth["look"]["kind"] == "vivid hdr" and truth["corners"] == json.loads(
        (src / "gt" / f"{photo.stem}.json").read_text())["corners"]
    assert np.abs(load_photo(str(again)).astype(int) - load_photo(str(photo)).astype(int)).mean() > 2


def test_fit_fuse_weighs_the_source_that_tells_the_owner_above_one_that_does_not():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_fuse import as_shipped, fit_weights, log_loss, right

    from vision.settings import FuseSettings

    rng = np.random.default_rng(5)
    n, owners = 3000, rng.integers(0, 6, 3000)
    x = rng.normal(0.0, 3.0, (n, 4, 6))  # four sources, each a log-likelihood per owner
    x[np.arange(n), 2, owners] += 4.0  # the third tells the owner; the others say nothing
    x[np.arange(n), 3, owners] += 1.0  # the fourth a little
    w = fit_weights(x, owners, temperature=2.0)
    assert np.all(w >= 0) and w[2] > w[3] > max(w[0], w[1])
    alike = np.ones(4)
    assert log_loss(w, x, owners, 2.0) < log_loss(alike, x, owners, 2.0)
    assert right(w, x, owners) >= right(alike, x, owners)
    shipped = as_shipped(w, FuseSettings())
    assert list(shipped) == ["colour", "net", "occupancy", "car_colour"]
    assert sum(shipped.values()) == pytest.approx(4.0, abs=0.03)  # the usual photos' sum: the doubt's range


def test_fit_fuse_fits_the_flash_weights_on_flash_renders(flash_renders, tmp_path):
    r = _run([str(ROOT / "benchmarks" / "fit_fuse.py"), "--fit", str(flash_renders), "--check", str(flash_renders),
              "--cache", str(tmp_path / "cache")], cwd=tmp_path)
    fitted = re.search(r"^fitted on 1 folders, (\d+) tracks: colour=(\S+) net=(\S+) occupancy=(\S+) car_colour=(\S+)",
                       r.stdout, re.M)
    assert fitted, r.stdout[:2000]
    assert int(fitted.group(1)) in (100, 200)  # both photos' flash fired; one board may be refused
    weights = [float(v) for v in fitted.groups()[1:]]
    assert all(v >= 0 for v in weights) and sum(weights) == pytest.approx(4.0, abs=0.03)
    assert re.search(r"^  set: \d+ tracks, log loss \S+ alike -> \S+ fitted", r.stdout, re.M), r.stdout[:2000]
    assert len(list((tmp_path / "cache").rglob("*.npz"))) >= 1


@pytest.mark.parametrize("script", ["fit_fuse.py", "fit_doubt.py"])
def test_a_fitting_script_refuses_a_folder_that_is_not_there_in_one_line(script, tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--fit", str(tmp_path / "gone"),
                        "--cache", str(tmp_path / "cache")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].endswith(f"{tmp_path / 'gone'}: no such folder")
    assert not (tmp_path / "cache").exists()


def test_fit_few_cars_counts_the_game_models_players_and_ends_its_table_where_they_are_common(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fit_few_cars import LAST_SHARE, few_cars_prior

    cars = np.array([5] + [20] * 9 + [40] * 90)  # 1 % with 5 cars, 10 % with 20 or fewer
    prior = few_cars_prior(cars)
    assert len(prior) == 21 and prior[:5] == [round(float(np.log(100)), 2)] * 5  # none seen: as the rarest
    assert prior[5] == prior[19] == round(float(np.log(100)), 2) and prior[20] == round(float(np.log(10)), 2)
    assert float((cars <= len(prior) - 1).mean()) >= LAST_SHARE > float((cars <= len(prior) - 2).mean())
    r = _run([str(ROOT / "benchmarks" / "fit_few_cars.py"), "--positions", "20"], cwd=tmp_path)
    fit = re.search(r"^FIT few_cars_prior=\[([^\]]*)\] \(players=(\d+), games=20\)$", r.stdout, re.M)
    values = [float(v) for v in fit.group(1).split(",")]
    assert all(a >= b for a, b in zip(values, values[1:])) and values[-1] < 3.0 <= values[-2]
    assert r.returncode == 0 and not list(tmp_path.iterdir())


def test_the_packaged_few_cars_prior_falls_as_the_cars_grow():
    from vision.settings import DecideSettings

    prior = DecideSettings().few_cars_prior
    assert all(a >= b > 0 for a, b in zip(prior, prior[1:])) and 2.0 < prior[-1] < 3.0
