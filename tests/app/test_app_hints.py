"""The score track's hint (`app.state.marker_hints`): a change of one track that makes a player's
marker agree, proposed only where the photo leaves it plausible, never on a track it is sure of,
always saying how sure it is."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app import state as S
from scoring.board import load_board
from scoring.rules import PLAYER_COLORS, route_points

BOARD = load_board()
N = len(BOARD.tracks)


def tid(a, b, color=None):
    return next(t.id for t in BOARD.tracks_between(a, b) if color in (None, t.color))


def check(track_id: int, owner, confidence: float, evidence) -> S.TrackCheck:
    return S.TrackCheck(track_id, owner, confidence, confidence < S.SURE, tuple(evidence))


def photo_of(checks: dict[int, S.TrackCheck]) -> S.PhotoCheck:
    """A photo whose reading is `checks`, nobody sure-read everywhere else."""
    sure_empty = (1.0,) + (0.0,) * len(PLAYER_COLORS)
    tracks = [checks.get(i) or check(i, None, 1.0, sure_empty) for i in range(N)]
    return S.PhotoCheck("p.jpg", tracks, [], 0.0)


# (the doubtful first: hypothesis starts there); each side of the reader's doubt mark, and of 95 %
CONFIDENCES = [0.6, 0.3, 0.9, S.SURE - 0.001, S.SURE, 0.949, 0.95, 0.99, 1.0]


@st.composite
def tables(draw):
    """A table read from a photo (owners as read, or some changed by a person, some found right)
    with markers near the route points, so that some disagree by one track's points. Tracks the
    draw leaves out are read as nobody's, sure."""
    players = draw(st.lists(st.sampled_from(PLAYER_COLORS), min_size=2, max_size=5, unique=True))
    readings = draw(st.dictionaries(
        st.integers(0, N - 1),
        st.tuples(st.none() | st.sampled_from(players), st.sampled_from(CONFIDENCES),
                  st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.3, 1.0]), min_size=6, max_size=6)),
        min_size=1, max_size=40))
    checks = {}
    for i, (owner, confidence, weights) in readings.items():
        weights = weights if sum(weights) else [1.0] + weights[1:]
        checks[i] = check(i, owner, confidence, [w / sum(weights) for w in weights])
    photo = photo_of(checks)
    owners = photo.owners()
    # a person's changes, of tracks the photo doubts or is sure of
    owners.update(draw(st.dictionaries(st.sampled_from(sorted(readings)), st.none() | st.sampled_from(players),
                                       max_size=4)))
    checked = draw(st.lists(st.sampled_from(sorted(readings) or [0]), max_size=5, unique=True))
    tab = S.TableState(players=players, owners=owners, checked=checked)
    points = {c: sum(route_points(BOARD.tracks[i].length) for i in ids) for c, ids in tab.claims().items()}
    # off by the points of a drawn track, now and then the wrong way or by a lap
    gaps = [route_points(BOARD.tracks[i].length) for i in readings] or [1]
    with_marker = draw(st.lists(st.sampled_from(players), min_size=1, unique=True))
    tab.score_track = {c: points.get(c, 0) + draw(st.sampled_from([0, 3, 100])) + draw(st.sampled_from([1, -1]))
                       * draw(st.sampled_from(gaps)) for c in with_marker}
    return tab, photo


@settings(max_examples=60, deadline=None)
@given(tables())
def test_a_hint_proposes_only_plausible_changes_and_says_how_sure(table_and_photo):
    tab, photo = table_and_photo
    markers = tab.markers()
    for hint in S.marker_hints(tab, photo, max_fixes=100):
        assert hint.color in markers
        for f in hint.fixes:
            read = photo.tracks[f.track_id]
            assert read.confidence < S.SURE  # never a track the photo is sure of
            # nor one a person found right as read and left so
            assert f.track_id not in tab.checked or tab.owners.get(f.track_id) != read.owner
            assert f.chance == S.change_chance(read, f.owner) >= S.PLAUSIBLE
            assert f"the photo gives {tab.display_name(f.owner) if f.owner else 'nobody'} {f.chance:.0%}" \
                in S.fix_text(f, tab)
            # applied, it makes the marker agree (a lap of the score track allowed)
            after = S.TableState(players=tab.players, owners={**tab.owners, f.track_id: f.owner})
            pts = sum(route_points(BOARD.tracks[i].length) for i in after.claims().get(hint.color, []))
            assert pts % S.LAP == hint.reported % S.LAP


def test_change_chance_shares_the_doubt_as_the_evidence_does():
    t = check(0, "blue", 0.8, [0.1, 0.0, 0.7, 0.1, 0.0, 0.1])
    assert S.change_chance(t, "blue") == 0.8
    assert abs(S.change_chance(t, None) - 0.2 * 0.1 / 0.3) < 1e-12
    assert S.change_chance(t, "red") == 0.0
    assert abs(sum(S.change_chance(t, o) for o in S.OWNER_CLASSES) - 1) < 1e-12


def test_the_same_gap_is_named_on_a_doubtful_track_and_not_on_a_sure_one():
    psl = tid("Portland", "Salt Lake City", "blue")  # 6 trains: 15 points
    evidence = (0.2, 0.0, 0.8, 0.0, 0.0, 0.0)
    tab = S.TableState(players=["red", "blue"], owners={psl: "blue"}, score_track={"blue": 0})
    (hint,) = S.marker_hints(tab, photo_of({psl: check(psl, "blue", 0.8, evidence)}))
    assert [(f.track_id, f.owner) for f in hint.fixes] == [(psl, None)]
    assert S.SURE <= 0.95  # whatever the fit, never a fix on a track the reader is 95 % sure of
    for sure in (S.SURE, 0.95):
        (hint,) = S.marker_hints(tab, photo_of({psl: check(psl, "blue", sure, evidence)}))
        assert hint.fixes == ()
    tab.checked = [psl]  # found right by a person: not questioned either
    (hint,) = S.marker_hints(tab, photo_of({psl: check(psl, "blue", 0.8, evidence)}))
    assert hint.fixes == ()
    tab.owners[psl] = None  # ... until the person changes it after all: then blue's marker points back
    tab.score_track = {"blue": 15}
    (hint,) = S.marker_hints(tab, photo_of({psl: check(psl, "blue", 0.8, evidence)}))
    assert [(f.track_id, f.owner) for f in hint.fixes] == [(psl, "blue")]
