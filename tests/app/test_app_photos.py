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

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from ttr_testing import start_page

pytest.importorskip("streamlit")
from streamlit.runtime.scriptrunner_utils.exceptions import RerunException  # noqa: E402
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from app import state as S  # noqa: E402
from app.history import History, photo_digest  # noqa: E402
from app.launch import MAX_UPLOAD_MB  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.rules import PLAYER_COLORS  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.several import PhotoPart, combine  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "board.jpg"
BOARD = load_board()
OWNERS = (None,) + PLAYER_COLORS


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite"
    monkeypatch.setenv("TTR_HISTORY_DB", str(path))
    return path


class Library:
    """The photos read by the library directly, named as the page names them."""

    def __init__(self, photos):
        self.reader = Reader()
        self.traces = {}
        for name, path in (("board.jpg", EXAMPLE), ("side.jpg", photos.side), ("third.jpg", photos.third)):
            trace = self.reader.trace_path(str(path))
            trace.reading.image = name
            self.traces[name] = trace

    def together(self, *names: str) -> S.PhotoCheck:
        return S.photo_check(combine(self.reader, [PhotoPart(n, self.traces[n]) for n in names]).reading)

    def alone(self, name: str) -> S.PhotoCheck:
        return S.photo_check(self.traces[name].reading)


@pytest.fixture(scope="module")
def library(board_photos):
    return Library(board_photos)


start = start_page


def add(at: AppTest, name: str, data: bytes | Path) -> AppTest:
    """Add a photo of the board from another side, as a file."""
    data = data.read_bytes() if isinstance(data, Path) else data
    at.file_uploader(key="more_photo").set_value((name, data, "image/jpeg")).run()
    assert not at.exception, at.exception
    return at


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def seen(check: S.PhotoCheck) -> list[tuple]:
    """What the page shows of each track: owner, mark, and why."""
    return [(t.owner, t.doubtful, t.reason) for t in check.tracks]


def marked(at: AppTest) -> list[str]:
    return [o for o in at.selectbox(key="sel_track").options if o.startswith(S.CHECK_MARK)]


def news_shown(at: AppTest, news: S.PhotoNews, after: S.PhotoCheck, tab: S.TableState) -> None:
    """Each thing the library's readings say the photo changed is on the page, as the page's kind."""
    for kind, text in S.news_texts(news, after, tab):
        where = {"settled": at.success, "doubts": at.warning, "kept": at.warning}.get(kind, at.info)
        assert text in texts(where), (kind, text)


# ---------------------------------------------------------------- a second photo

def test_a_second_photo_is_read_with_the_first_and_the_page_says_what_it_changed(board_photos, library, db):
    at = start()
    at.button(key="example").click().run()
    before = at.session_state["photo_check"]
    assert seen(before) == seen(library.alone("board.jpg"))
    assert at.file_uploader(key="more_photo").proto.max_upload_size_mb == MAX_UPLOAD_MB  # (the browser's limit)
    add(at, "side.jpg", board_photos.side)

    want = library.together("board.jpg", "side.jpg")
    news = S.photo_news(S.TableState(), before, want, "side.jpg")
    # the side photo shows one track empty that the first reads sure: the photos disagree there
    assert board_photos.emptied in news.doubts
    assert want.tracks[board_photos.emptied].reason.startswith("The photos disagree: nobody in one")
    got = at.session_state["photo_check"]
    assert seen(got) == seen(want)
    assert at.session_state["owners"] == want.owners()
    claimed = sum(1 for t in want.tracks if t.owner)
    assert f"2 photos read together (board.jpg, side.jpg): {claimed} tracks claimed, read in " in texts(at.success)
    news_shown(at, news, want, S.TableState())
    for tid in news.settled:  # a doubt settled is no longer marked to check
        assert S.CHECK_MARK + S.track_label(BOARD.tracks[tid]) not in marked(at)
    # the tracks to check are those the photos together doubt, least sure first
    assert marked(at) == [S.CHECK_MARK + S.track_label(BOARD.tracks[t.track_id])
                          for t in sorted(want.doubtful, key=lambda t: t.confidence)]
    assert "Photos of this board: board.jpg, side.jpg." in texts(at.caption)
    assert not at.error
    # kept with the game: both files, and the reading of both
    game = at.query_params["game"]
    assert [p.name for p in History(db).photos(game)] == ["board.jpg", "side.jpg"]
    assert History(db).photo_files(game)["side.jpg"] == board_photos.side.read_bytes()
    assert seen(S.PhotoCheck.from_json(History(db).load(game).state["photo"])) == seen(want)


