"""How `ttr app` serves the page (`app/streamlit_app.py`) to the phones at the table.

Streamlit has no login of its own short of an identity provider (`st.login`), and a page served to
the network is open to anyone on it: the games, and their Delete. So `ttr app` serves the page
the way Jupyter serves a notebook: behind a secret. It runs `streamlit run app/served.py`, which
is Streamlit's own ASGI app (`st.App`, one server, one port) with `TableSecret` in front of it:
every request, page, file or websocket, must carry the secret, as `?token=` in the address `ttr
app` prints (and shows as a QR code) or as the cookie the first such visit leaves; everything else
gets 403 and nothing of the page. The secret is new each time `ttr app` starts and travels to the
server in its environment (`SECRET_ENV`), not on its command line. `--local` listens on this
computer's loopback only; otherwise on every interface, and the address for the phones is this
computer's address on its network (`lan_address`).

The page itself also runs with `streamlit run app/streamlit_app.py`, open, for development.
"""
from __future__ import annotations

import socket
import sys
from hmac import compare_digest
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

PAGE = Path(__file__).with_name("streamlit_app.py")
SERVED = Path(__file__).with_name("served.py")  # the page behind the secret, as `ttr app` runs it
MAX_UPLOAD_MB = 30  # the browser refuses bigger files; the page checks again (streamlit run)
SECRET_ENV = "TTR_TABLE_SECRET"
TOKEN = "token"  # the address's parameter that carries the secret on a first visit
COOKIE = "ttr_table"  # ... and the cookie that carries it afterwards
COOKIE_DAYS = 7
LOOPBACK = "127.0.0.1"
REFUSED = ("This is a Ticket to Ride table's page, and it needs the table's secret: open the "
           "address `ttr app` printed, or scan its QR code.\n").encode()


def command(port: int = 8501, local: bool = False) -> list[str]:
    """The `streamlit run` command line `ttr app` executes (with the secret in its environment)."""
    return [sys.executable, "-m", "streamlit", "run", str(SERVED),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            # (Streamlit's own welcome prints addresses without the secret, that only get 403)
            "--logger.hideWelcomeMessage", "true",
            "--client.toolbarMode", "minimal", "--server.maxUploadSize", str(MAX_UPLOAD_MB),
            "--server.port", str(port), "--server.address", LOOPBACK if local else "0.0.0.0"]


def lan_address() -> str | None:
    """This computer's address on its network, as the phones at the table reach it; None when it
    has none but the loopback. Found without sending anything: a UDP socket "connected" to an
    address outside the network only asks the system which interface it would use."""
    candidates = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737), discard port: never used
            candidates.append(s.getsockname()[0])
    except OSError:  # no route at all (no network)
        pass
    try:
        candidates.append(socket.gethostbyname(socket.gethostname()))
    except OSError:
        pass
    return next((a for a in candidates if a and not a.startswith("127.") and a != "0.0.0.0"), None)


def table_url(host: str, port: int, secret: str) -> str:
    return f"http://{host}:{port}/?{urlencode({TOKEN: secret})}"


class TableSecret:
    """ASGI middleware: only requests that carry the table's secret reach the page.

    A request carries it as `?token=` (a first visit, from the printed address or its QR code) or
    as the `ttr_table` cookie. A first visit to a page is answered with a redirect to the same
    address without the secret, leaving the cookie (so the secret is not left in the address bar,
    a screenshot or a shared link). Anything else, page, file, upload or websocket, is refused
    with 403 before it reaches Streamlit."""

    def __init__(self, app, secret: str):
        if not secret:
            raise ValueError("the table's secret is empty")
        self.app = app
        self.secret = secret.encode()

    def _is_secret(self, given: str | None) -> bool:
        return given is not None and compare_digest(given.encode("utf-8", "replace"), self.secret)

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):  # the server's lifespan messages
            return await self.app(scope, receive, send)
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = next((v for k, v in reversed(query) if k == TOKEN), None)
        if self._is_secret(given):
            if scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
                rest = urlencode([(k, v) for k, v in query if k != TOKEN])
                where = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
                cookie = (f"{COOKIE}={self.secret.decode()}; Path=/; Max-Age={COOKIE_DAYS * 86400}; "
                          "HttpOnly; SameSite=Lax")
                await send({"type": "http.response.start", "status": 303,
                            "headers": [(b"location", where.encode("latin-1", "replace")),
                                        (b"set-cookie", cookie.encode()), (b"cache-control", b"no-store"),
                                        (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
            return await self.app(scope, receive, send)
        if self._is_secret(_cookie(scope, COOKIE)):
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":  # closed before it is accepted: the server answers 403
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(REFUSED)).encode()), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": REFUSED if scope["method"] != "HEAD" else b""})


def _cookie(scope, name: str) -> str | None:
    """The value of cookie `name` in an ASGI request's headers (the last one, if several)."""
    found = None
    for key, value in scope.get("headers", ()):
        if key == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k == name:
                    found = v
    return found
