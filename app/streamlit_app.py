"""ttr's page: photograph a finished board, check and correct what was read, score the game.

Run with `ttr app` or `streamlit run app/streamlit_app.py`. Phone first, top to bottom: the photo
(camera, upload, the example), the board to check (tracks to check first, in words; tap to fix;
undo one step at a time), players (names, tickets, score-track markers), results (a ranking, then
the detail; a marker that disagrees says which track would explain it, fixed in one tap), save,
then games played here, loading a saved game and calibration. The page holds no rule of the game:
reading comes from `vision`, every score and every rule from `scoring`; its state is
`app.state` (plain values) and `app.history` keeps it across reloads.

Session state (plain values, kept across reruns):
  game_id               the row of `app.history` this page saves to (also `?game=` in the address)
  owners                track id -> player colour, after corrections
  steps                 `app.state.Step` list: owner changes, for undo one at a time
  checked               doubtful track ids a person found right as read
  photo_check           the last photo's `app.state.PhotoCheck` (None: a drawn board)
  set_aside_tickets     colour -> ticket keys a variant switch set aside
  pending               widget values to set before the widgets are drawn on the next run
Widget keys: variant, ticket_values, players, name_<c>, tickets_<c>, marker_<c>, photo,
camera, use_camera, example, by_hand, new_game, zoom, board_click, sel_track, owner_pick, undo,
undo_all, mark_right, fix_<i>, check_<i>, path_pick, dl_json, dl_csv, open_<id>, delete_<id>, restore,
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
from app.draw import board_canvas, draw_paths, draw_tracks, nearest_track  # noqa: E402
from app.history import GameSummary, History, new_id  # noqa: E402
from app.launch import MAX_UPLOAD_MB  # noqa: E402
from calibration.user import load_calibration  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from scoring.rules import PLAYER_COLORS, VARIANTS  # noqa: E402
from vision.palette import PLAYER_CSS, PLAYER_MARKDOWN  # noqa: E402
from vision.calibrate import fit_calibration  # noqa: E402
from vision.read import Reader  # noqa: E402
from vision.reading import DOUBTFUL_TRACKS  # noqa: E402

# The bundled example: examples/ in a checkout; installed, it ships as app/examples (pyproject).
EXAMPLE = next((p for p in (ROOT / "examples" / "board.jpg", Path(__file__).parent / "examples" / "board.jpg")
                if p.exists()), None)
DISPLAY_WIDTH = 1400  # pixels of the board image sent to the browser
# Views of the board to tap on: label, left and right edge as fractions of the board's width.
ZOOM = {"whole": ("Whole board", 0.0, 1.0), "west": ("West", 0.0, 0.45),
        "middle": ("Middle", 0.275, 0.725), "east": ("East", 0.55, 1.0)}
CSS = """
<style>
.block-container {max-width: 1000px; padding-top: 2.2rem;}
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
[class*="st-key-row_player_"] [data-testid="stHorizontalBlock"],
.st-key-row_save [data-testid="stHorizontalBlock"] {flex-wrap: nowrap !important; gap: .5rem;}
.st-key-row_title [data-testid="stColumn"], .st-key-row_photo [data-testid="stColumn"], [class*="st-key-row_player_"] [data-testid="stColumn"],
.st-key-row_save [data-testid="stColumn"] {min-width: 0 !important; width: auto !important; flex: 1 1 0 !important;}
@media (max-width: 640px) {
  .block-container {padding-left: .7rem; padding-right: .7rem; padding-top: .6rem;}
  h1 {font-size: 1.05rem !important; padding-bottom: .2rem !important;}
  .st-key-row_title button p {font-size: .8rem;}
  h2 {font-size: 1.15rem !important; padding-top: .6rem !important;}
  [data-testid="stFileUploaderDropzoneInstructions"] {display: none;}
  [data-testid="stFileUploaderDropzone"] {padding: .5rem;}
}
</style>
"""

st.set_page_config(page_title="ttr · Ticket to Ride scorer", page_icon=":material/train:", layout="wide")
st.markdown(CSS, unsafe_allow_html=True)
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


def show_table(tab: S.TableState, photo: S.PhotoCheck | None) -> None:
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
    ss["variant_was"] = tab.variant
    ss["sel_track"] = None
    ss["photo_dirty"] = False  # (the database holds this photo's image, or none)


def open_game(game_id: str) -> bool:
    """Show a saved game; False if there is none with that id."""
    saved = history().load(game_id)
    if saved is None:
        return False
    tab = S.TableState.from_json(saved.state["table"])
    photo = (S.PhotoCheck.from_json(saved.state["photo"], saved.photo or b"")
             if saved.state.get("photo") else None)
    show_table(tab, photo)
    ss["game_id"] = game_id
    ss["saved_state"] = json.dumps(saved.state, sort_keys=True)
    return True


def new_game() -> None:
    show_table(S.TableState(), None)
    for k in ("photo_error", "photo_note", "restore_error", "saved_state"):
        ss.pop(k, None)
    ss["game_id"] = new_id()
    ss["game_note"] = "A new game: photograph the board."


def has_content(tab: S.TableState) -> bool:
    return bool(any(tab.owners.values()) or ss["photo_check"] is not None or any(tab.tickets.values())
                or any(v is not None for v in tab.score_track.values()) or any(tab.names.values()))


def save_game(tab: S.TableState, scored: S.Scored | None) -> None:
    """Write the game to the history when it changed (the photo's image only when it changed)."""
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
    history().save(ss["game_id"], state, summary, photo=photo.board_jpeg if (photo and dirty) else None,
                   keep_photo=not (dirty and photo is None))
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
    # The browser sends the chosen label back; a track's label gains or loses its "(?)"/"(!)"
    # mark when it is checked or corrected, so a label no longer among the options is mapped back.
    _plain = ss["sel_track"].removeprefix("(!) ").removeprefix("(?) ")
    ss["sel_track"] = next((t.id for t in board.tracks if S.track_label(t) == _plain), None)
ss.setdefault("variant", "classic")
ss.setdefault("players", ["red", "blue"])
ss.setdefault("zoom", "whole")
ss.setdefault("variant_was", ss["variant"])


def name_of(color: str) -> str:
    name = (ss.get(f"name_{color}") or "").strip()
    return name or color.capitalize()


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


def board_jpeg(flattened) -> bytes:
    img = flattened
    if img.shape[1] > DISPLAY_WIDTH:
        h = round(img.shape[0] * DISPLAY_WIDTH / img.shape[1])
        img = cv2.resize(img, (DISPLAY_WIDTH, h), interpolation=cv2.INTER_AREA)
    return cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 88])[1].tobytes()


