"""Run `ttr` command lines in one process, each under a time bound, and report how each ended.

Used by tests/app/test_fuzz_cli.py (not a test module itself): `python hostile_child.py CASES.json
OUT.json`, CASES a list of {"id", "argv"} (and optionally "seconds", the case's own alarm). Each case runs `app.cli.main(argv)` in this process
(imports paid once), with stdout/stderr captured, an alarm of `--seconds` (a hang becomes a
"timeout" result instead of stalling the suite) and the address space capped (`--max-gb`, a
backstop: a read that runs away fails here instead of taking the machine's memory). Per case:
rc, stderr, the last of stdout, seconds, and the process's peak resident memory so far (MB).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback


class _Timeout(BaseException):  # not an Exception: nothing under test may swallow it
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _peak_mb() -> float:
    """This process's peak resident memory in MB: VmHWM, the high-water mark of its own address
    space (ru_maxrss is not: Linux carries it over an exec from the parent, here pytest)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    cases_path, out_path = sys.argv[1], sys.argv[2]
    seconds = int(os.environ.get("HOSTILE_SECONDS", "5"))
    max_gb = float(os.environ.get("HOSTILE_MAX_GB", "4"))
    limit = int(max_gb * 1024 ** 3)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _alarm)
    from app.cli import main as ttr

    results = []
    for case in json.load(open(cases_path)):
        out, err = io.StringIO(), io.StringIO()
        t0 = time.perf_counter()
        status, rc = "returned", None
        signal.alarm(int(case.get("seconds", seconds)))
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = ttr(case["argv"])
        except _Timeout:
            status = "timeout"
        except SystemExit as e:  # argparse's own errors
            status, rc = "returned", e.code if isinstance(e.code, int) else 2
        except BaseException:  # noqa: BLE001 - a traceback is what the test looks for
            status = "raised"
            err.write(traceback.format_exc())
        finally:
            signal.alarm(0)
        results.append({"id": case["id"], "status": status, "rc": rc, "stderr": err.getvalue(),
                        "stdout": out.getvalue()[-2000:], "seconds": time.perf_counter() - t0,
                        "peak_mb": _peak_mb()})
        with open(out_path, "w") as f:  # after each case: a crash still leaves the others
            json.dump(results, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
