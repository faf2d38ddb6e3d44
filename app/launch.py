"""`ttr app`: start the Streamlit page (`app/streamlit_app.py`) on this machine.

The same page runs with `streamlit run app/streamlit_app.py`; this command only fills in the
settings a person at the table wants: no browser pop-up on a server, no usage statistics.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).with_name("streamlit_app.py")
MAX_UPLOAD_MB = 30  # the browser refuses bigger files; the page checks again (streamlit run)


def add_arguments(parser):
    parser.add_argument("--port", type=int, default=8501, help="port to serve on (default 8501)")
    parser.add_argument("--address", default=None,
                        help="address to listen on (default: all; 127.0.0.1 for this machine only)")


def command(port: int = 8501, address: str | None = None) -> list[str]:
    """The `streamlit run` command line `ttr app` executes."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(PAGE),
           "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--client.toolbarMode", "minimal", "--server.maxUploadSize", str(MAX_UPLOAD_MB),
           "--server.port", str(port)]
    if address:
        cmd += ["--server.address", address]
    return cmd


def run(args) -> int:
    from scoring.errors import TtrError

    if not 1 <= args.port <= 65535:
        raise TtrError(f"--port {args.port} is not a port number (1-65535)")
    print(f"ttr app: serving on http://{args.address or 'localhost'}:{args.port} (Ctrl+C stops it)",
          file=sys.stderr)
    cmd = command(args.port, args.address)
    if os.name == "posix":  # become the server: a stop signal then reaches it, no orphan is left
        sys.stderr.flush()
        os.execv(cmd[0], cmd)
    return subprocess.call(cmd)
