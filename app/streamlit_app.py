"""ttr's page: photograph a finished board, check and correct what was read, score the game.

Run with `ttr app` or `streamlit run app/streamlit_app.py`. One page, top to bottom: setup,
photo, check and correct, tickets and score track, results, export (and calibration). The page
holds no rule of the game: reading comes from `vision`, every score from `scoring`.

Session state (all plain values, kept across reruns):
  owners / read_owners  track id -> player colour (after corrections / as read)
  reading               the last `vision.reading.Reading` (flattened board, doubtful tracks)
  pending               widget values to set before the widgets are drawn on the next run
Widget keys: variant, ticket_values, players, name_<c>, tickets_<c>, marker_<c>, photo,
camera, use_camera, example, by_hand, zoom, board_click, sel_track, owner_pick, undo, path_pick,
dl_json, dl_csv, restore, calib_photos, calibrate, forget_calibration.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import streamlit as st

# `streamlit run app/streamlit_app.py` puts app/ on the path, not the project: an installed ttr
# is found as it is; a plain checkout (not installed) is put on the path.
ROOT = Path(__file__).resolve().parents[1]
if importlib.util.find_spec("scoring") is None:
    sys.path.insert(0, str(ROOT))

from app import state as S  # noqa: E402
from app.launch import MAX_UPLOAD_MB  # noqa: E402
from scoring.board import load_board  # noqa: E402
from scoring.errors import TtrError  # noqa: E402
from scoring.rules import PLAYER_COLORS, VARIANTS  # noqa: E402

# The bundled example: examples/ in a checkout; installed, it ships as app/examples (pyproject).
EXAMPLE = next((p for p in (ROOT / "examples" / "board.jpg", Path(__file__).parent / "examples" / "board.jpg")
                if p.exists()), None)
DISPLAY_WIDTH = 1400  # pixels of the board image sent to the browser
# Views of the board to tap on: label, left and right edge as fractions of the board's width.
ZOOM = {"whole": ("Whole board", 0.0, 1.0), "west": ("West", 0.0, 0.45),
        "middle": ("Middle", 0.275, 0.725), "east": ("East", 0.55, 1.0)}
# Coloured dots in Streamlit markdown (labels, radio options, messages): no emoji font needed.
DOT = {"red": ":red[●]", "blue": ":blue[●]", "green": ":green[●]", "yellow": ":yellow[●]", "black": "●",
       None: ":gray[○]"}
CSS = """
<style>
.block-container {max-width: 1100px; padding-top: 2.2rem;}
.ttr-total {float: right; font-size: 1.7rem; font-weight: 700; line-height: 1.0;}
@media (max-width: 640px) {
  .block-container {padding-left: .8rem; padding-right: .8rem; padding-top: 1rem;}
  h1 {font-size: 1.6rem !important;}
  h2 {font-size: 1.3rem !important;}
}
</style>
"""

st.set_page_config(page_title="ttr · Ticket to Ride scorer", page_icon=":material/train:", layout="wide")
st.markdown(CSS, unsafe_allow_html=True)
ss = st.session_state
board = load_board()

# Values set by a callback or by a restore, applied before the widgets that show them exist.
for _k, _v in ss.pop("pending", {}).items():
    ss[_k] = _v
ss.setdefault("variant", "classic")
ss.setdefault("players", ["red", "blue"])
ss.setdefault("owners", {})
ss.setdefault("read_owners", {})
ss.setdefault("reading", None)
ss.setdefault("zoom", "whole")


def name_of(color: str) -> str:
    name = (ss.get(f"name_{color}") or "").strip()
    return name or color.capitalize()


def table() -> S.TableState:
    """Everything entered so far, as plain values."""
    players = S.sort_players(ss["players"])
    variant = ss["variant"]
    values = ss.get("ticket_values") or VARIANTS[variant].ticket_values[0]
    return S.TableState(
        variant=variant, ticket_values=values, players=players,
        names={c: (ss.get(f"name_{c}") or "").strip() for c in players},
        owners=dict(ss["owners"]),
        tickets={c: list(ss.get(f"tickets_{c}", [])) for c in players},
        score_track={c: ss.get(f"marker_{c}") for c in players})


# ---------------------------------------------------------------------------------------------
# Reading a photo (the reader and its model load once per server: st.cache_resource)

CALIBRATION_DIR = Path(os.environ.get("TTR_CALIBRATION_DIR") or Path.home() / ".ttr" / "calibration")


@st.cache_resource(show_spinner="Loading the photo reader…")
def reader(calibration_dir: str | None):
    """The photo reader (template, classifier, your board's calibration), loaded once per server."""
    from vision.read import Reader

    calibration = None
    if calibration_dir:
        from calibration.fit import load_calibration

        calibration = load_calibration(calibration_dir)
    return Reader(calibration)


def saved_calibration() -> str | None:
    return str(CALIBRATION_DIR) if (CALIBRATION_DIR / "calibration.json").exists() else None


def read_photo(name: str, data: bytes) -> None:
    """Read `data` and put its tracks on the page; a bad photo leaves everything as it was."""
    ss["photo_error"] = None
    if len(data) > MAX_UPLOAD_MB * 1024 * 1024:
        ss["photo_error"] = (f"{name} is {len(data) / 1024 / 1024:.0f} MB; photos up to "
                             f"{MAX_UPLOAD_MB} MB are read. Send a smaller copy (any phone photo fits).")
        return
    with st.status(f"Reading {name}…", expanded=True) as status:
        st.write("Finding the board, flattening it, reading 309 spaces")
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
        status.update(label=f"Read {name} in {time.perf_counter() - t0:.1f} s", state="complete",
                      expanded=False)
    reading.image = name
    owners = {t.track_id: t.owner for t in reading.tracks}
    ss["reading"] = reading
    ss["owners"] = dict(owners)
    ss["read_owners"] = dict(owners)
    # The players are the colours on the board, and anyone already given a name or a ticket.
    entered = {c for c in ss["players"] if ss.get(f"name_{c}") or ss.get(f"tickets_{c}")
               or ss.get(f"marker_{c}") is not None}
    players = S.sort_players({o for o in owners.values() if o} | entered)
    pending = {"sel_track": None}
    if len(players) >= 2 and players != S.sort_players(ss["players"]):
        pending["players"] = players
        ss["photo_note"] = ("Players set from the trains on the photo: " + ", ".join(players) + ".")
    ss["pending"] = pending
    st.rerun()


def take_photo(widget_key: str) -> None:
    f = ss.get(widget_key)
    if f is not None:
        ss["photo_in"] = (f.name, f.getvalue())


def take_example() -> None:
    ss["photo_in"] = (EXAMPLE.name, EXAMPLE.read_bytes())


# ---------------------------------------------------------------------------------------------
# Correcting owners

def tracks_in_order() -> list[int]:
    """Doubtful tracks first (least sure first), then every track by city names."""
    reading = ss["reading"]
    doubtful = sorted(reading.doubtful, key=lambda t: t.confidence) if reading else []
    first = [t.track_id for t in doubtful]
    rest = sorted((t.id for t in board.tracks if t.id not in set(first)),
                  key=lambda i: S.track_label(board.tracks[i]))
    return first + rest


def track_option(doubtful: frozenset[int]):
    """Labels for the track list. They must not change while a track is selected (the browser
    keeps the chosen label), so owners are shown by the picker below, not here; and they read no
    session state (AppTest formats values outside the script run)."""
    return lambda tid: ("(?) " if tid in doubtful else "") + S.track_label(board.tracks[tid])


def doubtful_ids() -> set[int]:
    return {t.track_id for t in ss["reading"].doubtful} if ss["reading"] else set()


def select_track() -> None:
    tid = ss.get("sel_track")
    if tid is not None:
        ss["owner_pick"] = ss["owners"].get(tid) or "nobody"


def click_board() -> None:
    from app.draw import nearest_track

    click = ss.get("board_click")
    if not click:
        return
    x0, x1, w, h = ss["board_view"]  # the part of the board shown (scene pixels) and its size
    tid = nearest_track(x0 + click["x"] * (x1 - x0) / click["width"], click["y"] * h / click["height"], w, h)
    if tid is not None:
        ss["sel_track"] = tid
        ss["owner_pick"] = ss["owners"].get(tid) or "nobody"


def set_owner() -> None:
    tid, pick = ss.get("sel_track"), ss.get("owner_pick")
    if tid is None or pick is None:
        return
    owners = dict(ss["owners"])
    owners[tid] = None if pick == "nobody" else pick
    ss["owners"] = owners


def undo_corrections() -> None:
    ss["owners"] = dict(ss["read_owners"])
    select_track()


def enter_by_hand() -> None:
    ss["photo_error"] = None
    ss["owners"] = {t.id: None for t in board.tracks}
    ss["read_owners"] = dict(ss["owners"])
    ss["reading"] = None


@st.cache_data(max_entries=8, show_spinner=False)
def _canvas(width: int):
    from app.draw import board_canvas

    return board_canvas(width)


def board_scene():
    """The flattened photo (or a drawn board), at display size, BGR."""
    import cv2

    reading = ss["reading"]
    if reading is None:
        return _canvas(DISPLAY_WIDTH)
    img = reading.flattened
    if img.shape[1] > DISPLAY_WIDTH:
        h = round(img.shape[0] * DISPLAY_WIDTH / img.shape[1])
        img = cv2.resize(img, (DISPLAY_WIDTH, h), interpolation=cv2.INTER_AREA)
    return img


def owner_fill() -> float:
    """How opaque the owners' colours are drawn: on a photo, faint, so the cars under them can
    be compared with what was read; on a drawn board, solid."""
    return 0.25 if ss["reading"] is not None else 0.85


def rgb(bgr):
    return bgr[:, :, ::-1].copy()


# ---------------------------------------------------------------------------------------------
# Calibration

def calibrate() -> None:
    """`ttr calibrate` on the uploaded empty-board photos, saved where the reader looks."""
    from calibration.fit import fit_calibration

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
        except TtrError as e:
            ss["calib_error"] = named(str(e))
            return
        cal.save(CALIBRATION_DIR)
    reader.clear()
    ss["calib_note"] = " ".join([f"Calibrated from {len(files)} photo(s): later photos are read "
                                 "against your own board."] + [named(w) for w in warnings])


def forget_calibration() -> None:
    (CALIBRATION_DIR / "calibration.json").unlink(missing_ok=True)
    reader.clear()


# ---------------------------------------------------------------------------------------------
# Export and restore

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
    pending = {"variant": restored.variant, "players": restored.players,
               "ticket_values": restored.ticket_values, "sel_track": None}
    for c in PLAYER_COLORS:
        pending[f"tickets_{c}"] = restored.tickets.get(c, [])
        pending[f"marker_{c}"] = restored.score_track.get(c)
        pending[f"name_{c}"] = restored.names.get(c, "")
    ss["pending"] = pending
    ss["owners"] = dict(restored.owners)
    ss["read_owners"] = dict(restored.owners)
    ss["reading"] = None
    ss["photo_note"] = f"Restored {f.name}: the board below is drawn, not photographed."


# =============================================================================================
# The page

st.title(":material/train: ttr · Ticket to Ride scorer")
st.caption("Photograph the finished USA board, check what was read, add tickets: exact scores, "
           "with every number explained.")

# 1. Game setup --------------------------------------------------------------------------------
st.header("1 · Game", divider="gray")
c1, c2 = st.columns([1, 1])
c1.selectbox("Variant", list(VARIANTS), key="variant", format_func=lambda v: VARIANTS[v].title)
values = VARIANTS[ss["variant"]].ticket_values
if len(values) > 1:
    if ss.get("ticket_values") not in values:
        ss["ticket_values"] = values[0]
    c2.radio("Ticket values", values, key="ticket_values", horizontal=True,
             format_func=lambda v: f"{v} cards")
else:
    ss["ticket_values"] = values[0]
st.multiselect("Players (train colours)", PLAYER_COLORS, key="players",
               max_selections=5)
players = S.sort_players(ss["players"])
if len(players) < 2:
    st.warning("Pick at least two player colours.")
unlisted = S.sort_players({o for o in ss["owners"].values() if o} - set(players))
if unlisted:
    st.warning(f"{', '.join(c.capitalize() for c in unlisted)}: tracks on the board but not a player "
               "above. They are scored all the same; add them to enter their tickets.")
if players:
    cols = st.columns(len(players))
    for col, c in zip(cols, players):
        col.text_input(f"{DOT[c]} name", key=f"name_{c}", placeholder=c.capitalize())

# 2. Photo -------------------------------------------------------------------------------------
st.header("2 · Photo of the board", divider="gray")
st.file_uploader("Upload a photo of the finished board (JPEG, PNG, WebP, HEIC)", key="photo",
                 type=["jpg", "jpeg", "png", "webp", "heic", "heif"],
                 on_change=take_photo, args=("photo",), max_upload_size=MAX_UPLOAD_MB)
b1, b2, b3 = st.columns([1, 1, 1])
b1.button("Try the example photo", key="example", on_click=take_example, icon=":material/image:",
          width="stretch", disabled=EXAMPLE is None,
          help=None if EXAMPLE else "examples/board.jpg is not in this copy of ttr")
b2.toggle("Use the camera", key="use_camera")
if not ss["owners"]:  # (once a board is on the page, this would throw the corrections away)
    b3.button("Enter routes by hand", key="by_hand", on_click=enter_by_hand, icon=":material/edit:",
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
if ss["reading"] is not None:
    r = ss["reading"]
    n_claimed = sum(1 for t in r.tracks if t.owner)
    st.success(f"{r.image}: {n_claimed} tracks claimed, "
               f"{len(r.doubtful)} doubtful (marked ? below).")
    for w in r.warnings:
        if not w.startswith(f"{len(r.doubtful)} doubtful"):  # (listed first in the track list below)
            st.warning(w, icon=":material/warning:")

# 3. Check and correct -------------------------------------------------------------------------
have_board = bool(ss["owners"])
if have_board:
    st.header("3 · Check and correct", divider="gray")
    from app.draw import draw_tracks
    from streamlit_image_coordinates import streamlit_image_coordinates

    owners = ss["owners"]
    n_fixed = sum(1 for k, v in owners.items() if ss["read_owners"].get(k) != v)
    st.caption("Tap a track on the board (or pick it from the list), then tap its owner. "
               f"Doubtful tracks are ringed in magenta. {n_fixed} corrected so far.")
    scene = board_scene()
    shown = draw_tracks(scene, owners, doubtful_ids(), ss.get("sel_track"), fill=owner_fill())
    # On a phone the whole board is ~360 px wide; a third of it, shown as large, is easy to tap.
    st.segmented_control("Zoom", list(ZOOM), key="zoom", label_visibility="collapsed",
                         format_func=lambda z: ZOOM[z][0])
    _, f0, f1 = ZOOM[ss.get("zoom") or "whole"]
    x0, x1 = round(f0 * scene.shape[1]), round(f1 * scene.shape[1])
    ss["board_view"] = (x0, x1, scene.shape[1], scene.shape[0])
    streamlit_image_coordinates(rgb(shown[:, x0:x1]), key="board_click",
                                width="stretch" if x1 - x0 == scene.shape[1] else "content",
                                on_click=click_board, image_format="JPEG", jpeg_quality=85,
                                cursor="crosshair")
    order = tracks_in_order()
    st.selectbox("Track", order, key="sel_track", format_func=track_option(frozenset(doubtful_ids())), index=None,
                 placeholder="Pick a track (doubtful ones first) or tap it on the board",
                 on_change=select_track)
    tid = ss.get("sel_track")
    if tid is not None:
        current = owners.get(tid)
        options = ["nobody"] + players + ([current] if current and current not in players else [])
        if ss.get("owner_pick") not in options:
            ss["owner_pick"] = current or "nobody"
        st.radio(f"Owner of {S.track_label(board.tracks[tid])}", options, key="owner_pick",
                 horizontal=True, on_change=set_owner,
                 format_func=lambda c: f"{DOT[None if c == 'nobody' else c]} {c}")
        if ss["reading"] is not None:
            t = ss["reading"].tracks[tid]
            said = f"the photo reads {t.owner or 'nobody'} ({t.confidence:.0%} sure)"
            st.caption(("Corrected: " if current != t.owner else "") + said +
                       ("; marked doubtful" if t.doubtful else ""))
    if n_fixed and ss["reading"] is not None:
        st.button("Undo all corrections", key="undo", on_click=undo_corrections, icon=":material/undo:")

# 4. Tickets and score track -------------------------------------------------------------------
st.header("4 · Tickets and score track", divider="gray")
labels = S.ticket_labels(ss["variant"], ss["ticket_values"])
st.caption("Type a city to find a ticket. The score-track number is optional: it is checked "
           "against the route points.")
for c in players:
    key = f"tickets_{c}"
    if key in ss:  # a ticket from another variant's deck cannot stay selected
        ss[key] = [k for k in ss[key] if k in labels]
    t1, t2 = st.columns([4, 1])
    t1.multiselect(f"{DOT[c]} {name_of(c)}: tickets", list(labels), key=key,
                   format_func=labels.get, placeholder="Type a city…")
    t2.number_input("Score track", key=f"marker_{c}", min_value=0, max_value=999, value=None,
                    step=1, placeholder="–")

# 5. Results -----------------------------------------------------------------------------------
if have_board and len(players) >= 2:
    st.header("5 · Results", divider="gray")
    tab = table()
    try:
        game, sheet = S.score(tab)
    except TtrError as e:
        st.error(f"Cannot score this game yet: {e}", icon=":material/error:")
        game = sheet = None
    if sheet is not None:
        by_color = {p["color"]: p for p in sheet["players"]}
        winners = sheet["winners"]
        names = [tab.display_name(c) for c in winners]
        decided = S.decided_text(sheet["decided_by"])
        if len(winners) == 1:
            st.success(f"**{names[0]} wins** with {by_color[winners[0]]['total']} points. {decided}",
                       icon=":material/trophy:")
        else:
            st.success(f"**Shared win: {' and '.join(names)}**, {by_color[winners[0]]['total']} points "
                       f"each. {decided}", icon=":material/trophy:")
        for p in sheet["players"]:
            check = p["score_track"]
            if check and not check["matches"]:
                st.warning(f"{tab.display_name(p['color'])}: the score track says {check['reported']}, "
                           f"the routes on the board make {check['expected']}. Recount the marker or "
                           f"check the tracks above.", icon=":material/warning:")
        per_row = min(len(sheet["players"]), 3)
        # rows of columns, so that on a phone (columns stacked) players keep their order
        cells = [c for i in range(0, len(sheet["players"]), per_row) for c in st.columns(per_row)]
        for cell, p in zip(cells, sheet["players"]):
            with cell.container(border=True):
                crown = " :material/trophy:" if p["color"] in winners else ""
                st.markdown(f"<span class='ttr-total'>{p['total']}</span>"
                            f"**{DOT[p['color']]} {tab.display_name(p['color'])}**{crown}",
                            unsafe_allow_html=True)
                rows = S.player_rows(p, tab.variant)
                st.table({"": [r[0] for r in rows], "points": [r[1] for r in rows]})
                check = p["score_track"]
                if check:
                    st.caption(f"Score track {check['reported']}: " + (
                        "matches the routes ✓" if check["matches"]
                        else f"routes make {check['expected']} ✗"))
        from app.draw import draw_paths, draw_tracks

        st.subheader("Longest paths")
        holders = [p["color"] for p in sheet["players"] if p["longest_path_bonus"]]
        choices = (["bonus"] if holders else []) + [p["color"] for p in sheet["players"]]
        path_labels = {c: f"{DOT[c]} {name_of(c)}" for c in choices if c != "bonus"}
        path_labels["bonus"] = "the bonus holder" + ("s" if len(holders) > 1 else "")
        if ss.get("path_holders") != holders:  # new holders: show them, not an older pick
            ss["path_holders"] = holders
            ss.pop("path_pick", None)
        pick = st.radio("Show the longest path of", choices, horizontal=True, key="path_pick",
                        format_func=path_labels.get)
        show = holders if pick == "bonus" else [pick]
        paths = {c: by_color[c]["longest_path_tracks"] for c in show}
        st.image(rgb(draw_paths(draw_tracks(board_scene(), ss["owners"], fill=owner_fill()), paths)),
                 caption=" · ".join(f"{name_of(c)}: {by_color[c]['longest_path']} trains, "
                                    + S.DASH.join(by_color[c]["longest_path_cities"])
                                    for c in show), width="stretch")

        # 6. Export ----------------------------------------------------------------------------
        st.header("6 · Save", divider="gray")
        e1, e2 = st.columns(2)
        ss["saved_json"] = S.export_json(game)  # kept, so what was offered can be checked
        e1.download_button("Game file (JSON)", ss["saved_json"], file_name="ttr-game.json",
                           mime="application/json", key="dl_json", icon=":material/download:",
                           width="stretch")
        e2.download_button("Score sheet (CSV)", S.sheet_csv(sheet, tab.names), file_name="ttr-scores.csv",
                           mime="text/csv", key="dl_csv", icon=":material/table:", width="stretch")

with st.expander("Load a saved game (JSON)", icon=":material/upload_file:"):
    st.file_uploader("A game file saved here or written for `ttr tally`", type=["json"],
                     key="restore", on_change=restore_game, max_upload_size=MAX_UPLOAD_MB)
    if ss.get("restore_error"):
        st.error(ss["restore_error"], icon=":material/error:")

# 7. Calibration (optional) -------------------------------------------------------------------
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