def read_photo(name: str, data: bytes) -> None:
    """Read `data` and put its tracks on the page; a bad photo leaves everything as it was."""
    ss["photo_error"] = None
    if len(data) > MAX_UPLOAD_MB * 1024 * 1024:
        ss["photo_error"] = (f"{name} is {len(data) / 1024 / 1024:.0f} MB; photos up to "
                             f"{MAX_UPLOAD_MB} MB are read. Send a smaller copy (any phone photo fits).")
        return
    with st.status(f"Reading {name}…", expanded=False) as status:
        t0 = time.perf_counter()
        # The reader's own file path (EXIF, a big JPEG decoded reduced) is used as it is, from a
        # temporary copy; its messages name that copy, so the person's file name is put back.
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ("photo" + (Path(name).suffix.lower() or ".jpg"))
            path.write_bytes(data)
            try:
                reading = reader(saved_calibration()).read_path(str(path))
            except TtrError as e:
                status.update(label=f"Could not read {name}", state="error", expanded=False)
                msg = str(e).replace(str(path), name)
                ss["photo_error"] = msg if msg.startswith(name) else f"{name}: {msg}"
                return
        reading.image = name
        photo = S.photo_check(reading, board_jpeg(reading.flattened))
        status.update(label=f"Read {name} in {time.perf_counter() - t0:.1f} s", state="complete")
    ss["photo_check"] = photo
    ss["photo_dirty"] = True
    ss["owners"] = photo.owners()
    ss["steps"] = []
    ss["checked"] = []
    # The players are the colours on the board, and anyone already given a name or a ticket.
    entered = {c for c in ss["players"] if ss.get(f"name_{c}") or ss.get(f"tickets_{c}")
               or ss.get(f"marker_{c}") is not None}
    players = S.sort_players({o for o in ss["owners"].values() if o} | entered)
    # (the widgets showing these are drawn further down this same run: no rerun needed)
    ss["sel_track"] = None
    if len(players) >= 2 and players != S.sort_players(ss["players"]):
        ss["players"] = players


