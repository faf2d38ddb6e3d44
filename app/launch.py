"""How `ttr app` starts the Streamlit page (`app/streamlit_app.py`) on this machine.

The same page runs with `streamlit run app/streamlit_app.py`; this command only fills in the
settings a person at the table wants: no browser pop-up on a server, no usage statistics.
"""
from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).with_name("streamlit_app.py")
MAX_UPLOAD_MB = 30  # the browser refuses bigger files; the page checks again (streamlit run)


def command(port: int = 8501, address: str | None = None) -> list[str]:
    """The `streamlit run` command line `ttr app` executes."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(PAGE),
           "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--client.toolbarMode", "minimal", "--server.maxUploadSize", str(MAX_UPLOAD_MB),
           "--server.port", str(port)]
    if address:
        cmd += ["--server.address", address]
    return cmd
