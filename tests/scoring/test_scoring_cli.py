"""`ttr tally` end to end, in a fresh process: output formats, exit statuses, one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from game_cases import INVALID

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "game.json"


def tally(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", "tally", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


def test_table_for_the_example_game():
    result = tally(str(EXAMPLE))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for color in ("red", "blue", "green", "yellow"):
        assert f"\n{color} " in out
    assert "Winner" in out
    assert "longest path" in out


def test_json_for_the_example_game():
    result = tally(str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    sheet = json.loads(result.stdout)
    assert sheet["variant"] == "classic"
    assert [p["color"] for p in sheet["players"]] == ["red", "blue", "green", "yellow"]
    best = max(p["total"] for p in sheet["players"])
    assert set(sheet["winners"]) <= {p["color"] for p in sheet["players"] if p["total"] == best}
    for p in sheet["players"]:
        assert p["total"] == p["route_points"] + p["ticket_points"] + p["longest_path_bonus"] + p["globetrotter_bonus"]
        assert p["ticket_points"] == sum(t["points"] if t["completed"] else -t["points"] for t in p["tickets"])
        assert p["score_track"]["expected"] == p["route_points"]


# the validation cases the issue lists, through the real command (test_scoring_game checks them all)
ISSUE_CASES = {"unknown city", "route not on the board", "same track claimed by two players",
               "both tracks of a double", "double in a 2-player game", "more than 45 trains",
               "ticket not in the deck", "unknown variant", "unknown player colour", "duplicate player colours"}
CLI_CASES = [c for c in INVALID if c[0] in ISSUE_CASES]
assert len(CLI_CASES) == len(ISSUE_CASES)


@pytest.mark.parametrize("case,data,message", CLI_CASES, ids=[c[0] for c in CLI_CASES])
def test_invalid_game_exits_2_with_one_line(tmp_path, case, data, message):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = tally(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"ttr: error: {message}\n"


@pytest.mark.parametrize("content,message", [
    ('{"variant": "classic",\n "players": [\n', "invalid JSON at line 3 column 1"),
    ('{"variant": "classic" "players": []}', "invalid JSON at line 1 column 23"),
])
def test_malformed_json_names_line_and_column(tmp_path, content, message):
    path = tmp_path / "game.json"
    path.write_text(content, encoding="utf-8")
    result = tally(str(path))
    assert result.returncode == 2
    assert result.stderr.startswith(f"ttr: error: {path}: {message}")
    assert result.stderr.count("\n") == 1


def test_missing_file(tmp_path):
    result = tally(str(tmp_path / "nope.json"))
    assert result.returncode == 2
    assert result.stderr == f"ttr: error: {tmp_path / 'nope.json'}: no such file\n"
