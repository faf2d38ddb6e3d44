"""`ttr app [--port N] [--address A]`: start the Streamlit page on this machine (`app/launch.py`)."""
from __future__ import annotations

import os
import subprocess
import sys

from app.launch import command
from scoring.errors import TtrError


def add_arguments(parser):
    parser.add_argument("--port", type=int, default=8501, help="port to serve on (default 8501)")
    parser.add_argument("--address", default=None,
                        help="address to listen on (default: all; 127.0.0.1 for this machine only)")


def run(args) -> int:
    if not 1 <= args.port <= 65535:
        raise TtrError(f"--port {args.port} is not a port number (1-65535)")
    print(f"ttr app: serving on http://{args.address or 'localhost'}:{args.port} (Ctrl+C stops it)",
          file=sys.stderr)
    cmd = command(args.port, args.address)
    if os.name == "posix":  # become the server: a stop signal then reaches it, no orphan is left
        sys.stderr.flush()
        os.execv(cmd[0], cmd)
    return subprocess.call(cmd)
