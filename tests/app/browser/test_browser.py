"""The page in a real browser: `ttr app --local` on a free port (behind the table's secret, opened
by the address it prints), headless Chromium driven by Playwright (Debian's /usr/bin/chromium;
never a downloaded browser).

On a phone (390 x 844), one game at the table: the photo first; the reading seen without scrolling
past any setup; a doubtful track picked from the list, zoomed, beside the photo of it as taken
(its own pixels, nothing painted), then each doubtful track found right a tap each; a ticket typed
(no "select all matches" to tap by mistake); a doubtful track taken for nobody (as a player sure
the print is bare might: the example's Atlanta - New Orleans, yellow cars on yellow print), and its
owner's marker, typed, says at once beside it that the routes disagree, and names that track (and
never one the photo is sure of), fixed in one tap; the page reloaded and everything
found as it was; the ranking; the results picture and text to share; the game saved as JSON.
At 1280 x 900: the board and the list side by side; the doubtful tracks checked a tap each (the
count the docs give); a track tapped on the board and given to another player; the verdict beside
a marker; a file that is not an image; a 12 MP photo's time. At both sizes, a photo of the board
from another side added (the reading becomes both photos', what it settles and brings said), a photo
of another game refused with the game kept, and a reload keeping both photos. Then: Delete asks
first; names come back in a new game; and without the secret, no page and no game. Every number is
checked against `scoring` (and the photos' reading against `vision.several`) called directly.

Screenshots (docs/screenshots: phone_1_photo.png, phone_2_check.png, phone_3_results.png,
phone_4_photos.png and results.png) are written where TTR_SCREENSHOTS names (`TTR_SCREENSHOTS=docs/screenshots pytest
tests/app/browser` retakes them), otherwise into the test's temporary folder.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import cv2
import numpy as np
import pytest
from ttr_testing import doubt_taken_for_nobody

from app import state as S
from app.draw import cut, track_photo_window
from scoring.board import load_board
from scoring.rules import route_points
from vision.several import PhotoPart, combine

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "board.jpg"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
BOARD = load_board()
SERVER_LOG: list[Path | None] = [None]  # the running `ttr app`'s output, quoted when a test fails

if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api")
expect = playwright.expect
if not EXAMPLE.exists():
    pytest.skip("examples/board.jpg is not there", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`ttr app --local` on a free port: yields the address it prints for this computer (with the
    table's secret; the first visit leaves the cookie that opens the page after it)."""
    port = free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    SERVER_LOG[0] = log
    env = dict(os.environ, TTR_CALIBRATION_DIR=str(tmp_path_factory.mktemp("calibration")),
               TTR_HISTORY_DB=str(tmp_path_factory.mktemp("history") / "history.sqlite"))
    with open(log, "wb") as out:  # its own session, so that everything it starts stops together
        proc = subprocess.Popen(["ttr", "app", "--local", "--port", str(port)], cwd=ROOT, stdout=out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
    visit = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())  # (as a browser: with the cookie)
    try:
        for _ in range(120):
            found = re.search(r"^This computer: (http://\S+)$", log.read_text(), re.M)
            try:
                if found and visit.open(found.group(1), timeout=1).status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("ttr app did not start: " + log.read_text()[-2000:])
        yield found.group(1)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def launch(p, profile: Path):
    return p.chromium.launch_persistent_context(str(profile), executable_path=CHROMIUM, headless=True, args=ARGS,
                                                viewport={"width": 1280, "height": 1800}, accept_downloads=True)


@pytest.fixture(scope="module")
def pw():
    with playwright.sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(pw, tmp_path_factory):
    ctx = launch(pw, tmp_path_factory.mktemp("profile"))
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    wanted = os.environ.get("TTR_SCREENSHOTS")
    return Path(wanted) if wanted else tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="module")
