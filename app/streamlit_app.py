"""ttr's page: photograph a finished board, check and correct what was read, score the game.

Run with `ttr app` (served to the table's phones behind a secret, `app/launch.py`) or `streamlit
run app/streamlit_app.py`. Phone first, top to bottom: the photo (camera, upload, the example; then,
if wanted, more photos of the board from other sides, read together with it),
the board to check (beside the track list on a wide screen: the tracks to check marked "?", each
with its reason in one line, and how many are left; a picked track zoomed, unpainted, beside the
photo of it as taken; tap an owner to fix; undo one step at a time), players (names, remembered
on this computer; tickets; score-track markers, each with its verdict beside it and, where one
track the photo doubts explains a disagreement, that fix in one tap), results (a ranking, the
detail, the longest paths, a picture and a text to share), save, then games played here, loading
a saved game and calibration. The page holds no rule of the game: reading comes from `vision`,
every score and every rule from `scoring`; its state is `app.state` (plain values) and
`app.history` keeps it across reloads; pictures are drawn by `app.draw`.

Session state (plain values, kept across reruns):
  game_id               the row of `app.history` this page saves to (also `?game=` in the address)
  owners                track id -> player colour, after corrections
  steps                 `app.state.Step` list: owner changes, for undo one at a time
  checked               doubtful track ids a person found right as read
  photo_check           the reading's `app.state.PhotoCheck`, of all the game's photos (None: a drawn board)
  photos                the game's photos (`app.history.KeptPhoto`), in the order added; their files
                        are kept with the game in `app.history`
  traces                photo name -> (`vision.read.ReadingTrace`, board as taken, JPEG): each photo's
                        own reading, kept for this session only (a cache, not the game: see add_photo)
  photo_news            what the photo added last changed, as `app.state.news_texts` says it
  more_error            why the photo offered last was not added
  set_aside_tickets     colour -> ticket keys a variant switch set aside
  to_check              the tracks to check, in order, as last shown (for "next")
  view_shown            the view of the board last shown (kept when its button is tapped again)
  remembered            the names last given to each colour on this computer (`app.history`)
  prefilled             colour -> the remembered name the page put in this game ("" when none was)
  delete_asked          the saved game whose Delete waits for a yes
  pending               widget values to set before the widgets are drawn on the next run
Widget keys: variant, ticket_values, players, name_<c>, tickets_<c>, marker_<c>, photo,
camera, use_camera, example, by_hand, more_photo, more_use_camera, more_camera, new_game, zoom, board_click, sel_track, owner_pick,
next_check, mark_right, undo, undo_all, fix_<c>_<n>, check_aside, path_pick, share_picture,
share_text, dl_json, dl_csv, open_<id>, delete_<id>, delete_yes, delete_no, restore,
calib_photos, calibrate, forget_calibration.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
import streamlit as st
from streamlit_image_coordinates import streamlit_image_coordinates

# `streamlit run app/streamlit_app.py` puts app/ on the path, not the project: an installed ttr
# is found as it is; a plain checkout (not installed) is put on the path.
ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("scoring") is None:
    sys.path.insert(0, str(ROOT))

from app import state as S  # noqa: E402
from app.draw import (  # noqa: E402
    board_canvas,
    cut,
    draw_paths,
    draw_results,
    draw_tracks,
    nearest_track,
    track_photo_window,
    track_window,
)
from app.history import GameSummary, History, KeptPhoto, new_id, photo_digest  # noqa: E402
from app.launch import MAX_UPLOAD_MB  # noqa: E402
from calibration.user import load_calibration  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from scoring.rules import PLAYER_COLORS, VARIANTS  # noqa: E402
from vision.calibrate import fit_calibration  # noqa: E402
from vision.palette import PLAYER_CSS, PLAYER_INK  # noqa: E402
from vision.read import Reader, ReadingTrace  # noqa: E402
from vision.reading import DOUBTFUL_TRACKS  # noqa: E402
from vision.several import PhotoPart, combine  # noqa: E402

# The bundled example: examples/ in a checkout; installed, it ships as app/examples (pyproject).
EXAMPLE = next((p for p in (ROOT / "examples" / "board.jpg", Path(__file__).parent / "examples" / "board.jpg")
                if p.exists()), None)
DISPLAY_WIDTH = 1400  # pixels of the board image drawn on and sent to the browser
# Views of the board to tap on: label, left and right edge as fractions of the board's width
# ("track": around the track picked, see app.draw.track_window; the whole board when none is).
ZOOM = {"track": ("Track", None, None), "whole": ("Whole", 0.0, 1.0), "west": ("West", 0.0, 0.45),
        "middle": ("Middle", 0.275, 0.725), "east": ("East", 0.55, 1.0)}
CSS = """
<style>
/* a rerun changes what lies above the part in view: the view stays where it is */
[data-testid="stMain"] {overflow-anchor: none;}
.block-container {max-width: 1000px; padding-top: 2.2rem;}
@media (min-width: 1100px) {.block-container {max-width: 1400px;}}
.ttr-total {float: right; font-size: 1.5rem; font-weight: 700; line-height: 1.0;}
table.ttr-rank {width: 100%; border-collapse: collapse; font-size: 1.05rem; border: none !important;}
table.ttr-rank td {padding: .35rem .4rem; border: none !important; border-bottom: 1px solid rgba(128,128,128,.25) !important;}
table.ttr-rank td.n {width: 2rem; font-weight: 700;}
table.ttr-rank td.t {text-align: right; font-weight: 700; font-size: 1.25rem;}
table.ttr-rank span.dot {display: inline-block; width: .8rem; height: .8rem; border-radius: 50%;
  margin-right: .4rem; border: 1px solid #888; vertical-align: -1px;}
table.ttr-rank span.note {color: #777; font-size: .85rem; margin-left: .4rem;}
.st-key-row_title [data-testid="stColumn"]:first-child {flex: 2 1 0 !important;}
/* rows of small fields stay rows on a phone (Streamlit stacks columns under 640 px) */
.st-key-row_title [data-testid="stHorizontalBlock"], .st-key-row_photo [data-testid="stHorizontalBlock"],
[class*="st-key-row_player_"] [data-testid="stHorizontalBlock"], .st-key-row_share [data-testid="stHorizontalBlock"],
.st-key-row_save [data-testid="stHorizontalBlock"], .st-key-row_undo [data-testid="stHorizontalBlock"],
[class*="st-key-row_game_"] [data-testid="stHorizontalBlock"] {flex-wrap: nowrap !important; gap: .5rem;}
.st-key-row_title [data-testid="stColumn"], .st-key-row_photo [data-testid="stColumn"],
[class*="st-key-row_player_"] [data-testid="stColumn"], .st-key-row_share [data-testid="stColumn"],
.st-key-row_save [data-testid="stColumn"], .st-key-row_undo [data-testid="stColumn"],
[class*="st-key-row_game_"] [data-testid="stColumn"] {min-width: 0 !important; width: auto !important; flex: 1 1 0 !important;}
/* tap targets: 44 px high; the owners on one line, each as wide as the others */
.st-key-zoom button, .st-key-owner_pick button {min-height: 44px;}
.st-key-zoom [data-testid="stButtonGroup"] > div, .st-key-owner_pick [data-testid="stButtonGroup"] > div
  {flex-wrap: nowrap !important; width: 100%;}
.st-key-zoom button, .st-key-owner_pick button {flex: 1 1 0; min-width: 0; padding-left: .2rem; padding-right: .2rem;}
.st-key-owner_pick button p {white-space: nowrap; overflow: hidden; text-overflow: ellipsis;}
@media (max-width: 640px) {
  .block-container {padding-left: .7rem; padding-right: .7rem; padding-top: .6rem;}
  h1 {font-size: 1.05rem !important; padding-bottom: .2rem !important;}
  .st-key-row_title button p {font-size: .8rem;}
  h2 {font-size: 1.15rem !important; padding-top: .6rem !important;}
  [data-testid="stFileUploaderDropzoneInstructions"] {display: none;}
  [data-testid="stFileUploaderDropzone"] {padding: .5rem;}
  .st-key-owner_pick button p, .st-key-zoom button p {font-size: .85rem;}
}
</style>
"""
# Each player in their colour: the chips of the players list, a bar beside their row (Streamlit
# gives chips the theme's colour, and its yellow text is brown)
PLAYER_STYLE = "<style>" + "".join(
    f'.st-key-players span[data-tag][aria-label="{c}"] {{background: {PLAYER_CSS[c]} !important;}}'
    f'.st-key-players span[data-tag][aria-label="{c}"] * {{color: {PLAYER_INK[c]} !important;}}'
    f'.st-key-row_player_{c} {{border-left: .35rem solid {PLAYER_CSS[c]}; padding-left: .6rem;}}'
    for c in PLAYER_COLORS) + "</style>"

st.set_page_config(page_title="ttr · Ticket to Ride scorer", page_icon=":material/train:", layout="wide")
st.markdown(CSS + PLAYER_STYLE, unsafe_allow_html=True)
ss = st.session_state
board = load_board()


def history() -> History:
    return History()  # TTR_HISTORY_DB, else the user's data folder (app/history.py)


# ---------------------------------------------------------------------------------------------
# The game on the page <-> app.state <-> app.history

def table() -> S.TableState:
    """Everything entered so far, as plain values (the lists are the page's own: changing them
    changes the page)."""
    players = S.sort_players(ss.get("players") or [])
    variant = ss.get("variant") or "classic"
    values = ss.get("ticket_values") or VARIANTS[variant].ticket_values[0]
    return S.TableState(
        variant=variant, ticket_values=values, players=players,
        names={c: (ss.get(f"name_{c}") or "").strip() for c in players},
        owners=ss["owners"], steps=ss["steps"], checked=ss["checked"],
        tickets={c: list(ss.get(f"tickets_{c}") or []) for c in players},
        score_track={c: ss.get(f"marker_{c}") for c in players},
        set_aside_tickets=ss["set_aside_tickets"])


def show_table(tab: S.TableState, photo: S.PhotoCheck | None, photos: list[KeptPhoto] = ()) -> None:
    """Put a game on the page (call before the widgets are drawn: at the top, or in a callback)."""
    ss["variant"] = tab.variant
    ss["ticket_values"] = tab.ticket_values
    ss["players"] = list(tab.players)
    for c in PLAYER_COLORS:
        ss[f"name_{c}"] = tab.names.get(c, "")
        ss[f"tickets_{c}"] = list(tab.tickets.get(c, []))
        ss[f"marker_{c}"] = tab.score_track.get(c)
    ss["owners"] = dict(tab.owners)
    ss["steps"] = list(tab.steps)
    ss["checked"] = list(tab.checked)
    ss["set_aside_tickets"] = {c: list(v) for c, v in tab.set_aside_tickets.items()}
    ss["photo_check"] = photo
    ss["photos"] = list(photos)
    ss["traces"] = {}
    ss["photo_news"] = []
    ss["more_error"] = None
    ss["variant_was"] = tab.variant
    ss["sel_track"] = None
    ss["zoom"] = "whole"
    ss["prefilled"] = {c: "" for c in PLAYER_COLORS if tab.names.get(c)}  # (a saved game's names stay as saved)
    ss["photo_dirty"] = False  # (the database holds this photo's image, or none)


def open_game(game_id: str) -> bool:
    """Show a saved game; False if there is none with that id."""
    saved = history().load(game_id)
    if saved is None:
        return False
    tab = S.TableState.from_json(saved.state["table"])
    photo = (S.PhotoCheck.from_json(saved.state["photo"], saved.photo or b"")
             if saved.state.get("photo") else None)
    show_table(tab, photo, history().photos(game_id) if photo else [])
    ss["game_id"] = game_id
    ss["saved_state"] = json.dumps(saved.state, sort_keys=True)
    return True


def new_game() -> None:
    show_table(S.TableState(), None)
    for k in ("photo_error", "photo_note", "restore_error", "saved_state"):
        ss.pop(k, None)
    ss["game_id"] = new_id()
    ss["game_note"] = "A new game: photograph the board."


def typed_names(tab: S.TableState) -> dict[str, str]:
    """The names a person typed in this game (not those the page put in from an earlier game)."""
    prefilled = ss.get("prefilled") or {}
    return {c: n for c, n in tab.names.items() if n and n != prefilled.get(c)}


def has_content(tab: S.TableState) -> bool:
    return bool(any(tab.owners.values()) or ss["photo_check"] is not None or any(tab.tickets.values())
                or any(v is not None for v in tab.score_track.values()) or typed_names(tab))


def save_game(tab: S.TableState, scored: S.Scored | None) -> None:
    """Write the game to the history when it changed (the photo's image only when it changed),
    and remember the names typed for the next game."""
    if not has_content(tab):
        return
    photo = ss["photo_check"]
    state = {"table": tab.to_json(), "photo": photo.to_json() if photo else None}
    text = json.dumps(state, sort_keys=True)
    summary = GameSummary.of_sheet(scored.score_sheet, tab.names) if scored else None
    text += json.dumps(summary.to_json() if summary else None)
    if text == ss.get("saved_state"):
        return
    dirty = bool(ss.get("photo_dirty"))
    hist = history()
    hist.save(ss["game_id"], state, summary, photo=photo.board_jpeg if (photo and dirty) else None,
              keep_photo=not (dirty and photo is None))
    if typed_names(tab):
        hist.remember_names(typed_names(tab))
        ss["remembered"] = hist.names()
    ss["saved_state"] = text
    ss["photo_dirty"] = False


# Values set by a callback or by a restore, applied before the widgets that show them exist.
for _k, _v in ss.pop("pending", {}).items():
    ss[_k] = _v
if "game_id" not in ss:  # a new session (first visit, reload, browser restart): carry on
    ss.setdefault("owners", {})
    ss.setdefault("steps", [])
    ss.setdefault("checked", [])
    ss.setdefault("set_aside_tickets", {})
    ss.setdefault("photo_check", None)
    ss.setdefault("photos", [])
    ss.setdefault("traces", {})
    ss["remembered"] = history().names()
    wanted = st.query_params.get("game")
    latest = None if wanted else history().latest()
    if wanted and open_game(wanted):
        pass
    elif latest and open_game(latest):
        ss["game_note"] = ("Carried on with the game you changed last. Tap “New game” to start another.")
    else:
        ss["game_id"] = wanted or new_id()
if st.query_params.get("game") != ss["game_id"]:
    st.query_params["game"] = ss["game_id"]
if isinstance(ss.get("sel_track"), str):
    # The browser sends the chosen label back; a track's label gains or loses its "?" when it is
    # checked or corrected, so a label no longer among the options is mapped back.
    _plain = ss["sel_track"].removeprefix(S.CHECK_MARK)
    ss["sel_track"] = next((t.id for t in board.tracks if S.track_label(t) == _plain), None)
ss.setdefault("variant", "classic")
ss.setdefault("players", ["red", "blue"])
ss.setdefault("zoom", "whole")
ss.setdefault("variant_was", ss["variant"])
ss.setdefault("prefilled", {})


def name_of(color: str) -> str:
    name = (ss.get(f"name_{color}") or "").strip()
    return name or color.capitalize()


def put_remembered_names(players: list[str]) -> None:
    """Each player's name from earlier games on this computer, once per game, where none is
    given (call before the name fields are drawn)."""
    for c in players:
        if c not in ss["prefilled"]:
            name = "" if ss.get(f"name_{c}") else (ss.get("remembered") or {}).get(c, "")
            ss["prefilled"] = {**ss["prefilled"], c: name}
            if name:
                ss[f"name_{c}"] = name


# ---------------------------------------------------------------------------------------------
# Reading a photo (the reader and its model load once per server: st.cache_resource)

CALIBRATION_DIR = Path(os.environ.get("TTR_CALIBRATION_DIR") or Path.home() / ".ttr" / "calibration")


@st.cache_resource(show_spinner="Loading the photo reader…")
def reader(calibration_dir: str | None):
    """The photo reader (template, classifier, your board's calibration), loaded once per server."""
    calibration = None
    if calibration_dir:
        calibration = load_calibration(calibration_dir)
    return Reader(calibration)


def saved_calibration() -> str | None:
    return str(CALIBRATION_DIR) if (CALIBRATION_DIR / "calibration.json").exists() else None


def too_big(name: str, data: bytes) -> str | None:
    if len(data) > MAX_UPLOAD_MB * 1024 * 1024:
        return (f"{name} is {len(data) / 1024 / 1024:.0f} MB; photos up to {MAX_UPLOAD_MB} MB are read. "
                "Send a smaller copy (any phone photo fits).")
    return None


def read_file(name: str, data: bytes) -> tuple[ReadingTrace, bytes]:
    """One photo read on its own: every stage's result (`Reader.trace_path`), named `name`, and
    its board as taken (JPEG). Raises TtrError, its message naming the photo as the person does."""
    # The reader's own file path (EXIF, a big JPEG decoded reduced) is used as it is, from a
    # temporary copy; its messages name that copy, so the person's file name is put back.
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("photo" + (Path(name).suffix.lower() or ".jpg"))
        path.write_bytes(data)
        try:
            trace = reader(saved_calibration()).trace_path(str(path))
        except TtrError as e:
            msg = str(e).replace(str(path), name)
            raise TtrError(msg if msg.startswith(name) else f"{name}: {msg}") from None
        as_taken = S.board_as_taken(str(path), trace.reading)
    trace.reading.image = name
    return trace, cv2.imencode(".jpg", as_taken, [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()


def players_from_board() -> None:
    """The players are the colours on the board, and anyone already given a ticket, a marker or
    a name typed in this game (the widgets showing them are drawn further down this same run)."""
    typed = typed_names(table())
    entered = {c for c in ss["players"] if c in typed or ss.get(f"tickets_{c}") or ss.get(f"marker_{c}") is not None}
    players = S.sort_players({o for o in ss["owners"].values() if o} | entered)
    if len(players) >= 2 and players != S.sort_players(ss["players"]):
        ss["players"] = players


def read_photo(name: str, data: bytes) -> None:
    """Read `data` and put its tracks on the page, the game's one photo now; a bad photo leaves
    everything as it was."""
    ss["photo_error"] = too_big(name, data)
    if ss["photo_error"]:
        return
    with st.status(f"Reading {name}…", expanded=False) as status:
        try:
            trace, board_jpeg = read_file(name, data)
        except TtrError as e:
            status.update(label=f"Could not read {name}", state="error", expanded=False)
            ss["photo_error"] = str(e)
            return
        photo = S.photo_check(trace.reading, board_jpeg)
        status.update(label=f"Read {name}", state="complete")
    history().set_photos(ss["game_id"], [(name, data)])
    ss["photos"] = [KeptPhoto(name, photo_digest(data))]
    ss["traces"] = {name: (trace, board_jpeg)}
    ss["photo_news"] = []
    ss["more_error"] = None
    ss["photo_check"] = photo
    ss["photo_dirty"] = True
    ss["owners"] = photo.owners()
    ss["steps"] = []
    ss["checked"] = []
    ss["sel_track"] = None
    ss["zoom"] = "whole"
    players_from_board()


def add_photo(name: str, data: bytes) -> None:
    """Another photo of the game's board: read on its own, then with the game's photos, and the
    game's reading becomes theirs (what a person set stays as set). A photo of another board or
    position, or one that cannot be read, is refused and the game stays as it was."""
    ss["more_error"] = too_big(name, data)
    before, kept = ss["photo_check"], ss["photos"]
    if ss["more_error"] or before is None or not kept:
        return
    name = S.photo_name(name, [p.name for p in kept])
    digest = photo_digest(data)
    same = next((p.name for p in kept if p.digest == digest), None)
    if same:
        ss["more_error"] = f"{name} is the same photo as {same}: take one from another side of the table."
        return
    traces = ss["traces"]
    with st.status(f"Reading {name} with {', '.join(p.name for p in kept)}…", expanded=False) as status:
        try:
            # Speed: each photo's own reading (its trace) stays in this session, so a photo added
            # costs its own reading and the combining (milliseconds), never the others' again.
            # After a reload the session starts without them: the photos missing are read again,
            # once, from their files kept with the game.
            missing = [p.name for p in kept if p.name not in traces]
            files = history().photo_files(ss["game_id"]) if missing else {}
            for m in missing:
                if m not in files:
                    raise TtrError(f"{m} is not kept with this game: read the board's photo again above")
                traces[m] = read_file(m, files[m])
            added = read_file(name, data)
        except TtrError as e:
            status.update(label=f"Could not add {name}", state="error", expanded=False)
            ss["more_error"] = str(e)
            return
        boards = {n: board for n, (_, board) in traces.items()} | {name: added[1]}
        # The game's first photo is the reference: a photo added is checked against what was read.
        together = combine(reader(saved_calibration()),
                           [PhotoPart(p.name, traces[p.name][0]) for p in kept] + [PhotoPart(name, added[0])],
                           anchor=0)
        refused = [p for p in together.photos if not p.read]
        if refused:
            status.update(label=f"{name} not added", state="error", expanded=False)
            ss["more_error"] = " ".join(f"{p.image}: {p.error}." for p in refused)  # (another position)
            return
        after = S.photo_check(together.reading, boards[together.reading.image])
        status.update(label=f"Read {name} with the other photos", state="complete")
    traces[name] = added
    history().add_photo(ss["game_id"], name, data)
    ss["photos"] = kept + [KeptPhoto(name, digest)]
    tab = table()
    news = S.photo_news(tab, before, after, name)
    S.take_reading(tab, after)
    ss["owners"], ss["steps"] = tab.owners, tab.steps
    ss["photo_news"] = S.news_texts(news, after, tab)
    ss["photo_check"] = after
    ss["photo_dirty"] = bool(ss.get("photo_dirty")) or after.board_jpeg != before.board_jpeg
    players_from_board()


def take_photo(widget_key: str, into: str = "photo_in") -> None:
    f = ss.get(widget_key)
    if f is not None:
        ss[into] = (f.name, f.getvalue())


def take_example() -> None:
    ss["photo_in"] = (EXAMPLE.name, EXAMPLE.read_bytes())


# ---------------------------------------------------------------------------------------------
# Checking and correcting owners

def track_option(marked: frozenset[int]):
    """Labels for the track list. They must not change while a track is selected (the browser
    keeps the chosen label), so owners are shown by the picker below, not here; and they read no
    session state (AppTest formats values outside the script run)."""
    return lambda tid: (S.CHECK_MARK if tid in marked else "") + S.track_label(board.tracks[tid])


def pick_track(tid: int | None) -> None:
    """Select a track (None: none), zoomed to it, its owner in the picker."""
    ss["sel_track"] = tid
    ss["zoom"] = "track" if tid is not None else "whole"
    if tid is not None:
        ss["owner_pick"] = ss["owners"].get(tid) or "nobody"


def select_track() -> None:
    pick_track(ss.get("sel_track"))


def next_to_check(after: int | None = None) -> int | None:
    """The track to check after `after` in the list last shown (from the top when it is not
    there), `after` itself left out; None when none is left."""
    order = ss.get("to_check") or []
    rest = [i for i in order if i != after]
    if after in order:
        later = [i for i in order[order.index(after) + 1:] if i != after]
        rest = later + [i for i in rest if i not in later]
    return rest[0] if rest else None


def check_next() -> None:
    pick_track(next_to_check(ss.get("sel_track")))


def mark_right(tid: int) -> None:
    """The track is as read: checked, and on to the next one to check."""
    if tid not in ss["checked"]:
        ss["checked"].append(tid)
    pick_track(next_to_check(tid))


def click_board() -> None:
    click = ss.get("board_click")
    if not click:
        return
    x0, y0, x1, y1 = ss["board_view"]  # the part of the board shown, in mm
    w, h = board.board_mm
    tid = nearest_track(x0 + click["x"] * (x1 - x0) / click["width"], y0 + click["y"] * (y1 - y0) / click["height"],
                        w, h)
    if tid is not None:
        pick_track(tid)


def set_owner() -> None:
    tid, pick = ss.get("sel_track"), ss.get("owner_pick")
    if tid is None:
        return
    if pick is None:  # the owner shown tapped again: it stays
        ss["owner_pick"] = ss["owners"].get(tid) or "nobody"
        return
    S.change_owner(table(), tid, None if pick == "nobody" else pick)


def apply_fix(tid: int, owner: str | None) -> None:
    """A fix from a score-track hint: one step, undone like any other."""
    S.change_owner(table(), tid, owner)
    pick_track(tid)


def undo_step() -> None:
    step = S.undo(table())
    if step is not None:
        pick_track(step.track_id)


def undo_all() -> None:
    tab = table()
    while S.undo(tab):
        pass
    select_track()


def enter_by_hand() -> None:
    ss["photo_error"] = None
    ss["owners"] = {t.id: None for t in board.tracks}
    ss["steps"] = []
    ss["checked"] = []
    ss["photo_check"] = None
    ss["photo_dirty"] = True


def variant_changed() -> None:
    """Keep the tickets that are in the new deck; set the others aside (back when switching back)."""
    tab = table()
    tab.variant = ss.get("variant_was") or "classic"
    moved = S.switch_variant(tab, ss["variant"])
    for c in tab.players:
        ss[f"tickets_{c}"] = tab.tickets.get(c, [])
    ss["set_aside_tickets"] = tab.set_aside_tickets
    ss["ticket_values"] = tab.ticket_values
    ss["variant_was"] = ss["variant"]
    if moved:
        ss["variant_note"] = ("Not in the " + VARIANTS[ss["variant"]].title.split(" (")[0] + " deck, set aside "
                              "(they come back if you switch back): " + "; ".join(
                                  f"{name_of(c)}: {', '.join(keys)}" for c, keys in moved.items()) + ".")


@st.cache_data(max_entries=8, show_spinner=False)
def _canvas(width: int):
    return board_canvas(width)


@st.cache_data(max_entries=4, show_spinner=False)
def _decoded(jpeg: bytes):
    return cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)


@st.cache_data(max_entries=4, show_spinner=False)
def _display(jpeg: bytes):
    img = _decoded(jpeg)
    h = round(img.shape[0] * DISPLAY_WIDTH / img.shape[1])
    return cv2.resize(img, (DISPLAY_WIDTH, h), interpolation=cv2.INTER_AREA if img.shape[1] > DISPLAY_WIDTH
                      else cv2.INTER_LINEAR)


def board_scene():
    """The flattened photo (or a drawn board), at the display's size, BGR."""
    photo = ss["photo_check"]
    if photo is None or not photo.board_jpeg:
        return _canvas(DISPLAY_WIDTH)
    return _display(photo.board_jpeg)


def owner_fill() -> float:
    """How opaque the owners' colours are drawn: on a photo, faint, so the cars under them can
    be compared with what was read; on a drawn board, solid."""
    return 0.25 if ss["photo_check"] is not None and ss["photo_check"].board_jpeg else 0.85


def board_view() -> tuple[float, float, float, float]:
    """The part of the board shown (mm): around the track picked, a third, or all of it."""
    w, h = board.board_mm
    zoom = ss.get("zoom") or "whole"
    if zoom == "track":
        return track_window(ss["sel_track"]) if ss.get("sel_track") is not None else (0.0, 0.0, w, h)
    _, f0, f1 = ZOOM[zoom]
    return (f0 * w, 0.0, f1 * w, h)


def keep_view() -> None:
    """Tapping the view shown unselects it: it stays."""
    if ss.get("zoom") is None:
        ss["zoom"] = ss.get("view_shown") or "whole"


def rgb(bgr):
    return bgr[:, :, ::-1].copy()


def owner_css(options: list[str]) -> str:
    """Each owner button underlined in its player's colour (they come in the order given)."""
    return "<style>" + "".join(f'.st-key-owner_pick button:nth-of-type({n}) {{box-shadow: inset 0 -5px 0 '
                               f'{PLAYER_CSS[c]};}}' for n, c in enumerate(options, 1) if c in PLAYER_CSS) + "</style>"


# ---------------------------------------------------------------------------------------------
# Calibration

def calibrate() -> None:
    """`ttr calibrate` on the uploaded empty-board photos, saved where the reader looks."""
    files = ss.get("calib_photos") or []
    ss["calib_error"], ss["calib_note"] = None, None
    with tempfile.TemporaryDirectory() as tmp, st.status("Measuring every space of your board…"):
        paths = []
        for i, f in enumerate(files):  # each under its own name, so messages name it
            (Path(tmp) / str(i)).mkdir()
            paths.append(Path(tmp) / str(i) / Path(f.name).name)
            paths[-1].write_bytes(f.getvalue())

        def named(msg: str) -> str:
            for p in paths:
                msg = msg.replace(str(p), p.name)
            return msg

        try:
            cal, warnings = fit_calibration([str(p) for p in paths])
            cal.save(CALIBRATION_DIR)  # atomic: a failed save keeps the calibration there was
        except TtrError as e:
            ss["calib_error"] = named(str(e))
            return
    reader.clear()
    ss["calib_note"] = " ".join([f"Calibrated from {len(files)} photo(s): later photos are read "
                                 "against your own board."] + [named(w) for w in warnings])


def forget_calibration() -> None:
    (CALIBRATION_DIR / "calibration.json").unlink(missing_ok=True)
    reader.clear()


# ---------------------------------------------------------------------------------------------
# Export, restore, history

def restore_game() -> None:
    f = ss.get("restore")
    if f is None:
        return
    try:
        restored = S.restore(f.getvalue(), f.name)
    except TtrError as e:
        msg = str(e)
        ss["restore_error"] = msg if msg.startswith(f.name) else f"{f.name}: {msg}"
        return
    ss["restore_error"] = ss["photo_error"] = None
    show_table(restored, None)
    history().set_photos(ss["game_id"], [])
    ss["photo_dirty"] = True
    ss["photo_note"] = f"Restored {f.name}: the board below is drawn, not photographed."


def open_saved(game_id: str) -> None:
    if open_game(game_id):
        ss["game_note"] = "Opened a game from the list."


def ask_delete(game_id: str) -> None:
    ss["delete_asked"] = game_id


def keep_saved() -> None:
    ss.pop("delete_asked", None)


def delete_saved(game_id: str) -> None:
    ss.pop("delete_asked", None)
    history().delete(game_id)
    if game_id == ss["game_id"]:
        new_game()
        ss["game_note"] = "Deleted this game; here is a new one."


def results_picture(scene, owners: dict, paths: dict, rows: list, title: str):
    """The picture to share (a callable's body: made when the button is tapped): each player's
    network painted bold, even on a photo, and the longest paths."""
    board_drawn = draw_paths(draw_tracks(scene, owners, fill=0.75), paths)
    return cv2.imencode(".jpg", draw_results(board_drawn, rows, title), [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()


def another_photo(kept: list[KeptPhoto]) -> None:
    """Under the reading: add a photo of the board from another side (camera or file), what the
    last one added changed, or why it was not added."""
    if not kept:  # (a game saved before its photos were kept with it)
        st.caption("To add a photo of this board from another side, read its first photo again above "
                   "(this game was saved without it).")
        return
    with st.container(key="more_photos"), st.expander("Add a photo of this board from another side",
                                                      icon=":material/add_a_photo:"):
        st.caption("A photo from the other side of the table sees what this one could not (a low angle, "
                   "glare). Each photo is read on its own, then all together: the doubts it settles go, and a "
                   "track the photos read differently is marked ?. Photos of this board: "
                   + ", ".join(p.name for p in kept) + ".")
        st.file_uploader("Another photo of this board", key="more_photo",
                         type=["jpg", "jpeg", "png", "webp", "heic", "heif"], on_change=take_photo,
                         args=("more_photo", "more_in"), max_upload_size=MAX_UPLOAD_MB)
        st.toggle("Camera", key="more_use_camera", help="Take the photo here, in the page")
        if ss.get("more_use_camera"):
            st.camera_input("Take a photo from another side, the whole board in view", key="more_camera",
                            on_change=take_photo, args=("more_camera", "more_in"))
    if ss.get("more_error"):
        said = ss["more_error"].rstrip()
        st.error(said + ("" if said.endswith((".", "?", "!")) else ".") + " The game is as it was.",
                 icon=":material/error:")
    shown = {"settled": (st.success, ":material/task_alt:"), "doubts": (st.warning, ":material/help:"),
             "kept": (st.warning, ":material/person:"), "changed": (st.info, ":material/swap_horiz:"),
             "same": (st.info, ":material/check:")}
    for kind, text in ss.get("photo_news") or []:
        show, icon = shown[kind]
        show(text, icon=icon)


# =============================================================================================
# The page

with st.container(key="row_title"):
    t1, t2 = st.columns([3, 1], vertical_alignment="center")
    t1.title(":material/train: ttr · Ticket to Ride scorer")
    t2.button("New game", key="new_game", on_click=new_game, icon=":material/add:", width="stretch")
if ss.get("game_note"):
    st.caption(ss.pop("game_note"))
elif not ss["owners"]:
    st.caption("Photograph the finished board from above: ttr reads who owns each track, you check "
               "what it is unsure of and add tickets, and it counts the exact scores.")

# 1. Photo -------------------------------------------------------------------------------------
st.file_uploader("Photograph the finished board, or upload a photo", key="photo",
                 type=["jpg", "jpeg", "png", "webp", "heic", "heif"],
                 on_change=take_photo, args=("photo",), max_upload_size=MAX_UPLOAD_MB)
with st.container(key="row_photo"):
    b1, b2, b3 = st.columns(3, vertical_alignment="center")
    b1.button("Example", key="example", on_click=take_example, icon=":material/image:",
              width="stretch", disabled=EXAMPLE is None,
              help="Try the bundled example photo" if EXAMPLE else "examples/board.jpg is not in this copy of ttr")
    b2.toggle("Camera", key="use_camera", help="Take the photo here, in the page")
    if not any(ss["owners"].values()) and ss["photo_check"] is None:  # (later it would throw the board away)
        b3.button("By hand", key="by_hand", on_click=enter_by_hand, icon=":material/edit:",
                  width="stretch", help="No photo: give each track its owner on a drawn board")
if ss.get("use_camera"):
    st.camera_input("Take a photo from above, the whole board in view", key="camera",
                    on_change=take_photo, args=("camera",))
# A photo taken is let go once it is read: a tap while it is being read stops this run at its next
# element (Streamlit's control exceptions are not Exceptions), and the next run reads it again.
for _taken, _read in (("photo_in", read_photo), ("more_in", add_photo)):
    if ss.get(_taken):
        try:
            _read(*ss[_taken])
        except Exception:  # (a bug: shown once, not on every run after)
            del ss[_taken]
            raise
        del ss[_taken]
if ss.get("photo_error"):
    st.error(ss["photo_error"], icon=":material/error:")
if ss.get("photo_note"):
    st.info(ss.pop("photo_note"))

players = S.sort_players(ss["players"])
tab = table()
have_board = bool(ss["owners"])
scored: S.Scored | None = None
score_error = None
if have_board and len(players) >= 2:
    try:
        scored = S.score(tab, ss["photo_check"])
    except TtrError as e:  # (held to the rules first, so this is not expected)
        score_error = str(e)
review = scored.review if scored else None
photo = ss["photo_check"]
ss["to_check"] = S.to_check(tab, photo, review.set_aside_ids() if review else ())

# 2. Check and correct -------------------------------------------------------------------------
if have_board:
    order = ss["to_check"]
    if photo is not None:
        n_claimed = sum(1 for t in photo.tracks if t.owner)
        kept = ss["photos"]
        st.success((f"{len(kept)} photos read together ({', '.join(p.name for p in kept)})" if len(kept) > 1
                    else photo.image) + f": {n_claimed} tracks claimed, read in {photo.elapsed_ms / 1000:.1f} s.",
                   icon=":material/check_circle:")
        for w in photo.warnings:
            if w.code != DOUBTFUL_TRACKS:  # (those are the tracks to check, beside the board)
                st.warning(w.text, icon=":material/warning:")
        another_photo(kept)
    owners = ss["owners"]
    tid = ss.get("sel_track")
    owner_options = []
    if tid is not None:
        current = owners.get(tid)
        owner_options = ["nobody"] + players + ([current] if current and current not in players else [])
    st.markdown(owner_css(owner_options), unsafe_allow_html=True)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        # On a phone the whole board is ~360 px wide: a track, or a third, as wide as the column is easy to tap.
        if ss.get("zoom") is None:
            ss["zoom"] = ss.get("view_shown") or "whole"
        st.segmented_control("View", list(ZOOM), key="zoom", label_visibility="collapsed",
                             format_func=lambda z: ZOOM[z][0], width="stretch", on_change=keep_view)
        ss["view_shown"] = ss["zoom"]
        view = board_view()
        ss["board_view"] = view
        shown = draw_tracks(board_scene(), owners, order, tid, fill=owner_fill())
        streamlit_image_coordinates(rgb(cut(shown, view)), key="board_click", width="stretch",
                                    on_click=click_board, image_format="JPEG", jpeg_quality=85,
                                    cursor="crosshair")
    with right:
        # every track marked to check since the photo was read, settled or not
        n_marked = len(set(order) | ({t.track_id for t in photo.doubtful} if photo else set()))
        if order:
            st.markdown(f"**{len(order)} to check**, marked ? on the board" + (
                f" ({n_marked - len(order)} of {n_marked} done)" if n_marked > len(order) else ""))
            st.button(f"Next to check ({len(order)} left)" if tid in order or tid is None else "Next to check",
                      key="next_check", on_click=check_next, icon=":material/arrow_forward:", type="primary",
                      width="stretch")
        elif n_marked:
            st.markdown(f":green[**All {n_marked} checked.**] Tap any track to change it.")
        marked = frozenset(order)
        listed = order + sorted((t.id for t in board.tracks if t.id not in marked),
                                key=lambda i: S.track_label(board.tracks[i]))
        st.selectbox("Track", listed, key="sel_track", format_func=track_option(marked), index=None,
                     label_visibility="collapsed", on_change=select_track,
                     placeholder="Tap a track on the board, or pick it here")
        if tid is not None:
            current = owners.get(tid)
            if ss.get("owner_pick") not in owner_options:
                ss["owner_pick"] = current or "nobody"
            st.segmented_control(f"Owner of {S.track_label(board.tracks[tid])}", owner_options, key="owner_pick",
                                 on_change=set_owner, width="stretch")
            st.caption(S.check_reason(tid, tab, photo, review))
            if tid in {t.track_id for t in S.still_doubtful(tab, photo)}:
                st.button(f"Right as read: {S.who(photo.tracks[tid].owner)}", key="mark_right", on_click=mark_right,
                          args=(tid,), icon=":material/check:", width="stretch")
            if photo is not None and photo.board_jpeg:
                as_taken = _decoded(photo.board_jpeg)
                st.image(rgb(cut(as_taken, track_photo_window(tid))), width="stretch",
                         caption=f"As photographed: {as_taken.shape[1] / board.board_mm[0]:.1f} pixels a mm, "
                                 "nothing painted")
        with st.container(key="row_undo"):
            u1, u2 = st.columns(2)
            steps = ss["steps"]
            if steps:
                last = steps[-1]
                u1.button(f"Undo: {board.tracks[last.track_id].a}{S.DASH}{board.tracks[last.track_id].b} back to "
                          f"{S.who(last.before)}", key="undo", on_click=undo_step, icon=":material/undo:",
                          width="stretch")
                if len(steps) > 1 and photo is not None:
                    u2.button(f"Undo all {len(steps)} changes", key="undo_all", on_click=undo_all,
                              icon=":material/restart_alt:", width="stretch")
        if photo is not None:
            n_fixed = sum(1 for k, v in owners.items() if photo.owners().get(k) != v)
            st.caption(f"{n_fixed} corrected. A track's chance is how often the reader is right on such "
                       "evidence; under 95 % it asks you to look.")

# 3. Players, tickets, score track ------------------------------------------------------------
# Before a photo, the setup waits folded away (the photo sets the players from the cars found).
def players_section() -> None:
    """Variant, players, and per player: name, score-track marker (its verdict beside it, and
    the track that would explain a disagreement), tickets."""
    if have_board:
        st.header("Players and tickets", divider="gray")
    if ss.get("variant_note"):
        st.info(ss.pop("variant_note"), icon=":material/info:")
    g1, g2 = st.columns([3, 2])
    g1.selectbox("Variant", list(VARIANTS), key="variant", format_func=lambda v: VARIANTS[v].title,
                 on_change=variant_changed)
    values = VARIANTS[ss["variant"]].ticket_values
    if len(values) > 1:
        if ss.get("ticket_values") not in values:
            ss["ticket_values"] = values[0]
        g2.radio("Ticket values", values, key="ticket_values", horizontal=True,
                 format_func=lambda v: f"{v} cards")
    else:
        ss["ticket_values"] = values[0]
    st.multiselect("Players (train colours)", PLAYER_COLORS, key="players", max_selections=5,
                   help="Set from the trains on the photo; change it here.")
    if len(players) < 2:
        st.warning("Pick at least two player colours.")
    unlisted = S.sort_players({o for o in ss["owners"].values() if o} - set(players))
    if unlisted:
        st.warning(f"{', '.join(c.capitalize() for c in unlisted)}: tracks on the board but not a player "
                   "above. They are scored all the same; add them to enter their tickets.")
    labels = S.ticket_labels(ss["variant"], ss["ticket_values"])
    checks = {p.color: p.score_track for p in scored.score_sheet.players} if scored else {}
    hints = {h.color: h for h in S.marker_hints(tab, photo, claims=review.claims)} if scored else {}
    put_remembered_names(players)
    for c in players:
        key = f"tickets_{c}"
        if key in ss:  # (a restored game's tickets are all in its deck; nothing else gets here)
            ss[key] = [k for k in ss[key] if k in labels]
        with st.container(key=f"row_player_{c}"):
            n1, n2 = st.columns([3, 2], vertical_alignment="top")
            n1.text_input(f"{c.capitalize()}: name", key=f"name_{c}", placeholder=c.capitalize())
            # a marker's verdict is its label, so it shows wherever the field does
            check = checks.get(c)
            n2.number_input("Score track" if not check else f":green[✓ routes make {check.expected}]"
                            if check.matches else f":red[**✗ routes make {check.expected}**]",
                            key=f"marker_{c}", min_value=0, max_value=999, value=None, step=1, placeholder="marker")
            if c in hints:
                marker_hint(hints[c])
            st.multiselect(f"{name_of(c)}: tickets", list(labels), key=key,
                           format_func=labels.get, placeholder="Tickets: type a city…",
                           label_visibility="collapsed", select_all=False)
            aside_t = ss["set_aside_tickets"].get(c)
            if aside_t:
                st.caption(f"Set aside (not in this deck): {', '.join(aside_t)}")


def marker_hint(hint: S.MarkerHint) -> None:
    """Under a marker that disagrees: the tracks the photo doubts that would explain it, each
    fixed in one tap, or that none does."""
    gap = hint.reported - hint.expected
    text = (f"The marker says {hint.reported}, the routes on the board make {hint.expected} "
            f"({abs(gap)} {'short' if gap > 0 else 'over'}).")
    if hint.fixes:
        everyone = all(tab.score_track.get(c) is not None for c in players)
        text += (" The likeliest misread first:" if not hint.fixes[0].all_agree
                 else " With this change every marker agrees:" if everyone
                 else " With this change the markers entered agree:")
    else:
        text += (" No single track the photo doubts explains it: recount the marker, or check the tracks marked ?."
                 if photo is not None else " No single track explains it: recount the marker.")
    st.warning(text, icon=":material/scoreboard:")
    for n, f in enumerate(hint.fixes):
        st.button(S.fix_text(f, tab), key=f"fix_{hint.color}_{n}", on_click=apply_fix, args=(f.track_id, f.owner),
                  icon=":material/build:", width="stretch")


if have_board:
    players_section()
else:
    with st.expander("Players and tickets (or photograph the board first: the players come from the cars found)",
                     icon=":material/group:"):
        players_section()

# 4. Results -----------------------------------------------------------------------------------
tab = table()
if score_error:
    st.error(f"Cannot score this game: {score_error}", icon=":material/error:")
if scored is not None:
    sheet = scored.score_sheet
    st.header("Results", divider="gray")
    by_color = {p.color: p for p in sheet.players}
    winners = sheet.winners
    names = [tab.display_name(c) for c in winners]
    decided = S.decided_text(sheet.decided_by)
    if len(winners) == 1:
        st.success(f"**{names[0]} wins** with {by_color[winners[0]].total} points. {decided}",
                   icon=":material/trophy:")
    else:
        st.success(f"**Shared win: {' and '.join(names)}**, {by_color[winners[0]].total} points "
                   f"each. {decided}", icon=":material/trophy:")
    rows = "".join(
        f"<tr><td class='n'>{p.place}</td><td><span class='dot' style='background:{PLAYER_CSS[p.color]}'></span>"
        f"{p.name}" + (f"<span class='note'>{p.note}</span>" if p.note else "")
        + f"</td><td class='t'>{p.total}</td></tr>"
        for p in S.ranking(sheet, tab))
    st.markdown(f"<table class='ttr-rank' data-testid='ttr-ranking'>{rows}</table>", unsafe_allow_html=True)
    if not review.ok:
        aside = review.set_aside
        st.warning("**Not counted until checked:** " + "; ".join(
            ([f"{len(aside)} track{'s' if len(aside) > 1 else ''} the rules forbid as read (marked ? on the board)"]
             if aside else [])
            + [f"{t.owner}'s ticket {S.DASH.join(t.ticket)} (already held by another player)"
               for t in review.set_aside_tickets]) + ".", icon=":material/rule:")
        if aside:
            st.button("Check them", key="check_aside", on_click=pick_track, args=(aside[0].track_id,),
                      icon=":material/search:")
    per_row = min(len(sheet.players), 3)
    # rows of columns, so that on a phone (columns stacked) players keep their order
    cells = [c for i in range(0, len(sheet.players), per_row) for c in st.columns(per_row)]
    for cell, p in zip(cells, sheet.players):
        crown = " :material/trophy:" if p.color in winners else ""
        with cell.expander(f"{tab.display_name(p.color)}: {p.total}{crown}"):
            rows = S.player_rows(p, tab.variant)
            st.table({"": [r[0] for r in rows], "points": [r[1] for r in rows]})
            check = p.score_track
            if check:
                st.caption(f"Score track {check.reported}: " + (
                    "matches the routes ✓" if check.matches
                    else f"routes make {check.expected} ✗"))

    holders = [p.color for p in sheet.players if p.longest_path_bonus]
    choices = (["bonus"] if holders else []) + [p.color for p in sheet.players]
    path_labels = {c: name_of(c) for c in choices if c != "bonus"}
    path_labels["bonus"] = "the bonus holder" + ("s" if len(holders) > 1 else "")
    if ss.get("path_holders") != holders:  # new holders: show them, not an older pick
        ss["path_holders"] = holders
        ss.pop("path_pick", None)
    with st.expander("Longest paths, drawn", icon=":material/timeline:", expanded=False):
        pick = st.radio("Show the longest path of", choices, horizontal=True, key="path_pick",
                        format_func=path_labels.get)
        show = holders if pick == "bonus" else [pick]
        paths = {c: by_color[c].longest_path_tracks for c in show}
        st.image(rgb(draw_paths(draw_tracks(board_scene(), ss["owners"], fill=owner_fill()), paths)),
                 caption=" · ".join(f"{name_of(c)}: {by_color[c].longest_path} trains, "
                                    + S.DASH.join(by_color[c].longest_path_cities)
                                    for c in show), width="stretch")

    # 5. Share and save ------------------------------------------------------------------------
    when = time.strftime("%d %b %Y")
    title = f"{VARIANTS[sheet.variant].title.split(' (')[0]} · {when}"
    share = (board_scene(), dict(ss["owners"]), {c: by_color[c].longest_path_tracks for c in holders},
             S.share_rows(sheet, tab), title)
    text = S.results_text(sheet, tab, when)
    with st.container(key="row_share"):
        s1, s2 = st.columns(2)
        s1.download_button("Results picture", lambda: results_picture(*share), file_name="ttr-results.jpg",
                           mime="image/jpeg", key="share_picture", on_click="ignore", icon=":material/image:",
                           width="stretch", type="primary")
        s2.download_button("Results text", text, file_name="ttr-results.txt", mime="text/plain",
                           key="share_text", on_click="ignore", icon=":material/chat:", width="stretch")
    with st.expander("The results as text (to copy)", icon=":material/content_copy:"):
        st.code(text, language=None, wrap_lines=True)
    ss["saved_json"] = S.export_json(scored.game)  # kept, so what was offered can be checked
    with st.container(key="row_save"):
        e1, e2 = st.columns(2)
        e1.download_button("Save game (JSON)", ss["saved_json"], file_name="ttr-game.json",
                           mime="application/json", key="dl_json", icon=":material/download:",
                           width="stretch")
        e2.download_button("Scores (CSV)", S.sheet_csv(sheet, tab.names), file_name="ttr-scores.csv",
                           mime="text/csv", key="dl_csv", icon=":material/table:", width="stretch")
    st.caption("This game is also kept on this computer as it changes (below: games played here)."
               + (" The saved file leaves out what was not counted." if not review.ok else ""))

save_game(tab, scored)

with st.expander("Games played here", icon=":material/history:"):
    games = history().games()
    if not games:
        st.caption("Scored games are kept here (also `ttr history`).")
    for g in games:
        s = g.summary
        when = time.strftime("%d %b %H:%M", time.localtime(g.created))
        totals = ", ".join(f"{p.name or p.color.capitalize()} {p.total}"
                           for p in sorted(s.players, key=lambda p: -p.total))
        this = " (this game)" if g.id == ss["game_id"] else ""
        st.markdown(f"**{when}** · {VARIANTS[s.variant].title.split(' (')[0]} · {totals} · "
                    f"winner: {s.winner_text()}{this}")
        with st.container(key=f"row_game_{g.id}"):
            h1, h2 = st.columns([3, 1])
            h1.button("Open", key=f"open_{g.id}", on_click=open_saved, args=(g.id,), icon=":material/folder_open:",
                      width="stretch", disabled=bool(this))
            h2.button("Delete", key=f"delete_{g.id}", on_click=ask_delete, args=(g.id,), type="tertiary",
                      icon=":material/delete:", width="stretch")
        if ss.get("delete_asked") == g.id:
            st.warning(f"Delete the game of {when} for good? It cannot be undone.", icon=":material/delete:")
            with st.container(key=f"row_game_{g.id}_sure"):
                d1, d2 = st.columns(2)
                d1.button("Keep it", key="delete_no", on_click=keep_saved, width="stretch")
                d2.button("Delete for good", key="delete_yes", on_click=delete_saved, args=(g.id,),
                          type="primary", width="stretch")

with st.expander("Load a saved game (JSON)", icon=":material/upload_file:"):
    st.file_uploader("A game file saved here or written for `ttr tally`", type=["json"],
                     key="restore", on_change=restore_game, max_upload_size=MAX_UPLOAD_MB)
    if ss.get("restore_error"):
        st.error(ss["restore_error"], icon=":material/error:")

with st.expander("Calibrate the reader to your own board (optional)", icon=":material/tune:"):
    st.caption("Printings differ. Photograph your board empty (no trains), whole, in your usual "
               "light; the reader then compares every space with how it looks on your board. "
               f"Kept in {CALIBRATION_DIR} for later games (like `ttr calibrate`).")
    st.file_uploader("Photos of the empty board", type=["jpg", "jpeg", "png", "webp", "heic", "heif"],
                     accept_multiple_files=True, key="calib_photos", max_upload_size=MAX_UPLOAD_MB)
    k1, k2 = st.columns(2)
    if k1.button("Calibrate", key="calibrate", icon=":material/tune:",
                 disabled=not ss.get("calib_photos"), width="stretch"):
        calibrate()
    if saved_calibration():
        k2.button("Forget the calibration", key="forget_calibration", on_click=forget_calibration,
                  icon=":material/delete:", width="stretch")
    if ss.get("calib_error"):
        st.error(ss["calib_error"], icon=":material/error:")
    if ss.get("calib_note"):
        st.success(ss["calib_note"])