def test_a_camera_photo_is_added_like_a_file_under_a_name_of_its_own(board_photos, library):
    at = start()
    at.toggle(key="use_camera").set_value(True).run()
    at.camera_input(key="camera").set_value(("camera.jpg", EXAMPLE.read_bytes(), "image/jpeg")).run()
    at.toggle(key="more_use_camera").set_value(True).run()
    at.camera_input(key="more_camera").set_value(("camera.jpg", board_photos.side.read_bytes(), "image/jpeg")).run()
    assert not at.exception, at.exception
    assert [p.name for p in at.session_state["photos"]] == ["camera.jpg", "camera (2).jpg"]
    assert at.session_state["owners"] == library.together("board.jpg", "side.jpg").owners()
    assert "2 photos read together (camera.jpg, camera (2).jpg)" in texts(at.success)


# ---------------------------------------------------------------- refused, the game kept

def test_a_photo_of_another_game_is_refused_and_everything_entered_is_kept(board_photos, library, db):
    at = start()
    at.button(key="example").click().run()
    first = library.alone("board.jpg")
    # a correction, a track found right as read, a name, a ticket and a marker
    fixed = max((t for t in first.tracks if t.owner and not t.doubtful and t.track_id != board_photos.emptied),
                key=lambda t: BOARD.tracks[t.track_id].length).track_id
    at.selectbox(key="sel_track").set_value(fixed).run()
    at.segmented_control(key="owner_pick").set_value("nobody").run()
    right = min(first.doubtful, key=lambda t: t.confidence).track_id
    at.selectbox(key="sel_track").set_value(right).run()
    at.button(key="mark_right").click().run()
    at.text_input(key="name_blue").set_value("Ada").run()
    at.multiselect(key="tickets_blue").set_value(["Denver – El Paso"]).run()
    at.number_input(key="marker_green").set_value(40).run()
    keys = ("owners", "steps", "checked", "players", "photos", "name_blue", "tickets_blue", "marker_green")
    kept = {k: at.session_state[k] for k in keys}
    reading = seen(at.session_state["photo_check"])
    totals = [t.value.iloc[-1, 1] for t in at.table]
    game = at.query_params["game"]

    ok, wall = cv2.imencode(".png", np.full((600, 800, 3), 128, np.uint8))
    refusals = [
        ("other.jpg", board_photos.other.read_bytes(), "other.jpg: it shows another game position than board.jpg ("),
        ("wall.png", wall.tobytes(), "wall.png: no Ticket to Ride board found"),
        ("again.jpg", EXAMPLE.read_bytes(), "again.jpg is the same photo as board.jpg"),
        ("huge.jpg", b"\xff" * (MAX_UPLOAD_MB * 1024 * 1024 + 1), f"photos up to {MAX_UPLOAD_MB} MB are read"),
    ]
    for name, data, said in refusals:
        add(at, name, data)
        assert said in texts(at.error), texts(at.error)
        assert "The game is as it was." in texts(at.error)
        assert {k: at.session_state[k] for k in keys} == kept
        assert seen(at.session_state["photo_check"]) == reading
        assert [t.value.iloc[-1, 1] for t in at.table] == totals
        assert [p.name for p in History(db).photos(game)] == ["board.jpg"]
        assert "photos read together" not in texts(at.success)

    # then a photo of this board is added: what the person set stays as they set it
    add(at, "side.jpg", board_photos.side)
    assert not at.error
    want = library.together("board.jpg", "side.jpg")
    owners = at.session_state["owners"]
    assert owners[fixed] is None  # corrected: stays
    assert owners[right] == first.tracks[right].owner  # found right: stays
    assert {t: o for t, o in owners.items() if t not in (fixed, right)} == \
        {t: o for t, o in want.owners().items() if t not in (fixed, right)}
    assert at.text_input(key="name_blue").value == "Ada"
    assert at.multiselect(key="tickets_blue").value == ["Denver – El Paso"]
    assert at.number_input(key="marker_green").value == 40
    # undo takes the correction back to what the photos read now
    at.button(key="undo").click().run()
    assert at.session_state["owners"][fixed] == want.tracks[fixed].owner