def take_photo(widget_key: str) -> None:
    f = ss.get(widget_key)
    if f is not None:
        ss["photo_in"] = (f.name, f.getvalue())


def take_example() -> None:
    ss["photo_in"] = (EXAMPLE.name, EXAMPLE.read_bytes())


# ---------------------------------------------------------------------------------------------
# Correcting owners

def set_aside_now() -> set[int]:
    return set(ss.get("set_aside_ids") or ())


def tracks_in_order() -> list[int]:
    """Tracks the rules set aside first, then doubtful ones (least sure first), then every
    track by city names."""
    photo = ss["photo_check"]
    first = sorted(set_aside_now())
    doubtful = sorted(S.still_doubtful(table(), photo), key=lambda t: t.confidence)
    first += [t.track_id for t in doubtful if t.track_id not in first]
    rest = sorted((t.id for t in board.tracks if t.id not in set(first)),
                  key=lambda i: S.track_label(board.tracks[i]))
    return first + rest


def track_option(marked: frozenset[int], aside: frozenset[int]):
    """Labels for the track list. They must not change while a track is selected (the browser
    keeps the chosen label), so owners are shown by the picker below, not here; and they read no
    session state (AppTest formats values outside the script run)."""
    return lambda tid: ("(!) " if tid in aside else "(?) " if tid in marked else "") + S.track_label(board.tracks[tid])


def doubtful_ids() -> set[int]:
    """Doubtful tracks still to check (not yet found right, not corrected)."""
    return {t.track_id for t in S.still_doubtful(table(), ss["photo_check"])}


def mark_right(tid: int) -> None:
    if tid not in ss["checked"]:
        ss["checked"].append(tid)


def select_track() -> None:
    tid = ss.get("sel_track")
    if tid is not None:
        ss["owner_pick"] = ss["owners"].get(tid) or "nobody"


def pick_track(tid: int) -> None:
    ss["sel_track"] = tid
    ss["owner_pick"] = ss["owners"].get(tid) or "nobody"


def click_board() -> None:
    click = ss.get("board_click")
    if not click:
        return
    x0, x1, w, h = ss["board_view"]  # the part of the board shown (scene pixels) and its size
    tid = nearest_track(x0 + click["x"] * (x1 - x0) / click["width"], click["y"] * h / click["height"], w, h)
    if tid is not None:
        pick_track(tid)


def set_owner() -> None:
    tid, pick = ss.get("sel_track"), ss.get("owner_pick")
    if tid is None or pick is None:
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


def board_scene():
    """The flattened photo (or a drawn board), at display size, BGR."""
    photo = ss["photo_check"]
    if photo is None or not photo.board_jpeg:
        return _canvas(DISPLAY_WIDTH)
    return _decoded(photo.board_jpeg)


def owner_fill() -> float:
    """How opaque the owners' colours are drawn: on a photo, faint, so the cars under them can
    be compared with what was read; on a drawn board, solid."""
    return 0.25 if ss["photo_check"] is not None and ss["photo_check"].board_jpeg else 0.85


def rgb(bgr):
    return bgr[:, :, ::-1].copy()


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
    ss["photo_dirty"] = True
    ss["photo_note"] = f"Restored {f.name}: the board below is drawn, not photographed."


def open_saved(game_id: str) -> None:
    if open_game(game_id):
        ss["game_note"] = "Opened a game from the list."


def delete_saved(game_id: str) -> None:
    history().delete(game_id)
    if game_id == ss["game_id"]:
        new_game()
        ss["game_note"] = "Deleted this game; here is a new one."


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
if ss.get("photo_in"):
    read_photo(*ss.pop("photo_in"))
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
ss["set_aside_ids"] = sorted(scored.review.set_aside_ids()) if scored else []

