"""Several photos of one board, on the page (AppTest): after a reading, a photo of the board from
another side is added (file or camera); the reading becomes the library's reading of all the
game's photos (`vision.several`), and the page says which doubts the new photo settles and which it
brings. A photo of another game, a photo with no board and the same photo again are refused with
the game kept. The photos are kept with the game and come back on a reload; a photo added after it
reads again only the photos the session no longer holds. Then the plain state behind it
(`app.state`: names, what changed, corrections kept) and `app.history`'s photos.

The photos are the bundled example and renders of its position from other cameras
(tests/app/conftest.py); what the page must show is computed by calling the library directly.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from app import state as S
from app.history import History, photo_digest
from scoring.board import load_board
from scoring.rules import PLAYER_COLORS

BOARD = load_board()
OWNERS = (None,) + PLAYER_COLORS


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite"
    monkeypatch.setenv("TTR_HISTORY_DB", str(path))
    return path


# ---------------------------------------------------------------- the plain state behind it

def check(owners: dict[int, str | None], doubtful=(), reason: str = "") -> S.PhotoCheck:
    tracks = [S.TrackCheck(t.id, owners.get(t.id), 0.6 if t.id in doubtful else 0.99, t.id in doubtful,
                           (1 / 6,) * 6, reason if t.id in doubtful else "") for t in BOARD.tracks]
    return S.PhotoCheck("p.jpg", tracks, [], 0.0)


@given(hs.text(hs.sampled_from("ab.( )2"), max_size=8), hs.lists(hs.text(hs.sampled_from("ab.( )2"), max_size=8)))
def test_a_photos_name_is_its_own_in_its_game(name, taken):
    got = S.photo_name(name, taken)
    assert got not in taken
    assert got == name or name in taken


def test_the_news_names_the_tracks_settled_and_the_new_doubts():
    a, b, c = (t.id for t in BOARD.tracks[:3])
    before = check({a: "red", b: None, c: "blue"}, doubtful=(a, b))
    after = check({a: "red", b: "green", c: "blue"}, doubtful=(c,), reason="The photos disagree: nobody in one, "
                  "blue cars in the other. Read as blue, 60% sure.")
    news = S.photo_news(S.TableState(), before, after, "side.jpg")
    assert (news.settled, news.doubts, news.changed, news.kept) == ((a, b), (c,), (), ())
    said = dict(S.news_texts(news, after, S.TableState()))
    label = lambda i: S.track_label(BOARD.tracks[i])  # noqa: E731
    assert said["settled"] == f"The new photo (side.jpg) settles 2 tracks: {label(a)}: red; {label(b)}: green."
    assert said["doubts"] == (f"The new photo (side.jpg) brings 1 new doubt, marked ? to check: {label(c)}: "
                              "The photos disagree: nobody in one, blue cars in the other. Read as blue, 60% sure.")
    assert S.news_texts(S.photo_news(S.TableState(), before, before, "x.jpg"), before, S.TableState()) == \
        [("same", "The new photo (x.jpg) reads the board as it was read: nothing changes.")]


owner_maps = hs.dictionaries(hs.sampled_from(range(12)), hs.sampled_from(OWNERS), min_size=12)


@settings(max_examples=60, deadline=None)
@given(owner_maps, owner_maps, hs.lists(hs.tuples(hs.sampled_from(range(12)), hs.sampled_from(OWNERS)), max_size=8),
       hs.sets(hs.sampled_from(range(12))), hs.sets(hs.sampled_from(range(12))))
def test_a_new_reading_keeps_what_a_person_set_and_undo_goes_back_to_it(was, now, changes, checked, doubtful):
    before, after = check(was, doubtful), check(now)
    tab = S.TableState(owners=before.owners())
    for tid, owner in changes:
        S.change_owner(tab, tid, owner)
    tab.checked = sorted(checked)
    mine = S.set_by_person(tab)
    set_as = dict(tab.owners)
    news = S.photo_news(tab, before, after, "side.jpg")
    S.take_reading(tab, after)
    # a person's tracks stay as they set them; the others are read anew
    for t in after.tracks:
        assert tab.owners[t.track_id] == (set_as[t.track_id] if t.track_id in mine else t.owner)
    # the kept ones named are those the new reading reads otherwise than before and than the person
    assert set(news.kept) == {i for i in mine if now.get(i) != was.get(i) and set_as[i] != now.get(i)}
    # undo steps chain from the new reading to the owner set, each changing something
    by_track: dict[int, list[S.Step]] = {}
    for s in tab.steps:
        assert s.before != s.after
        by_track.setdefault(s.track_id, []).append(s)
    for tid, steps in by_track.items():
        assert steps[0].before == now.get(tid)
        assert all(x.after == y.before for x, y in zip(steps, steps[1:]))
        assert steps[-1].after == tab.owners[tid]
    # undo all: every track as the photos read it now, but those found right and left so
    while S.undo(tab):
        pass
    for t in after.tracks:
        stays = t.track_id in checked and t.track_id not in by_track
        assert tab.owners[t.track_id] == (set_as[t.track_id] if stays else t.owner)


# ---------------------------------------------------------------- the photos kept with a game

def test_history_keeps_a_games_photos_in_order_and_deletes_them_with_it(db):
    hist = History(db)
    hist.save("g1", {"table": {}})
    hist.set_photos("g1", [("a.jpg", b"A")])
    hist.add_photo("g1", "b.jpg", b"B")
    hist.add_photo("g2", "c.jpg", b"C")
    assert [(p.name, p.digest) for p in hist.photos("g1")] == [("a.jpg", photo_digest(b"A")), ("b.jpg", photo_digest(b"B"))]
    assert hist.photo_files("g1") == {"a.jpg": b"A", "b.jpg": b"B"}
    hist.set_photos("g1", [("d.jpg", b"D")])  # a new first photo: the game's photos start again
    assert [p.name for p in hist.photos("g1")] == ["d.jpg"]
    assert hist.delete("g1")
    assert hist.photos("g1") == [] and [p.name for p in hist.photos("g2")] == ["c.jpg"]