# ---------------------------------------------------------------- a reload, and speed

def test_a_reload_keeps_both_photos_and_a_photo_added_after_it_reads_only_what_is_missing(
        board_photos, library, monkeypatch):
    read = []
    trace_path = Reader.trace_path

    def counted(self, path):
        read.append(path)
        return trace_path(self, path)

    monkeypatch.setattr(Reader, "trace_path", counted)
    at = start()
    at.button(key="example").click().run()
    add(at, "side.jpg", board_photos.side)
    assert len(read) == 2  # the second photo costs its own reading: the first is not read again
    game = at.query_params["game"]
    summary = at.success[0].value
    owners = at.session_state["owners"]
    board_shown = at.session_state["photo_check"].board_jpeg

    again = start(game)  # a reload: a new session
    assert len(read) == 2  # the reading comes back as saved, nothing read
    assert seen(again.session_state["photo_check"]) == seen(library.together("board.jpg", "side.jpg"))
    assert again.session_state["owners"] == owners
    assert again.session_state["photo_check"].board_jpeg == board_shown  # the board as the photos' best shows it
    assert [p.name for p in again.session_state["photos"]] == ["board.jpg", "side.jpg"]
    assert "2 photos read together (board.jpg, side.jpg)" in texts(again.success)
    assert again.success[0].value == summary  # (what the photo changed was said once, in its session)
    assert "Photos of this board: board.jpg, side.jpg." in texts(again.caption)

    # a third photo after the reload: the two kept photos are read again, once, from their files
    add(again, "third.jpg", board_photos.third)
    assert len(read) == 5
    want = library.together("board.jpg", "side.jpg", "third.jpg")
    assert seen(again.session_state["photo_check"]) == seen(want)
    assert again.session_state["owners"] == want.owners()
    assert "3 photos read together (board.jpg, side.jpg, third.jpg)" in texts(again.success)
    # and from then on each photo costs its own reading again (this one refused)
    add(again, "other.jpg", board_photos.other)
    assert len(read) == 6
    assert "other.jpg: it shows another game position than board.jpg" in texts(again.error)
    assert [p.name for p in History().photos(game)] == ["board.jpg", "side.jpg", "third.jpg"]


def test_a_new_first_photo_starts_the_games_photos_again(board_photos, db):
    at = start()
    at.button(key="example").click().run()
    add(at, "side.jpg", board_photos.side)
    at.file_uploader(key="photo").set_value(("third.jpg", board_photos.third.read_bytes(), "image/jpeg")).run()
    assert [p.name for p in at.session_state["photos"]] == ["third.jpg"]
    assert [p.name for p in History(db).photos(at.query_params["game"])] == ["third.jpg"]
    assert "photos read together" not in texts(at.success)
    assert "third.jpg: " in texts(at.success)
    assert not any(kind for kind in at.session_state["photo_news"])


def test_no_photo_no_second_photo():
    at = start()
    at.button(key="by_hand").click().run()
    assert "photo" in [u.key for u in at.file_uploader]
    assert "more_photo" not in [u.key for u in at.file_uploader]


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


def test_a_photo_being_read_when_the_run_is_stopped_is_read_in_the_next(board_photos, library, monkeypatch):
    """A tap while a photo is read stops the run (Streamlit raises its rerun exception at the next
    element); the photo is read in the run after, not lost."""
    trace_path = Reader.trace_path
    stopped = []

    def stopped_once(self, path):
        if not stopped:
            stopped.append(path)
            raise RerunException(RerunData())
        return trace_path(self, path)

    at = start()
    at.button(key="example").click().run()
    monkeypatch.setattr(Reader, "trace_path", stopped_once)
    add(at, "side.jpg", board_photos.side)
    assert stopped
    assert [p.name for p in at.session_state["photos"]] == ["board.jpg", "side.jpg"]
    assert at.session_state["owners"] == library.together("board.jpg", "side.jpg").owners()