# 2. Check and correct -------------------------------------------------------------------------
if have_board:
    photo = ss["photo_check"]
    aside = scored.review.set_aside if scored else ()
    if photo is not None:
        n_claimed = sum(1 for t in photo.tracks if t.owner)
        n_open = len(doubtful_ids())
        st.success(f"{photo.image}: {n_claimed} tracks claimed, {len(photo.doubtful)} doubtful"
                   + (f" ({n_open} still to check, marked ?)" if n_open else " (all checked)")
                   + (f", {len(aside)} not counted by the rules (marked !)" if aside else "")
                   + f". Read in {photo.elapsed_ms / 1000:.1f} s.", icon=":material/check_circle:")
        for w in photo.warnings:
            if w.code != DOUBTFUL_TRACKS:  # (those are listed first in the track list below)
                st.warning(w.text, icon=":material/warning:")
    owners = ss["owners"]
    read = photo.owners() if photo else {}
    n_fixed = sum(1 for k, v in owners.items() if photo is not None and read.get(k) != v)
    scene = board_scene()
    shown = draw_tracks(scene, owners, doubtful_ids(), ss.get("sel_track"), fill=owner_fill(),
                        set_aside=set_aside_now())
    # On a phone the whole board is ~360 px wide; a third of it, as wide as the column, is easy to tap.
    st.segmented_control("Zoom", list(ZOOM), key="zoom", label_visibility="collapsed",
                         format_func=lambda z: ZOOM[z][0])
    _, f0, f1 = ZOOM[ss.get("zoom") or "whole"]
    x0, x1 = round(f0 * scene.shape[1]), round(f1 * scene.shape[1])
    ss["board_view"] = (x0, x1, scene.shape[1], scene.shape[0])
    streamlit_image_coordinates(rgb(shown[:, x0:x1]), key="board_click", width="stretch",
                                on_click=click_board, image_format="JPEG", jpeg_quality=85,
                                cursor="crosshair")
    order = tracks_in_order()
    n_check = len(set(doubtful_ids()) | set_aside_now())
    st.selectbox("Track", order, key="sel_track",
                 format_func=track_option(frozenset(doubtful_ids()), frozenset(set_aside_now())), index=None,
                 label_visibility="collapsed", on_change=select_track,
                 placeholder=(f"{n_check} to check first: pick one, or tap a track" if n_check
                              else "Tap a track on the board, or pick it here"))
    tid = ss.get("sel_track")
    if tid is not None:
        current = owners.get(tid)
        options = ["nobody"] + players + ([current] if current and current not in players else [])
        if ss.get("owner_pick") not in options:
            ss["owner_pick"] = current or "nobody"
        st.radio(f"Owner of {S.track_label(board.tracks[tid])}", options, key="owner_pick",
                 horizontal=True, on_change=set_owner,
                 format_func=lambda c: f"{PLAYER_MARKDOWN[None if c == 'nobody' else c]} {c}")
        for s in aside:
            if s.track_id == tid:
                st.caption(f"Not counted: {s.reason}")
        if photo is not None:
            t = photo.tracks[tid]
            said = (f"Doubtful: {t.reason}" if t.doubtful
                    else f"The photo reads {S.who(t.owner)} ({t.confidence:.0%} sure).")
            if t.doubtful and tid in ss["checked"] and current == t.owner:
                said = f"Checked: right as read ({S.who(t.owner)})."
            st.caption(("Corrected. As read: " if current != t.owner else "") + said)
            if tid in doubtful_ids():
                st.button(f"Right as read: {S.who(t.owner)}", key="mark_right", on_click=mark_right, args=(tid,),
                          icon=":material/check:")
    u1, u2 = st.columns(2)
    steps = ss["steps"]
    if steps:
        last = steps[-1]
        u1.button(f"Undo: {S.track_label(board.tracks[last.track_id]).split(' (')[0]} back to {S.who(last.before)}",
                  key="undo", on_click=undo_step, icon=":material/undo:", width="stretch")
        if len(steps) > 1 and photo is not None:
            u2.button(f"Undo all {len(steps)} changes", key="undo_all", on_click=undo_all,
                      icon=":material/restart_alt:", width="stretch")
    if photo is not None:
        st.caption(f"{n_fixed} corrected. A track's chance is how often the reader is right on such "
                   "evidence; under 95 % it asks you to look.")

