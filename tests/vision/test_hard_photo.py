"""A photo hard to read as a whole (`vision.decide.doubt.hard_photo_marks`): where many tracks are
doubtful, the surer ones are marked too under a surer standard; elsewhere nothing changes, and no
mark is ever taken away."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from ttr_testing import read_tracks

from scoring.board import load_board
from vision.decide.doubt import doubt_warnings, hard_photo_marks
from vision.reading import SPACE_CLASSES
from vision.settings import DoubtSettings

BOARD = load_board()
CFG = DoubtSettings(below=0.98, hard_photo=20, hard_below=0.998)
confidences = st.lists(st.floats(0.0, 1.0), min_size=100, max_size=100).map(np.array)


@settings(max_examples=60, deadline=None)
@given(conf=confidences, hard_photo=st.integers(1, 60), hard_below=st.floats(0.98, 1.0))
def test_marks_only_on_a_hard_photo_and_only_tracks_under_the_surer_standard(conf, hard_photo, hard_below):
    cfg = DoubtSettings(below=0.98, hard_photo=hard_photo, hard_below=hard_below)
    doubtful = conf < cfg.below
    add = hard_photo_marks(conf, doubtful, cfg)
    assert not np.any(add & doubtful)  # adds, never repeats or takes away
    if doubtful.sum() < hard_photo:
        assert not add.any()
    else:
        assert np.array_equal(add, ~doubtful & (conf < hard_below))


@settings(max_examples=30, deadline=None)
@given(conf=confidences)
def test_a_surer_standard_marks_more_and_a_higher_count_fewer_photos(conf):
    doubtful = conf < CFG.below
    lo = hard_photo_marks(conf, doubtful, CFG)
    hi = hard_photo_marks(conf, doubtful, DoubtSettings(below=0.98, hard_photo=20, hard_below=0.9999))
    assert np.all(hi[lo])
    never = hard_photo_marks(conf, doubtful, DoubtSettings(below=0.98, hard_photo=101, hard_below=0.9999))
    assert not never.any()


def evidence(weak: set[int], strength: float = 8.0):
    """Per-space log-likelihoods of an empty board: every space favours empty, plainly, but on the
    `weak` tracks only a little (doubtful)."""
    out = []
    for t in BOARD.tracks:
        ll = np.zeros((t.length, len(SPACE_CLASSES)))
        ll[:, 0] = 0.3 if t.id in weak else strength
        out.append(ll)
    return out


def test_a_photo_with_many_doubtful_tracks_marks_its_less_sure_ones_and_says_so():
    weak = {t.id for t in BOARD.tracks[:25]}
    middling = BOARD.tracks[30]
    ll = evidence(weak)
    single = DoubtSettings(below=0.98, hard_photo=101, hard_below=0.998)  # no photo is hard
    for ahead in np.arange(0.5, 8.0, 0.1):  # empty ahead a little: above the mark, under the surer standard
        ll[middling.id][:, 0] = ahead
        alone = read_tracks(ll, doubt=single)
        if alone[middling.id].confidence >= CFG.below:
            break
    r = read_tracks(ll, doubt=CFG)
    assert not alone[middling.id].doubtful and CFG.below <= alone[middling.id].confidence < CFG.hard_below
    assert sum(t.doubtful for t in alone) >= CFG.hard_photo
    assert r[middling.id].doubtful and r[middling.id].confidence == alone[middling.id].confidence
    n_doubtful = sum(t.doubtful for t in r)
    assert n_doubtful > sum(t.doubtful for t in alone)
    assert r[middling.id].reason == f"the photo is hard to read ({n_doubtful} tracks doubtful): check this one too"
    assert all(r[t.id].doubtful for t in BOARD.tracks if alone[t.id].doubtful)
    assert not r[BOARD.tracks[40].id].doubtful  # plain evidence stays sure
    (notice,) = doubt_warnings(r, CFG)
    assert "hard to read as a whole" in str(notice) and str(notice).startswith(f"{n_doubtful} doubtful track(s)")
    (plain,) = doubt_warnings(read_tracks(evidence(set(list(weak)[:3]))), CFG)
    assert "hard to read" not in str(plain)
