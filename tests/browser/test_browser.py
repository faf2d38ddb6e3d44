"""The page in a real browser: `streamlit run` on a free localhost port, headless Chromium driven
by Playwright (Debian's /usr/bin/chromium; never a downloaded browser).

One walk through a game at the table: try the example photo, tap a track on the board and give it
to another player, add a ticket, check the results table and the winner against `scoring` called
directly, then upload a file that is not an image. Screenshots of the results (desktop and
phone width) go to docs/screenshots/ for the README.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "board.jpg"
SHOTS = ROOT / "docs" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

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
    port = free_port()
    log = tmp_path_factory.mktemp("streamlit") / "server.log"
    env = dict(os.environ, TTR_CALIBRATION_DIR=str(tmp_path_factory.mktemp("calibration")))
    from app.launch import command

    with open(log, "wb") as out:  # the command `ttr app` runs, on this machine's loopback only
        proc = subprocess.Popen(
            command(port, "127.0.0.1") + ["--server.fileWatcherType", "none"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("streamlit did not start: " + log.read_text()[-2000:])
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with playwright.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=CHROMIUM, headless=True,
            args=ARGS, viewport={"width": 1280, "height": 1800})
        yield ctx
        ctx.close()


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the script has finished running and images have loaded."""
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stStatusWidget"]', state="detached", timeout=timeout_ms)
    page.wait_for_function("Array.from(document.images).every(i => i.complete)", timeout=timeout_ms)
    page.wait_for_timeout(300)


@pytest.fixture(scope="module")
def reading():
    """The example photo read directly (the reader is deterministic: the page reads the same)."""
    from vision.read import Reader

    return Reader().read_path(str(EXAMPLE))


def open_with_example(browser, server, viewport: dict | None = None):
    """A new page on the app (at `viewport` size if given) with the example photo read."""
    page = browser.new_page()
    if viewport:
        page.set_viewport_size(viewport)
    page.goto(server)
    page.get_by_text("1 · Game").wait_for()
    settle(page)
    page.get_by_role("button", name=re.compile("Try the example photo")).click()
    page.get_by_text(re.compile(r"tracks claimed")).wait_for(timeout=120_000)
    settle(page)
    return page


def legal(reading, track_id: int, owner: str) -> bool:
    from scoring.errors import TtrError

    try:
        expected_sheet(reading, track_id, owner, ("Denver", "El Paso"), "red")
    except TtrError:
        return False
    return True


def expected_sheet(reading, track_id: int, new_owner: str, ticket: tuple[str, str], player: str) -> dict:
    """What `scoring` says for the example photo after the same correction and ticket."""
    from app import state as S

    owners = {t.track_id: t.owner for t in reading.tracks}
    owners[track_id] = new_owner
    players = S.sort_players(o for o in owners.values() if o)  # the page takes them from the photo
    tab = S.TableState(players=players, owners=owners, tickets={player: [S.DASH.join(ticket)]})
    return S.score(tab)[1]