# 3. Players, tickets, score track ------------------------------------------------------------
# Before a photo, the setup waits folded away (the photo sets the players from the cars found).
def players_section() -> None:
    """Variant, players, and per player: name, score-track marker, tickets."""
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
    for c in players:
        key = f"tickets_{c}"
        if key in ss:  # (a restored game's tickets are all in its deck; nothing else gets here)
            ss[key] = [k for k in ss[key] if k in labels]
        with st.container(key=f"row_player_{c}"):
            n1, n2 = st.columns([3, 2], vertical_alignment="bottom")
            n1.text_input(f"{PLAYER_MARKDOWN[c]} {c.capitalize()}: name", key=f"name_{c}", placeholder=c.capitalize())
            n2.number_input("Score track", key=f"marker_{c}", min_value=0, max_value=999, value=None,
                            step=1, placeholder="marker")
            st.multiselect(f"{PLAYER_MARKDOWN[c]} {name_of(c)}: tickets", list(labels), key=key,
                           format_func=labels.get, placeholder="Tickets: type a city…", label_visibility="collapsed")
            aside_t = ss["set_aside_tickets"].get(c)
            if aside_t:
                st.caption(f"Set aside (not in this deck): {', '.join(aside_t)}")


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
    review = scored.review
    if not review.ok:
        st.warning("**Not counted until checked** (the rules forbid them as read):\n" + "\n".join(
            [f"- {S.track_label(board.tracks[s.track_id])}: {s.reason}" for s in review.set_aside]
            + [f"- {t.owner}'s ticket {S.DASH.join(t.ticket)}: {t.reason}" for t in review.set_aside_tickets]),
            icon=":material/rule:")
        cols = st.columns(min(3, max(1, len(review.set_aside))))
        for n, s in enumerate(review.set_aside):
            cols[n % len(cols)].button(f"Check {S.track_label(board.tracks[s.track_id]).split(' (')[0]}",
                                       key=f"check_{s.track_id}", on_click=pick_track, args=(s.track_id,),
                                       icon=":material/search:", width="stretch")
    n_fix = 0
    for hint in S.marker_hints(tab, ss["photo_check"], claims=review.claims):
        gap = hint.reported - hint.expected
        text = (f"**{tab.display_name(hint.color)}**: the score track says {hint.reported}, the routes on "
                f"the board make {hint.expected} ({abs(gap)} {'short' if gap > 0 else 'over'}).")
        if hint.fixes:
            best = hint.fixes[0]
            everyone = all(tab.score_track.get(c) is not None for c in players)
            text += (" The likeliest misread first: tap to fix." if not best.all_agree
                     else " With the change below every marker agrees:" if everyone
                     else " With the change below the markers entered agree:")
        else:
            text += " No single track explains it: recount the marker, or check the tracks above."
        st.warning(text, icon=":material/scoreboard:")
        for f in hint.fixes:
            st.button(S.fix_text(f, tab), key=f"fix_{n_fix}", on_click=apply_fix, args=(f.track_id, f.owner),
                      icon=":material/build:", width="stretch")
            n_fix += 1
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
    path_labels = {c: f"{PLAYER_MARKDOWN[c]} {name_of(c)}" for c in choices if c != "bonus"}
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

    # 5. Save ----------------------------------------------------------------------------------
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
        h1, h2 = st.columns(2)
        h1.button("Open", key=f"open_{g.id}", on_click=open_saved, args=(g.id,), icon=":material/folder_open:",
                  width="stretch", disabled=bool(this))
        h2.button("Delete", key=f"delete_{g.id}", on_click=delete_saved, args=(g.id,), icon=":material/delete:",
                  width="stretch")

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
