"""`ttr app`: the command line that starts the Streamlit page."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request

from app.launch import PAGE, command


def test_command_runs_the_page_headless_without_usage_stats():
    cmd = command(8123)
    assert str(PAGE) in cmd and PAGE.exists()
    flags = dict(zip(cmd[cmd.index(str(PAGE)) + 1::2], cmd[cmd.index(str(PAGE)) + 2::2]))
    assert flags["--server.headless"] == "true"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.port"] == "8123"
    assert flags["--server.maxUploadSize"] == "30"  # MB: the browser refuses bigger photos


def test_ttr_app_serves_the_page_on_the_port_asked():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # its own session, so that everything it starts can be stopped together
    proc = subprocess.Popen(["ttr", "app", "--port", str(port), "--address", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(60):
            try:
                health = urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.5)
        else:
            health = b""
        assert health == b"ok"
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
        assert b"<div id=\"root\">" in page or b"id=\"root\"" in page
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)


def test_a_bad_port_is_a_one_line_error():
    r = subprocess.run(["ttr", "app", "--port", "70000"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == "ttr: error: --port 70000 is not a port number (1-65535)"