def reading():
    """The example photo read directly (the reader is deterministic: the page reads the same)."""
    from vision.read import Reader

    return Reader().read_path(str(EXAMPLE))


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the script has finished running and images have loaded."""
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=timeout_ms)
    page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=timeout_ms)
    page.wait_for_timeout(300)


def scrolled(page) -> float:
    return page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop")


def label_of(track_id: int) -> str:
    return S.track_label(BOARD.tracks[track_id])


def owner_picker(page, track_id: int):
    return page.get_by_test_id("stButtonGroup").filter(has_text="Owner of " + label_of(track_id))


def new_game_with_the_example(page, server: str, size: dict) -> None:
    page.set_viewport_size(size)
    page.goto(server)
    page.get_by_role("button", name=re.compile("New game")).wait_for()
    settle(page)
    page.get_by_role("button", name=re.compile("New game")).click()
    settle(page)
    page.get_by_role("button", name=re.compile("Example")).click()
    page.get_by_text(re.compile(r"board\.jpg: \d+ tracks claimed")).wait_for(timeout=120_000)
    settle(page)


def pick_from_list(page, track_id: int) -> None:
    """Choose a track in the track list, typing part of its name as a person does."""
    box = page.locator(".st-key-sel_track")
    box.scroll_into_view_if_needed()
    box.get_by_role("combobox").click()
    page.keyboard.type(BOARD.tracks[track_id].a)
    page.get_by_role("option", name=re.compile(re.escape(label_of(track_id)) + "$")).click()
    expect(owner_picker(page, track_id)).to_be_visible(timeout=30_000)
    settle(page)


def expect_zoomed_beside_the_photo_as_taken(page, reading, track_id: int) -> None:
    """The view is the track's, and beside the reading the photo of that track as taken: the
    photo's own pixels (its width), nothing painted (the same pixels as the photo's board)."""
    expect(page.locator(".st-key-zoom[data-stale=false] button[aria-checked=true]")).to_have_text("Track")
    _, board_img = board_image(page)
    for _ in range(100):  # the track's view is 4:3, the whole board about 3:2
        box = board_img.bounding_box()
        if box and abs(box["width"] / box["height"] - 4 / 3) < 0.03:
            break
        page.wait_for_timeout(200)
    assert abs(box["width"] / box["height"] - 4 / 3) < 0.03, box
    as_taken = cv2.imdecode(np.frombuffer(cv2.imencode(".jpg", S.board_as_taken(str(EXAMPLE), reading),
                                                       [cv2.IMWRITE_JPEG_QUALITY, 88])[1], np.uint8), 1)
    want = cut(as_taken, track_photo_window(track_id))
    img = page.get_by_test_id("stImage").filter(has_text="As photographed").locator("img")
    expect(img).to_be_visible()
    assert img.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [want.shape[1], want.shape[0]]
    shown = page.request.get(img.evaluate("i => i.src")).body()
    got = cv2.imdecode(np.frombuffer(shown, np.uint8), cv2.IMREAD_COLOR)
    assert np.abs(got.astype(int) - want).mean() < 4  # (JPEG's noise; a painted track differs by far more)


def board_image(page):
    """The board's picture (in the component's frame), once the frame shows it: one frame, grown
    to its picture (a new picture may come in a new frame, the old one going as it loads)."""
    frames = page.locator('iframe[title*="streamlit_image_coordinates"]')
    for _ in range(150):
        if frames.count() == 1:
            box = frames.bounding_box()
            if box and box["height"] > 0.5 * box["width"]:
                break
        page.wait_for_timeout(200)
    assert frames.count() == 1
    return frames, page.frame_locator('iframe[title*="streamlit_image_coordinates"]').locator("#image")


def verdict(page, color: str):
    return page.locator(f".st-key-row_player_{color}").get_by_test_id("stNumberInput").get_by_text(
        re.compile("routes make"))


def expect_verdict_in_view(page, color: str, marker: int, routes: int, size: dict) -> None:
    """Type a marker; its verdict shows beside it at once, without scrolling."""
    field = page.locator(f".st-key-row_player_{color}").get_by_test_id("stNumberInput").locator("input")
    field.scroll_into_view_if_needed()
    before = scrolled(page)
    field.fill(str(marker))
    field.press("Enter")
    mark = "✓" if marker % 100 == routes % 100 else "✗"
    expect(verdict(page, color)).to_have_text(f"{mark} routes make {routes}", timeout=30_000)
    settle(page)
    box = verdict(page, color).bounding_box()
    assert scrolled(page) == before
    assert 0 <= box["y"] and box["y"] + box["height"] <= size["height"], box
    field_box = field.bounding_box()
    assert abs(box["x"] - field_box["x"]) < 40 and 0 < field_box["y"] - box["y"] < 60  # beside it: its label


def fix_buttons(page, color: str):
    return page.locator(f"[class*='st-key-fix_{color}_']").get_by_role("button")


def fix_texts(page, color: str) -> list[str]:
    """The fixes offered under a player's marker, as they read (the icon's name left out)."""
    return [t.split("\n")[-1].strip() for t in fix_buttons(page, color).all_inner_texts()]


def expected(reading, owners_change: dict, tickets: dict, markers: dict, checked=(), names=None):
    """What `scoring` says for the example photo after the same changes."""
    photo = S.photo_check(reading)
    owners = {t.track_id: t.owner for t in reading.tracks} | owners_change
    players = S.sort_players(o for o in owners.values() if o)  # the page takes them from the photo
    tab = S.TableState(players=players, owners=owners, tickets=tickets, score_track=markers, checked=list(checked),
                       names=names or {})
    return S.score(tab, photo), tab


def ranking_rows(page) -> list[str]:
    return [" ".join(r.split()) for r in page.locator("table.ttr-rank tr").all_inner_texts()]


def expect_ranking(page, scored, tab) -> None:
    want = [f"{p.place} {p.name}{' ' + p.note if p.note else ''} {p.total}" for p in S.ranking(scored.sheet, tab)]
    for _ in range(100):
        if ranking_rows(page) == want:
            break
        page.wait_for_timeout(200)
    assert ranking_rows(page) == want


def in_first_screen(locator, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 60) <= height


def shoot(page, shots: Path, name: str, top=None) -> None:
    """Screenshot of the window, scrolled so that `top` (a locator) is at its top."""
    if top is not None:
        top.evaluate("e => e.scrollIntoView({block: 'start'})")
    settle(page)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / name))


def test_a_game_at_the_table_on_a_phone(server, browser, reading, shots):
    page = browser.new_page()
    page.set_viewport_size(PHONE)
    page.goto(server)
    page.get_by_role("button", name=re.compile("New game")).click()
    uploader = page.get_by_test_id("stFileUploader").first
    uploader.wait_for()
    settle(page)
    # the first screen is the photo: camera/upload and the example, no scrolling
    assert in_first_screen(uploader, PHONE["height"])
    example = page.get_by_role("button", name=re.compile("Example"))
    assert in_first_screen(example, PHONE["height"])
    shoot(page, shots, "phone_1_photo.png")

    example.click()
    page.get_by_text(re.compile(r"board\.jpg: \d+ tracks claimed")).wait_for(timeout=120_000)
    settle(page)
    # the reading, seen without scrolling past any setup: the summary and the top of the board
    assert scrolled(page) == 0
    summary = page.get_by_test_id("stAlert").filter(has_text="tracks claimed")
    assert in_first_screen(summary, PHONE["height"])
    assert board_image(page)[0].bounding_box()["y"] < PHONE["height"] - 100
    doubtful = sorted(reading.doubtful, key=lambda t: t.confidence)
    n = len(doubtful)
    expect(page.get_by_text(f"{n} to check", exact=True)).to_be_visible()

    # a doubtful track picked from the list: zoomed, beside the photo of it as taken; its reason in one line
    first = doubtful[0]
    pick_from_list(page, first.track_id)
    expect_zoomed_beside_the_photo_as_taken(page, reading, first.track_id)
    reason = S.photo_check(reading).tracks[first.track_id].reason
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text=reason)).to_be_visible()
    # the owner buttons: one line, 44 px high, the owner read chosen
    expect(owner_picker(page, first.track_id).get_by_role("radio")).to_have_count(
        len(S.sort_players(reading.claims())) + 1)
    settle(page)
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll('.st-key-owner_pick button'))
        .map(b => b.getBoundingClientRect()).map(r => ({y: r.y, height: r.height, right: r.right}))""")
    assert len({round(b["y"]) for b in boxes}) == 1 and min(b["height"] for b in boxes) >= 44, boxes
    assert max(b["right"] for b in boxes) <= PHONE["width"]
    expect(owner_picker(page, first.track_id).locator("button[aria-checked=true]")).to_have_text(first.owner)
    shoot(page, shots, "phone_2_check.png", top=page.locator(".st-key-zoom"))
    # each found right a tap: the next is picked for it
    for t in doubtful:
        expect(owner_picker(page, t.track_id)).to_be_visible(timeout=30_000)
        page.get_by_role("button", name=re.compile("Right as read")).click()
        settle(page)
    expect(page.get_by_text(f"All {n} checked.")).to_be_visible()

    # a ticket, typed as at the table: "Denv" offers the Denver tickets one by one, no "select all"
    blue = page.locator(".st-key-row_player_blue")
    tickets = blue.get_by_test_id("stMultiSelect")
    tickets.scroll_into_view_if_needed()
    tickets.get_by_role("combobox").click()
    page.keyboard.type("Denv")
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    offered = options.all_inner_texts()
    assert offered and all(o.startswith("Denver – ") for o in offered), offered
    assert not page.get_by_text(re.compile(r"select (all|\d+ match)", re.I)).count()
    page.keyboard.press("Enter")  # the first, highlighted: one ticket
    page.keyboard.press("Escape")
    settle(page)
    chosen = tickets.locator("span[data-tag]").all_inner_texts()
    assert chosen == [offered[0]], chosen
    ticket = offered[0].rsplit(" (", 1)[0]

    # the example's doubtful track a player might take for nobody (now Atlanta - New Orleans:
    # yellow cars on yellow print) taken for nobody; its owner's marker, typed where the true routes
    # put it: its verdict beside it, and the hint there names that track, with how sure the photo is
    doubt = doubt_taken_for_nobody(reading)
    taken, owner = doubt.track_id, doubt.owner
    pts = route_points(BOARD.tracks[taken].length)
    pick_from_list(page, taken)
    owner_picker(page, taken).get_by_role("radio", name="nobody").click()
    expect(page.get_by_test_id("stCaptionContainer").filter(has_text=f"Corrected: the photo read {owner}")
           ).to_be_visible(timeout=30_000)
    settle(page)
    truth_owner = sum(route_points(t.length) for t in reading.tracks if t.owner == owner)
    expect_verdict_in_view(page, owner, truth_owner, truth_owner - pts, PHONE)
    hint = page.get_by_test_id("stAlert").filter(has_text=f"The marker says {truth_owner}")
    expect(hint).to_contain_text(f"the routes on the board make {truth_owner - pts} ({pts} short)")
    confidence = {t.track_id: t.confidence for t in reading.tracks}
    by_label = {label_of(t.id): t.id for t in BOARD.tracks}
    fixes = fix_texts(page, owner)
    assert fixes[0].startswith(f"Give {label_of(taken)} to {owner.capitalize()}: {pts} points (the photo gives "
                               f"{owner.capitalize()} {confidence[taken]:.0%})"), fixes
    # green's marker over by as much: only tracks the photo is sure of (or gives green too little) would explain it
    other = "green" if owner != "green" else "blue"
    truth_other = sum(route_points(t.length) for t in reading.tracks if t.owner == other)
    expect_verdict_in_view(page, other, truth_other + pts, truth_other, PHONE)
    expect(page.get_by_test_id("stAlert").filter(has_text=f"The marker says {truth_other + pts}")).to_contain_text(
        "No single track the photo doubts explains it")
    for text in fixes + fix_texts(page, other):  # never a track the photo is sure of (nor 95 % sure)
        named = next(label for label in by_label if label in text)
        assert confidence[by_label[named]] < S.SURE <= 0.95, text
    other_field = page.locator(f".st-key-row_player_{other}").get_by_test_id("stNumberInput").locator("input")
    other_field.fill("")
    other_field.press("Enter")
    settle(page)
    fix_buttons(page, owner).first.click()
    expect(hint).to_have_count(0, timeout=30_000)
    expect(verdict(page, owner)).to_have_text(f"✓ routes make {truth_owner}")
    settle(page)
    scored, tab = expected(reading, {}, {"blue": [ticket]}, {owner: truth_owner},
                           checked=[t.track_id for t in doubtful])
    expect_ranking(page, scored, tab)
    before_reload = ranking_rows(page)
    url = page.url
    assert "game=" in url and "token=" not in url  # (the secret left the address on the first visit)

    # reload: everything as it was
    page.reload()
    page.get_by_text(re.compile(r"board\.jpg: \d+ tracks claimed")).wait_for(timeout=60_000)
    settle(page)
    assert page.url == url
    expect(page.get_by_text(f"All {n} checked.")).to_be_visible()
    blue = page.locator(".st-key-row_player_blue")
    expect(blue.get_by_test_id("stMultiSelect")).to_contain_text(offered[0])
    mine = page.locator(f".st-key-row_player_{owner}")
    expect(mine.get_by_test_id("stNumberInput").locator("input")).to_have_value(str(truth_owner))
    expect(page.get_by_test_id("stAlert").filter(has_text="The marker says")).to_have_count(0)
    undo = f"Undo: {BOARD.tracks[taken].a}{S.DASH}{BOARD.tracks[taken].b} back to nobody"
    expect(page.get_by_role("button", name=re.compile(re.escape(undo)))).to_be_visible()

    # the ranking
    assert ranking_rows(page) == before_reload
    winners = scored.sheet["winners"]
    expect(page.get_by_test_id("stAlert").filter(has_text="wins")).to_contain_text(tab.display_name(winners[0]))
    results = page.get_by_role("heading", name=re.compile("^Results"))
    shoot(page, shots, "phone_3_results.png", top=results)
    # no element sticks out to the right (which would make the page scroll sideways)
    widest = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
        '[data-testid="stMainBlockContainer"] *')).map(e => e.getBoundingClientRect().right))""")
    assert widest <= PHONE["width"] + 1, widest

    # share: the results picture (the board under the ranking) and the text, a tap each
    with page.expect_download() as download:
        page.get_by_role("button", name=re.compile("Results picture")).click()
    picture = cv2.imread(download.value.path())
    assert download.value.suggested_filename == "ttr-results.jpg"
    assert picture.shape[1] == 1400 and picture.shape[0] > round(1400 * 525 / 795) + 40 * len(winners)
    with page.expect_download() as download:
        page.get_by_role("button", name=re.compile("Results text")).click()
    assert Path(download.value.path()).read_text() == S.results_text(scored.score_sheet, tab, time.strftime("%d %b %Y"))

    # save the game: the file `ttr tally` reads, the game as scored
    with page.expect_download() as download:
        page.get_by_role("button", name=re.compile("Save game")).click()
    saved = json.loads(Path(download.value.path()).read_text())
    assert saved == json.loads(S.export_json(scored.game))
    page.close()


def test_a_game_at_the_table_on_a_desktop(server, browser, reading, shots, tmp_path):
    page = browser.new_page()
    new_game_with_the_example(page, server, DESKTOP)

    # the board and the list side by side, both on the screen
    board_box = board_image(page)[0].bounding_box()
    list_box = page.locator(".st-key-sel_track").bounding_box()
    assert list_box["x"] >= board_box["x"] + board_box["width"]
    assert list_box["y"] < board_box["y"] + board_box["height"] and board_box["y"] < list_box["y"] + list_box["height"]
    assert board_box["y"] + 100 < DESKTOP["height"] and list_box["y"] + list_box["height"] < DESKTOP["height"]

    # checking the doubtful tracks: "Next to check", then "Right as read" for each: the taps counted
    doubtful = sorted(reading.doubtful, key=lambda t: t.confidence)
    taps = 0
    page.get_by_role("button", name=re.compile("Next to check")).click()
    taps += 1
    settle(page)
    for t in doubtful:
        expect(owner_picker(page, t.track_id)).to_be_visible(timeout=30_000)
        if t is doubtful[0]:
            expect_zoomed_beside_the_photo_as_taken(page, reading, t.track_id)
        page.get_by_role("button", name=re.compile("Right as read")).click()
        taps += 1
        settle(page)
    expect(page.get_by_text(f"All {len(doubtful)} checked.")).to_be_visible()
    print(f"checking the example's {len(doubtful)} doubtful tracks: {taps} taps")
    assert taps == len(doubtful) + 1
    # the count the docs give (docs/app.md, "Checking what the reader doubts")
    docs = " ".join((ROOT / "docs" / "app.md").read_text().split())
    said = re.search(r"\(`examples/board\.jpg`, (\w+) doubtful tracks?\) checking everything takes \*\*(\d+) taps\*\*",
                     docs)
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    assert said and said.groups() == (words[len(doubtful)], str(taps)), said
    # a doubtful track picked from the list at this size too
    pick_from_list(page, doubtful[-1].track_id)
    expect_zoomed_beside_the_photo_as_taken(page, reading, doubtful[-1].track_id)

    # tap the middle of the longest sure track on the whole board; give it to a player the rules allow
    page.locator(".st-key-zoom").get_by_role("radio", name="Whole").click()
    settle(page)
    track = max((t for t in reading.tracks if t.owner and not t.doubtful), key=lambda t: t.length)
    from calibration.template import load_template

    tpl = load_template()
    _, image = board_image(page)
    box = image.bounding_box()
    x, y = tpl.tracks[track.track_id].centers()[len(tpl.tracks[track.track_id].centers()) // 2]
    image.click(position={"x": x / tpl.board_mm[0] * box["width"], "y": y / tpl.board_mm[1] * box["height"]})
    expect(owner_picker(page, track.track_id)).to_be_visible(timeout=30_000)
    settle(page)
    expect(page.locator(".st-key-zoom[data-stale=false] button[aria-checked=true]")).to_have_text("Track")  # zoomed to it
    choices = owner_picker(page, track.track_id).get_by_role("radio").all_inner_texts()
    trains = {c: sum(t.length for t in reading.tracks if t.owner == c) for c in choices}
    new_owner = next(c for c in sorted(choices, key=lambda c: trains[c])
                     if c not in (track.owner, "nobody") and trains[c] + track.length <= 45)
    owner_picker(page, track.track_id).get_by_role("radio", name=new_owner).click()
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text=f"Corrected: the photo read {track.owner}")).to_be_visible(timeout=30_000)
    settle(page)
    scored, tab = expected(reading, {track.track_id: new_owner}, {}, {}, checked=[t.track_id for t in doubtful])
    expect_ranking(page, scored, tab)
    # a marker's verdict beside it, at this size too
    mine = next(p for p in scored.score_sheet.players if p.color == new_owner)
    expect_verdict_in_view(page, new_owner, mine.route_points + 1, mine.route_points, DESKTOP)
    # the detail of each player, opened
    for p in scored.sheet["players"]:
        page.get_by_test_id("stExpander").filter(has_text=re.compile(rf"{p['color'].capitalize()}: {p['total']}"),
                                                 has_not_text="The results as text").locator("summary").click()
    settle(page)
    tables = page.get_by_test_id("stTable")
    expect(tables).to_have_count(len(scored.sheet["players"]))
    for i, p in enumerate(scored.sheet["players"]):
        expect(tables.nth(i)).to_contain_text(re.compile(rf"Total\s*{p['total']}\s*$"), timeout=30_000)
    shoot(page, shots, "results.png", top=page.get_by_role("heading", name=re.compile("^Results")))

    # A file that is not an image: a clear message, and the game stays
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        files=[{"name": "notes.jpg", "mimeType": "image/jpeg", "buffer": b"these are not pixels"}])
    page.get_by_text(re.compile("notes.jpg: not an image")).wait_for(timeout=60_000)
    settle(page)
    expect_ranking(page, scored, tab)

    # A 12 MP photo (rendered by ttr), the model warm (the example was read by this server): from
    # choosing the file to its reading on the page
    subprocess.run(["ttr", "render", "--out", str(tmp_path), "--count", "1", "--seed", "3", "--size", "4032x3024"],
                   check=True, capture_output=True)
    big = next(tmp_path.glob("*.jpg"))
    t0 = time.perf_counter()
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(str(big))
    page.get_by_text(re.compile(rf"{re.escape(big.name)}: \d+ tracks claimed")).wait_for(timeout=120_000)
    seconds = time.perf_counter() - t0
    shown = page.get_by_test_id("stAlert").filter(has_text="tracks claimed").inner_text()
    reader_s = float(re.search(r"read in ([\d.]+) s", shown).group(1))
    line = f"12 MP photo {big.name}: {seconds:.2f} s from choosing it to its reading shown (reader {reader_s:.1f} s)"
    print(line)
    assert seconds < 15, line  # the target is 1.5 s on this machine; this only catches a hang
    page.close()


@pytest.fixture(scope="module")
def both_photos(board_photos):
    """The example and the side photo (tests/app/conftest.py) read together by the library
    directly, named as the page names them."""
    from vision.read import Reader

    reader = Reader()
    parts = []
    for name, path in (("board.jpg", EXAMPLE), ("side.jpg", board_photos.side)):
        trace = reader.trace_path(str(path))
        trace.reading.image = name
        parts.append(PhotoPart(name, trace))
    return S.photo_check(combine(reader, parts).reading)


def add_another_photo(page, path: Path) -> None:
    """Open "Add a photo of this board from another side" (it folds as the page changes), choose
    a file there, and wait until it is sent."""
    more = page.locator(".st-key-more_photos")
    if more.locator("details").get_attribute("open") is None:
        more.locator("summary").click()
    uploader = page.locator(".st-key-more_photo")
    expect(uploader).to_be_visible(timeout=30_000)
    settle(page)
    uploader.locator('input[type="file"]').set_input_files(str(path))
    expect(uploader).to_contain_text(path.name, timeout=60_000)


def wait_for_alert(page, text: str, timeout_ms: int = 120_000, chosen: Path | None = None):
    """The message that says `text`, once shown (failing, what the page says instead, and the
    server's last words). With `chosen` (the file just chosen in the uploader for another photo):
    if no message came and the page is idle, having never read that file, it is chosen once more;
    once, on CI, the browser's choice of a file reached the uploader but started no run."""
    alert = page.get_by_test_id("stAlert").filter(has_text=text)
    try:
        alert.wait_for(timeout=timeout_ms)
        return alert
    except playwright.Error:
        pass
    idle = page.get_by_test_id("stStatusWidget").count() == 0
    if chosen is not None and idle and not page.get_by_test_id("stAlert").filter(has_text=chosen.name).count():
        print(f"{chosen.name}: chosen, but the page did not read it; chosen again")
        add_another_photo(page, chosen)
        try:
            alert.wait_for(timeout=timeout_ms)
            return alert
        except playwright.Error:
            pass
    said = page.get_by_test_id("stAlert").all_inner_texts() + page.get_by_test_id("stException").all_inner_texts()
    uploaders = page.get_by_test_id("stFileUploader").all_inner_texts()
    log = SERVER_LOG[0].read_text(errors="replace")[-1500:] if SERVER_LOG[0] and SERVER_LOG[0].exists() else ""
    pytest.fail(f"no message {text!r}; the page says: {said}; its uploaders: {uploaders}; "
                f"{'idle' if idle else 'still running'}; the server's last words: {log!r}")


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_photo_from_another_side_another_game_refused_and_a_reload(server, browser, reading, board_photos,
                                                                     both_photos, shots, size):
    page = browser.new_page()
    new_game_with_the_example(page, server, size)
    first = S.photo_check(reading)
    # under the reading: add a photo of this board from another side (folded: the board stays in view)
    more = page.locator(".st-key-more_photos")
    expect(more).to_contain_text("Add a photo of this board from another side")
    if size is PHONE:
        assert board_image(page)[0].bounding_box()["y"] < PHONE["height"] - 100
    add_another_photo(page, board_photos.side)
    summary = wait_for_alert(page, "2 photos read together (board.jpg, side.jpg)", chosen=board_photos.side)
    settle(page)
    want = both_photos
    news = S.photo_news(S.TableState(), first, want, "side.jpg")
    assert board_photos.emptied in news.doubts  # (the side photo shows that track empty: the photos disagree)
    for kind, text in S.news_texts(news, want, S.TableState()):
        expect(page.get_by_test_id("stAlert").filter(has_text=text)).to_be_visible()
    n = len(want.doubtful)
    expect(page.get_by_text(f"{n} to check", exact=True)).to_be_visible()
    owners = want.owners()
    tab = S.TableState(players=S.sort_players(o for o in owners.values() if o), owners=owners)
    scored = S.score(tab, want)
    expect_ranking(page, scored, tab)
    if size is PHONE:
        shoot(page, shots, "phone_4_photos.png", top=summary)
        widest = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
            '[data-testid="stMainBlockContainer"] *')).map(e => e.getBoundingClientRect().right))""")
        assert widest <= PHONE["width"] + 1, widest

    # a photo of another game: refused, said why, and the game as it was
    add_another_photo(page, board_photos.other)
    refused = wait_for_alert(page, "other.jpg: it shows another game position than board.jpg",
                             chosen=board_photos.other)
    settle(page)
    expect(refused).to_contain_text("The game is as it was.")
    expect(summary).to_be_visible()
    expect(page.get_by_text(f"{n} to check", exact=True)).to_be_visible()
    expect_ranking(page, scored, tab)

    # a reload: both photos, and their reading, as they were
    url = page.url
    page.reload()
    summary.wait_for(timeout=60_000)
    settle(page)
    assert page.url == url
    expect(page.get_by_text(f"{n} to check", exact=True)).to_be_visible()
    expect_ranking(page, scored, tab)
    more.locator("summary").click()
    expect(more.get_by_text("Photos of this board: board.jpg, side.jpg.")).to_be_visible()
    page.close()


def test_delete_asks_first_and_names_come_back_in_a_new_game(server, browser):
    page = browser.new_page()
    page.set_viewport_size(PHONE)
    page.goto(server)
    page.get_by_role("button", name=re.compile("New game")).click()
    expect(page.get_by_text("A new game: photograph the board.")).to_be_visible(timeout=30_000)
    settle(page)
    page.get_by_role("button", name=re.compile("By hand")).click()
    expect(page.locator(".st-key-sel_track")).to_be_visible(timeout=30_000)
    settle(page)
    red = page.locator(".st-key-row_player_red").get_by_test_id("stTextInput").locator("input")
    red.fill("Ada")
    red.press("Enter")
    settle(page)
    pick_from_list(page, next(t.id for t in BOARD.tracks if {t.a, t.b} == {"Seattle", "Helena"}))
    page.locator(".st-key-owner_pick").get_by_role("radio", name="red").click()
    expect(page.get_by_test_id("stAlert").filter(has_text="Ada (red) wins")).to_be_visible(timeout=30_000)
    settle(page)
    game = re.search(r"game=(\w+)", page.url).group(1)

    # a new game: Ada is red again
    page.get_by_role("button", name=re.compile("New game")).click()
    expect(page.get_by_text("A new game: photograph the board.")).to_be_visible(timeout=30_000)
    settle(page)
    expect(page.locator(".st-key-row_player_red").get_by_test_id("stTextInput").locator("input")).to_have_value("Ada")

    # Delete asks first
    games = page.get_by_test_id("stExpander").filter(has_text="Games played here")
    games.locator("summary").click()
    settle(page)
    listed = games.get_by_text("Ada 25")
    expect(listed).to_be_visible()
    page.locator(f".st-key-delete_{game}").get_by_role("button").click()
    settle(page)
    expect(page.get_by_text(re.compile("for good\\? It cannot be undone"))).to_be_visible()
    expect(listed).to_be_visible()  # still there
    page.get_by_role("button", name="Keep it").click()
    settle(page)
    expect(page.get_by_text(re.compile("for good\\?"))).to_have_count(0)
    expect(listed).to_be_visible()
    page.locator(f".st-key-delete_{game}").get_by_role("button").click()
    settle(page)
    page.get_by_role("button", name="Delete for good").click()
    settle(page)
    expect(listed).to_have_count(0)
    page.close()


def test_without_the_secret_there_is_no_page_and_no_game(server, browser, pw, tmp_path):
    base = server.split("?")[0].rstrip("/")
    page = browser.new_page()  # (with the cookie: a game to look for)
    page.goto(server)
    settle(page)
    game = re.search(r"game=(\w+)", page.url).group(1)
    page.close()
    stranger = launch(pw, tmp_path / "profile")  # another browser on this network: no cookie
    try:
        page = stranger.new_page()
        for address in (base + "/", f"{base}/?game={game}", f"{base}/?game={game}&token=guess"):
            answer = page.goto(address)
            assert answer.status == 403
            assert "needs the table's secret" in page.content()
            assert page.locator('[data-testid="stApp"]').count() == 0
        page.goto(server)  # the printed address opens it
        page.get_by_role("button", name=re.compile("New game")).wait_for(timeout=60_000)
    finally:
        stranger.close()