def test_a_game_at_the_table(server, browser, reading):
    from app.state import track_label
    from calibration.template import load_template

    page = open_with_example(browser, server)
    assert "board.jpg" in page.get_by_text(re.compile(r"tracks claimed")).inner_text()

    # Tap the middle space of the longest sure track on the board: its owner picker opens
    track = max((t for t in reading.tracks if t.owner and not t.doubtful), key=lambda t: t.length)
    image = page.frame_locator('iframe[title*="streamlit_image_coordinates"]').locator("#image")
    image.wait_for()
    box = image.bounding_box()
    tpl = load_template()
    middle = tpl.tracks[track.track_id].centers()[track.length // 2]
    image.click(position={"x": middle[0] / tpl.board_mm[0] * box["width"],
                          "y": middle[1] / tpl.board_mm[1] * box["height"]})
    settle(page)
    picker = page.get_by_test_id("stRadio").filter(
        has_text="Owner of " + track_label(page_board().tracks[track.track_id]))
    picker.wait_for()
    assert _checked(picker) == track.owner
    choices = [t.split()[-1] for t in picker.locator("label:has(input)").all_inner_texts()]
    # to a player who may take it by the rules (45 trains, doubles), the one with fewest trains
    trains = {c: sum(t.length for t in reading.tracks if t.owner == c) for c in choices}
    new_owner = next(c for c in sorted(choices, key=lambda c: trains[c])
                     if c not in (track.owner, "nobody")
                     and legal(reading, track.track_id, c))
    picker.locator("label:has(input)").filter(has_text=re.compile(rf"\b{new_owner}$")).click()
    expect(page.get_by_test_id("stCaptionContainer").filter(
        has_text=f"Corrected: the photo reads {track.owner}")).to_be_visible(timeout=30_000)
    settle(page)

    # Add a ticket to the first player (typed, as at the table)
    first = page.get_by_test_id("stMultiSelect").filter(has_text="tickets").first
    player = first.inner_text().split(":")[0].split()[-1].lower()
    first.scroll_into_view_if_needed()
    first.get_by_role("combobox").click()
    page.keyboard.type("Denver")
    page.get_by_role("option", name="Denver – El Paso (4)").click()
    page.keyboard.press("Escape")
    expect(first).to_contain_text("Denver – El Paso (4)")
    settle(page)

    # Results: the page agrees with the scoring engine
    sheet = expected_sheet(reading, track.track_id, new_owner, ("Denver", "El Paso"), player)
    page.get_by_text("5 · Results").scroll_into_view_if_needed()
    settle(page)
    tables = page.get_by_test_id("stTable")
    expect(tables).to_have_count(len(sheet["players"]))
    for i, p in enumerate(sheet["players"]):
        # (expect retries until the page's last rerun has drawn the table)
        expect(tables.nth(i)).to_contain_text(re.compile(rf"Total\s*{p['total']}\s*$"), timeout=30_000)
        for t in p["tickets"]:
            mark = "✓" if t["completed"] else "✗"
            expect(tables.nth(i)).to_contain_text(re.compile(
                rf"{mark} {t['a']} – {t['b']}\s*{t['points'] if t['completed'] else -t['points']}"))
    winner = page.get_by_test_id("stAlert").filter(has_text="win").first
    for c in sheet["winners"]:
        expect(winner).to_contain_text(c.capitalize())
    shoot(page, "results.png")

    # A file that is not an image: a clear message, and the game stays
    page.locator('[data-testid="stFileUploader"] input[type="file"]').first.set_input_files(
        files=[{"name": "notes.jpg", "mimeType": "image/jpeg", "buffer": b"these are not pixels"}])
    page.get_by_text(re.compile("notes.jpg: not an image")).wait_for(timeout=60_000)
    settle(page)
    expect(page.get_by_test_id("stTable")).to_have_count(len(sheet["players"]))
    expect(page.get_by_test_id("stTable").first).to_contain_text(
        re.compile(rf"Total\s*{sheet['players'][0]['total']}\s*$"))


def test_the_results_fit_a_phone_screen(server, browser, reading):
    """The same page at 390 x 844 (a phone held upright): a zoomed board to tap on, and nothing
    wider than the screen."""
    from app.state import track_label
    from calibration.template import load_template

    page = open_with_example(browser, server, {"width": 390, "height": 844})

    # Zoom on the east third of the board and tap a track there
    tpl = load_template()
    east = [t for t in reading.tracks if t.owner and not t.doubtful
            and tpl.tracks[t.track_id].centers()[:, 0].min() > 0.6 * tpl.board_mm[0]]
    track = max(east, key=lambda t: t.length)
    page.get_by_test_id("stButtonGroup").get_by_text("East", exact=True).click()
    settle(page)
    image = page.frame_locator('iframe[title*="streamlit_image_coordinates"]').locator("#image")
    for _ in range(100):  # until the east third (taller than wide) has replaced the whole board
        box = image.bounding_box()
        if box and box["height"] > box["width"]:
            break
        page.wait_for_timeout(200)
    x, y = tpl.tracks[track.track_id].centers()[track.length // 2]
    image.click(position={"x": (x / tpl.board_mm[0] - 0.55) / 0.45 * box["width"],
                          "y": y / tpl.board_mm[1] * box["height"]})
    expect(page.get_by_test_id("stRadio").filter(
        has_text="Owner of " + track_label(page_board().tracks[track.track_id]))).to_be_visible(timeout=30_000)
    settle(page)
    first = page.get_by_test_id("stMultiSelect").filter(has_text="tickets").first
    first.scroll_into_view_if_needed()
    first.get_by_role("combobox").click()
    page.keyboard.type("Denver")
    page.get_by_role("option", name="Denver – El Paso (4)").click()
    page.keyboard.press("Escape")
    settle(page)
    page.get_by_text("5 · Results").scroll_into_view_if_needed()
    settle(page)
    assert page.get_by_test_id("stTable").count() >= 2
    # no element sticks out to the right (which would make the page scroll sideways)
    widest = page.evaluate("""() => Math.max(...Array.from(document.querySelectorAll(
        '[data-testid="stMainBlockContainer"] *')).map(e => e.getBoundingClientRect().right))""")
    assert widest <= 390 + 1, widest
    shoot(page, "results_phone.png")
    page.close()


def shoot(page, name: str) -> None:
    """Screenshot with the results header at the top of the window."""
    page.get_by_text("5 · Results").evaluate("e => e.scrollIntoView({block: 'start'})")
    settle(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))


def page_board():
    from scoring.board import load_board

    return load_board()


def _checked(radiogroup) -> str:
    return radiogroup.locator("label:has(input:checked)").inner_text().strip().split()[-1]
