"""Project-level checks: the installed command, package boundaries, what is installed."""
import os
import subprocess
import sys

import pytest

PACKAGES = ("scoring", "vision", "app", "calibration", "models")


def test_ttr_help_lists_the_players_commands_apart_from_the_developers_tools():
    out = subprocess.run(["ttr", "--help"], capture_output=True, text=True, check=True).stdout
    table, developers = out.split("at the table:")[1].split("for developers:")
    listed = lambda text: [line.split()[0] for line in text.splitlines() if line.startswith("  ")]  # noqa: E731
    assert listed(table) == ["app", "score", "tally", "history", "detect", "calibrate"]
    assert listed(developers.split("options:")[0]) == ["render", "template", "train"]
    assert out.startswith("usage: ttr [-h] COMMAND ...")


def test_scoring_imports_no_image_or_app_code():
    """scoring is pure: importing all of it must not pull in vision, app, OpenCV or numpy."""
    code = (
        "import sys, pkgutil, importlib, scoring\n"
        "for m in pkgutil.walk_packages(scoring.__path__, 'scoring.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = [m for m in ('vision', 'app', 'cv2', 'streamlit', 'onnxruntime') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


@pytest.mark.skipif(not os.environ.get("TTR_TEST_INSTALLED"), reason="only when testing an installed copy (CI)")
def test_packages_come_from_the_installed_copy():
    import importlib

    for name in PACKAGES:
        path = importlib.import_module(name).__file__
        assert "site-packages" in path, f"{name} imported from the source tree: {path}"


def test_each_subcommand_has_its_own_help():
    for name in ("tally", "detect", "score", "calibrate", "render", "template", "train", "app"):
        r = subprocess.run(["ttr", name, "--help"], capture_output=True, text=True)
        assert r.returncode == 0, (name, r.stderr)
        assert r.stdout.startswith(f"usage: ttr {name} ")


def test_tally_does_not_load_image_libraries():
    """`ttr tally` imports only scoring: quick to start, and no OpenCV in a pure command."""
    code = ("import sys\nfrom app.cli import main\n"
            "try:\n    main(['tally', '--help'])\nexcept SystemExit:\n    pass\n"
            "print([m for m in ('cv2', 'numpy', 'onnxruntime', 'streamlit') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
