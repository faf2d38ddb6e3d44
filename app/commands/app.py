"""`ttr app [--port N] [--local]`: serve the page to the phones at the table (`app/launch.py`).

Prints the address the phones open, with its secret, and the same as a QR code to scan; only
requests carrying that secret get the page. With --local, the page is served to this computer
alone.
"""
from __future__ import annotations

import io
import os
import secrets
import socket
import subprocess

import segno

from app.launch import LOOPBACK, SECRET_ENV, command, lan_address, table_url
from scoring.errors import TtrError


def add_arguments(parser):
    parser.add_argument("--port", type=int, default=8501, help="port to serve on (default 8501)")
    parser.add_argument("--local", action="store_true",
                        help="serve this computer alone (no phones); otherwise every computer and phone "
                             "on this network that has the address printed")


def run(args) -> int:
    if not 1 <= args.port <= 65535:
        raise TtrError(f"--port {args.port} is not a port number (1-65535)")
    _check_free(args.port, args.local)
    secret = secrets.token_urlsafe(18)
    print(announcement(args.port, secret, None if args.local else lan_address()), flush=True)
    cmd = command(args.port, args.local)
    env = dict(os.environ, **{SECRET_ENV: secret})
    if os.name == "posix":  # become the server: a stop signal then reaches it, no orphan is left
        os.execve(cmd[0], cmd, env)
    return subprocess.call(cmd, env=env)


def announcement(port: int, secret: str, lan: str | None) -> str:
    """What `ttr app` prints: the phones' address with its QR code (`lan`: this computer's address
    on its network; None: served to this computer alone), and this computer's own address."""
    here = table_url("localhost", port, secret)
    lines = ["ttr app: the table's page, for those who have its address (Ctrl+C stops it)."]
    if lan:
        phones = table_url(lan, port, secret)
        lines += ["Phones on this network: scan the code, or open", f"  {phones}", qr_code(phones)]
    lines += [f"This computer: {here}",
              "Without the address the page answers nothing; a new one is made at each start."]
    return "\n".join(lines)


def qr_code(url: str) -> str:
    """`url` as a QR code for a terminal: two rows of modules to a line of text (half blocks)."""
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue().rstrip("\n")


def _check_free(port: int, local: bool) -> None:
    """One line, before anything is printed, when the port is taken (another `ttr app`?)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK if local else "0.0.0.0", port))
        except OSError:
            raise TtrError(f"port {port} is in use (another ttr app?): choose another with --port") from None
