"""Project-level checks: the installed command, package boundaries, what is installed."""
import os
import re
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


def test_one_opencv_package_is_installed():
    """Two OpenCV wheels in one environment overwrite each other's `cv2` (the last installed wins,
    and uninstalling one breaks the other): every extra must keep to the headless one."""
    from importlib import metadata

    names = {d.metadata["Name"].lower() for d in metadata.distributions()}
    assert len(names & OPENCV_WHEELS) == 1, sorted(names & OPENCV_WHEELS)


OPENCV_WHEELS = {"opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _requirements() -> list:
    import tomllib

    from packaging.requirements import Requirement

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [Requirement(r) for r in project["dependencies"] + extras]


def test_every_requirement_is_bounded_above():
    """A fresh install next month must not pick up a major version nobody tested."""
    for req in _requirements():
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), f"{req} has no upper bound"


def test_the_constraints_pin_every_requirement_within_its_bounds():
    """requirements/constraints.txt (what .ci/run installs) pins each requirement of every extra
    to one version the project's own bounds allow, and pins only packages as name==version."""
    from packaging.utils import canonicalize_name

    pins = {}
    with open(os.path.join(ROOT, "requirements", "constraints.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                name, _, version = line.partition("==")
                assert version and " " not in version, f"not a pin: {line}"
                pins[canonicalize_name(name)] = version
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not pinned"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} breaks {req}"
    assert len(set(pins) & OPENCV_WHEELS) == 1


def _readme_block_after(heading: str) -> str:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text[text.index(heading):]
    return section.split("```")[1].removeprefix("bash\n")


def test_the_readmes_first_reading_prints_what_the_readme_shows():
    """The command of README's "Your first reading" runs from the project folder and prints the
    table, the winner and the doubtful tracks the README shows (it drifts, this fails)."""
    command = _readme_block_after("## Your first reading").strip()
    shown = _readme_block_after("It reads the bundled photo")
    assert command.startswith("ttr score examples/board.jpg")
    out = subprocess.run(command.split(), capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    printed = out.stdout.splitlines()
    doubtful = [line for line in shown.splitlines() if "% sure: " in line]
    assert len(doubtful) == sum("% sure: " in p for p in printed)
    for line in shown.splitlines():
        if line.startswith(("yellow ", "blue ", "green ", "black ", "Winner:", "  score track:", "    no single")):
            assert line in printed, line
    for line in doubtful:  # the same track, owner and reason; how sure, to two points
        (head, sure, why), = re.findall(r"^(.*), (\d+)% sure: (.*)$", line)
        said = [re.findall(r", (\d+)% sure: ", p) for p in printed if p.startswith(head + ", ") and p.endswith(why)]
        assert said and said[0] and abs(int(said[0][0]) - int(sure)) <= 2, line


def test_the_readme_gives_the_doubt_threshold_the_reader_uses():
    from vision.settings import ReaderSettings

    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    below = round(ReaderSettings().doubt.below * 100)
    assert f"the tracks the reader is less than {below} % sure of" in text
    assert f"Everything else is right at least {below} % of the time" in text


def test_every_package_of_the_tree_is_installed():
    """pyproject.toml lists the packages one by one (their names are generic): a package folder left
    out installs without its modules, and an installed copy cannot import the reader."""
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    found = set()
    for top in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            if "__init__.py" in files and "__pycache__" not in folder:
                found.add(os.path.relpath(folder, ROOT).replace(os.sep, "."))
    assert found <= listed, sorted(found - listed)


def test_reading_a_photo_leaves_home_empty(tmp_path):
    """`ttr detect` keeps no state of its own or of its libraries in the user's home (onnxruntime's
    telemetry would leave a device id and an event store under ~/.cache)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "ORT_DISABLE_TELEMETRY"}  # the tool must set it itself
    env.update({"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config")})
    r = subprocess.run([sys.executable, "-m", "app.cli", "detect", os.path.join("examples", "board.jpg"), "--json"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == []
