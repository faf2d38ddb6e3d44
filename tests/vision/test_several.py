"""Several photos of one board read together (vision.several): renders of one position from two
cameras read as one board, a photo of another position set aside, each photo weighed by how well
it sees each space, and `ttr detect --same-board` on the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from scoring.board import load_board
from vision.fuse import space_probs
from vision.read import Reader
from vision.several import PhotoPart, combine, disagreeing_tracks, view_weights
from vision.synth.positions import random_position
from vision.synth.render import render_photo

BOARD = load_board()


@pytest.fixture(scope="module")
def reader():
    return Reader()


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """Two photos of one position from two cameras, and one of another position (files)."""
    folder = tmp_path_factory.mktemp("same_board")
    claims = random_position(np.random.default_rng(40), BOARD, 4)
    other = random_position(np.random.default_rng(41), BOARD, 4)
    out = {}
    for name, c, seed in (("a", claims, 1), ("b", claims, 2), ("other", other, 3)):
        p = render_photo(np.random.default_rng(seed), c, (1600, 1200))
        (folder / f"{name}.jpg").write_bytes(p.jpeg)
        out[name] = str(folder / f"{name}.jpg")
    out["truth"] = {t: o for o, ids in claims.items() for t in ids}
    return out


@pytest.fixture(scope="module")
def parts(reader, photos):
    return {k: PhotoPart(photos[k], reader.trace_path(photos[k])) for k in ("a", "b", "other")}


def _right(reading, truth):
    return sum(t.owner == truth.get(t.track_id) for t in reading.tracks)


def test_two_photos_of_one_position_read_as_one_board(reader, photos, parts):
    both = combine(reader, [parts["a"], parts["b"]])
    assert [p.read for p in both.photos] == [True, True] and both.images == [photos["a"], photos["b"]]
    alone = [_right(parts[k].trace.reading, photos["truth"]) for k in ("a", "b")]
    assert _right(both.reading, photos["truth"]) >= max(alone)
    d = both.to_dict()
    assert d["images"] == both.images and len(d["tracks"]) == len(BOARD.tracks)
    assert all("board" in p and "warnings" in p for p in d["photos"])


def test_a_photo_of_another_position_is_set_aside_and_the_others_read(reader, photos, parts):
    both = combine(reader, [parts["a"], parts["other"], parts["b"]])
    assert [p.read for p in both.photos] == [True, False, True]
    assert "another game position" in both.photos[1].error  # against a or b, which agree
    assert photos["a"] in both.photos[1].error or photos["b"] in both.photos[1].error
    assert any("not read with the others" in str(w) for w in both.reading.warnings)
    alone = combine(reader, [parts["a"], parts["b"]]).reading
    assert [t.owner for t in both.reading.tracks] == [t.owner for t in alone.tracks]  # never mixed in
    assert parts["other"].read  # the caller's parts are left as they were


def test_a_photo_misread_throughout_is_set_aside_whichever_comes_first(reader, photos, parts):
    a, b = parts["a"].trace, parts["b"].trace
    sure = [t.track_id for t in a.tracks if t.owner and not t.doubtful][:8]
    misread = list(b.tracks)
    for tid in sure:  # photo b reads nobody where a is sure of cars, and doubts it
        misread[tid] = replace(misread[tid], owner=None, doubtful=True, confidence=0.3)
    b_bad = PhotoPart(parts["b"].image, replace(b, tracks=misread))
    got = combine(reader, [b_bad, parts["a"]])
    assert [p.read for p in got.photos] == [False, True] and photos["a"] in got.photos[0].error
    assert [t.owner for t in got.reading.tracks] == [t.owner for t in a.tracks]  # a alone
    kept = combine(reader, [b_bad, parts["a"]], anchor=0)  # the app's game photo stays the reference
    assert [p.read for p in kept.photos] == [True, False] and photos["b"] in kept.photos[1].error


def test_a_track_a_sure_photo_reads_otherwise_is_doubtful_and_says_so(reader, parts):
    a, b = parts["a"].trace, parts["b"].trace
    tid = next(t.track_id for t in a.tracks if t.owner and not t.doubtful)
    moved = list(b.tracks)
    moved[tid] = replace(moved[tid], owner=None, doubtful=False, reason="")  # photo b sure of nobody there
    before = {t.track_id for t in disagreeing_tracks(a.tracks, b.tracks, reader)}
    assert tid not in before
    assert {t.track_id for t in disagreeing_tracks(a.tracks, moved, reader)} == before | {tid}
    b_moved = PhotoPart(parts["b"].image, replace(b, tracks=moved))
    got = combine(reader, [parts["a"], b_moved]).reading.tracks[tid]
    assert got.doubtful and got.reason.startswith("the photos disagree:") and "nobody" in got.reason


def test_a_sure_claim_the_other_photo_doubts_away_counts_against_one_position(reader, parts):
    # A moved double seen coarsely: photo b reads nobody on a lane photo a is sure of, and doubts it.
    a, b = parts["a"].trace, parts["b"].trace
    tid = next(t.track_id for t in a.tracks if t.owner and not t.doubtful)
    moved = list(b.tracks)
    moved[tid] = replace(moved[tid], owner=None, doubtful=True, reason="")
    before = {t.track_id for t in disagreeing_tracks(a.tracks, b.tracks, reader)}
    assert tid not in before
    assert {t.track_id for t in disagreeing_tracks(a.tracks, moved, reader)} == before | {tid}
    # Both unsure of what they read otherwise: no contradiction.
    unsure_a = list(a.tracks)
    unsure_a[tid] = replace(unsure_a[tid], doubtful=True)
    assert tid not in {t.track_id for t in disagreeing_tracks(unsure_a, moved, reader)}


def test_each_photo_counts_where_it_sees_well(parts):
    trace = parts["a"].trace
    w = view_weights(trace)
    assert w.shape == (len(trace.lit.quads_px),) and np.all(w > 0) and np.all(w <= 1)
    glared = replace(trace, evidence=replace(trace.evidence, glare=np.ones_like(trace.evidence.glare)))
    assert np.all(view_weights(glared) < w)
    unsure = replace(trace, view=replace(trace.view, location=replace(trace.view.location, confidence=0.3)))
    assert np.allclose(view_weights(unsure), 0.3 * w)
    coarse = replace(trace, view=replace(trace.view, seen_px_per_mm=0.5))
    assert np.all(view_weights(coarse) < w)


def test_a_photo_unsure_of_a_track_gives_way_there_to_one_that_is_sure(reader, parts):
    a, b = parts["a"].trace, parts["b"].trace
    tid = next(t.track_id for t in a.tracks if t.owner and not t.doubtful)
    rows = reader.rows[tid]
    ll = b.evidence.loglik.copy()
    ll[rows] = np.log(np.full(6, 0.02))
    ll[rows, 0] = np.log(0.9)  # photo b's evidence there says empty...
    tracks = list(b.tracks)
    tracks[tid] = replace(tracks[tid], confidence=0.0, doubtful=True)  # ...and b doubts its reading
    b_unsure = PhotoPart(parts["b"].image, replace(b, evidence=replace(b.evidence, loglik=ll), tracks=tracks))
    got = combine(reader, [parts["a"], b_unsure]).reading.tracks[tid]
    assert got.owner == a.tracks[tid].owner
    assert np.allclose(got.space_probs, space_probs(a.evidence.loglik)[rows], atol=0.01)  # a alone, in effect
    even = Reader(settings=replace(reader.settings, several=replace(reader.settings.several, by_certainty=False)))
    mixed = combine(even, [parts["a"], b_unsure]).reading.tracks[tid]
    assert not np.allclose(mixed.space_probs, space_probs(a.evidence.loglik)[rows], atol=0.01)


def test_the_flash_standard_holds_only_while_every_photo_was_taken_with_flash(reader, parts):
    strict = Reader(settings=replace(reader.settings, doubt_flash=replace(reader.settings.doubt, below=1.01)))
    flashed = {k: PhotoPart(parts[k].image, replace(parts[k].trace, view=replace(parts[k].trace.view, flash_fired=True)))
               for k in ("a", "b")}
    assert all(t.doubtful for t in combine(strict, [flashed["a"], flashed["b"]]).reading.tracks)
    mixed = combine(strict, [flashed["a"], parts["b"]]).reading.tracks
    assert not all(t.doubtful for t in mixed)
    assert [t.owner for t in mixed] == [t.owner for t in combine(reader, [parts["a"], parts["b"]]).reading.tracks]


def test_no_photo_read_is_one_clear_error(reader, tmp_path):
    from scoring.errors import TtrError

    bad = tmp_path / "x.jpg"
    bad.write_bytes(b"not an image")
    with pytest.raises(TtrError, match="no photo could be read"):
        combine(reader, [PhotoPart(str(bad), error="not an image")])


def test_ttr_detect_same_board_prints_one_reading(photos):
    def ttr(*args):
        return subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                               "detect", "--same-board", "--json", *args], capture_output=True, text=True, timeout=300)
    r = ttr(photos["a"], photos["b"])
    assert r.returncode == 0, r.stderr
    (line,) = r.stdout.splitlines()
    d = json.loads(line)
    assert d["images"] == [photos["a"], photos["b"]] and len(d["tracks"]) == len(BOARD.tracks)
    r = ttr(photos["a"], photos["other"])
    assert r.returncode == 1 and "Traceback" not in r.stderr
    d = json.loads(r.stdout)
    # Two positions: the less sure photo is the one set aside, whichever came first.
    assert sorted("another game position" in p.get("error", "") for p in d["photos"]) == [False, True]
