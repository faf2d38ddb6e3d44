"""`ttr app`: the page served to the table behind a secret (`app.launch`), for real: the address
and QR code it prints, no page, no game and no websocket without the secret, the page with it;
`--local` for this computer alone."""
from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest
import segno
from hypothesis import given, settings
from hypothesis import strategies as st

from app.history import History
from app.launch import COOKIE, PAGE, SECRET_ENV, SERVED, TOKEN, TableSecret, command, lan_address

websockets = pytest.importorskip("websockets.sync.client")
from websockets.exceptions import InvalidStatus  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def ttr_app(*args, env=None):
    """`ttr app ARGS` running (its own session, so everything it starts stops together): yields
    (port, what it printed) once the page answers."""
    port = free_port()
    proc = subprocess.Popen(["ttr", "app", "--port", str(port), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, env=env)
    try:
        printed = ""
        while "Without the address" not in printed:
            line = proc.stdout.readline()
            assert line, printed
            printed += line
        for _ in range(120):  # until the server answers (403 without the secret: it is up)
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
            except urllib.error.HTTPError:
                break
            except OSError:
                time.sleep(0.5)
        yield port, printed
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def get(url: str, cookie: str | None = None, method: str = "GET"):
    """(status, headers, body) of one request, redirects not followed."""
    class Stay(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None

    req = urllib.request.Request(url, method=method, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
    try:
        with urllib.request.build_opener(Stay).open(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def websocket_opens(host: str, port: int, cookie: str | None = None) -> bool:
    headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else None
    try:
        with websockets.connect(f"ws://{host}:{port}/_stcore/stream", additional_headers=headers,
                                subprotocols=["streamlit"], open_timeout=10):
            return True
    except InvalidStatus as e:
        assert e.response.status_code == 403
        return False


def qr_modules(text: str) -> list[list[bool]]:
    """The dark modules of a QR code printed with half blocks, two rows to a line: "█" is two
    light modules, " " two dark ones, "▀" light over dark, "▄" dark over light."""
    rows = []
    for line in text.splitlines():
        rows.append([c in " ▄" for c in line])
        rows.append([c in " ▀" for c in line])
    return rows


def test_command_serves_the_page_behind_the_secret_headless_without_usage_stats():
    cmd = command(8123)
    assert str(SERVED) in cmd and SERVED.exists() and PAGE.exists()
    flags = dict(zip(cmd[cmd.index(str(SERVED)) + 1::2], cmd[cmd.index(str(SERVED)) + 2::2]))
    assert flags["--server.headless"] == "true"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.port"] == "8123"
    assert flags["--server.maxUploadSize"] == "30"  # MB: the browser refuses bigger photos
    assert flags["--server.address"] == "0.0.0.0"
    assert dict(zip(command(8123, local=True)[5::2], command(8123, local=True)[6::2]))["--server.address"] \
        == "127.0.0.1"


def test_without_the_secret_there_is_no_page_no_game_and_no_websocket(tmp_path):
    db = tmp_path / "history.sqlite"
    History(db).save("g1", {"table": {"names": {"red": "Ada"}}})
    env = dict(os.environ, TTR_HISTORY_DB=str(db))
    with ttr_app(env=env) as (port, printed):
        phones = re.search(r"^  (http://\S+)$", printed, re.M).group(1)
        here = re.search(r"^This computer: (http://\S+)$", printed, re.M).group(1)
        secret = re.search(rf"[?&]{TOKEN}=([\w-]+)", here).group(1)
        assert phones == f"http://{lan_address()}:{port}/?{TOKEN}={secret}"
        assert here == f"http://localhost:{port}/?{TOKEN}={secret}"
        # the QR code printed is the phones' address
        block = "\n".join(line for line in printed.splitlines() if line and set(line) <= set(" ▀▄█"))
        want = [[bool(m) for m in row] for row in segno.make(phones, error="m").matrix]
        got = qr_modules(block)
        assert [row[2:-2] for row in got[2:2 + len(want)]] == want

        hosts = ["127.0.0.1"] + ([lan_address()] if lan_address() else [])
        for host in hosts:
            base = f"http://{host}:{port}"
            for path in ("/", "/?game=g1", "/_stcore/health", "/_stcore/host-config", "/static/js/x.js",
                         f"/?{TOKEN}=wrong", f"/?{TOKEN}={secret}x", "/_stcore/upload_file/s/f"):
                for cookie in (None, "wrong", secret[:-1]):
                    status, _, body = get(base + path, cookie)
                    assert status == 403, (host, path, cookie, status)
                    assert b"root" not in body and b"Ada" not in body and b"secret" in body
            assert get(base + "/", method="HEAD")[0] == 403
            assert not websocket_opens(host, port)
            assert not websocket_opens(host, port, "wrong")

            # with the secret: the first visit leaves the cookie and takes the secret out of the address
            status, headers, _ = get(f"{base}/?game=g1&{TOKEN}={secret}")
            assert status == 303 and headers["Location"] == "/?game=g1"
            assert headers["Set-Cookie"].startswith(f"{COOKIE}={secret};") and "HttpOnly" in headers["Set-Cookie"]
            status, _, body = get(base + "/?game=g1", secret)
            assert status == 200 and b'id="root"' in body
            assert get(base + "/_stcore/health", secret)[2] == b"ok"
            assert websocket_opens(host, port, secret)


@pytest.mark.skipif(lan_address() is None, reason="this computer has no address but the loopback")
def test_local_serves_this_computer_alone():
    with ttr_app("--local") as (port, printed):
        assert "Phones" not in printed and "█" not in printed
        secret = re.search(rf"{TOKEN}=([\w-]+)", printed).group(1)
        assert get(f"http://127.0.0.1:{port}/_stcore/health", secret)[2] == b"ok"
        with pytest.raises(OSError):
            socket.create_connection((lan_address(), port), timeout=3).close()


def test_a_port_in_use_or_out_of_range_is_a_one_line_error():
    r = subprocess.run(["ttr", "app", "--port", "70000"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == "ttr: error: --port 70000 is not a port number (1-65535)"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run(["ttr", "app", "--port", str(port), "--local"], capture_output=True, text=True,
                           timeout=30)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f"ttr: error: port {port} is in use (another ttr app?): choose another with --port"


def test_the_served_page_will_not_start_without_a_secret():
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    cmd = command(free_port(), local=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stdout + r.stderr == "ttr: error: serve the table's page with `ttr app` (it makes the secret the phones need)\n"


def run_asgi(middleware: TableSecret, scope: dict) -> tuple[list[dict], bool]:
    """What `middleware` sends for one request, and whether it let it through to the page."""
    reached = []

    async def page(scope, receive, send):
        reached.append(scope)

    middleware.app = page
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.disconnect"}

    asyncio.run(middleware(scope, receive, send))
    return sent, bool(reached)


SECRET = "s3cr3t-Table_token"
texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40) | st.just(SECRET)
# a cookie's value as browsers send them (no ";", which separates cookies)
values = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters=";"), max_size=40) \
    | st.just(SECRET) | st.just(SECRET + " ")


@settings(max_examples=200, deadline=None)
@given(kind=st.sampled_from(["http", "websocket"]), method=st.sampled_from(["GET", "HEAD", "POST"]),
       path=st.sampled_from(["/", "/_stcore/stream", "/_stcore/upload_file/x", "/media/a.png"]),
       token=st.none() | texts, cookies=st.lists(st.tuples(st.sampled_from([COOKIE, "other", "ttr"]), values),
                                                  max_size=3))
def test_only_the_exact_secret_opens_the_page(kind, method, path, token, cookies):
    from urllib.parse import urlencode

    scope = {"type": kind, "path": path, "method": method,
             "query_string": urlencode({TOKEN: token} if token is not None else {}).encode(),
             "headers": [(b"cookie", "; ".join(f"{k}={v}" for k, v in cookies).encode("utf-8", "replace"))]}
    sent, reached = run_asgi(TableSecret(None, SECRET), scope)
    last_cookie = next((v for k, v in reversed(cookies) if k == COOKIE), None)
    carried = token == SECRET or (last_cookie is not None and last_cookie.rstrip() == SECRET)
    if not carried:
        assert not reached
        if kind == "http":
            assert sent[0]["status"] == 403
        else:
            assert sent == [{"type": "websocket.close", "code": 1008}]
    elif token == SECRET and kind == "http" and method in ("GET", "HEAD"):
        assert not reached and sent[0]["status"] == 303  # the cookie left, the secret taken out of the address
        headers = dict(sent[0]["headers"])
        assert headers[b"set-cookie"].startswith(f"{COOKIE}={SECRET};".encode())
        assert TOKEN.encode() + b"=" not in headers[b"location"]
    else:
        assert reached and not sent


def test_lifespan_messages_pass_and_an_empty_secret_is_refused():
    _, reached = run_asgi(TableSecret(None, SECRET), {"type": "lifespan"})
    assert reached
    with pytest.raises(ValueError):
        TableSecret(None, "")
