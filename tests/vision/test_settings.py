"""The one settings tree: fitted numbers written beside a net with their provenance, and read back
for that net only."""
import json
import shutil
from pathlib import Path

from vision.settings import SETTINGS_NAME, ReaderSettings, fitted_values, load_settings, write_fitted

PACKAGED = Path(__file__).resolve().parents[2] / "models" / SETTINGS_NAME


def test_every_fitted_number_says_what_fitted_it():
    doc = json.loads(PACKAGED.read_text(encoding="utf-8"))
    assert doc["fitted"]
    for name, entry in doc["fitted"].items():
        # One command, or one per contest kind where kinds were fitted apart ("KINDS: command | ...").
        for said in entry["by"].split(" | "):
            assert said.split(": ", 1)[-1].startswith("benchmarks/fit_"), name
        assert entry["data"], name


def test_the_packaged_fitted_numbers_are_the_readers_defaults():
    s = ReaderSettings()
    values = fitted_values(str(PACKAGED))
    assert s.doubt.bias == tuple(values["doubt.bias"])
    assert s.doubt.below == values["doubt.below"]
    assert s.calibration.max_false_change == values["calibration.max_false_change"]
    # The flash photos' standard is a second fitted copy of the doubt, its own numbers.
    assert s.doubt_flash.bias == tuple(values["doubt_flash.bias"]) and s.doubt_flash.below == values["doubt_flash.below"]
    assert s.doubt_flash.bias != s.doubt.bias and s.doubt_flash.named == s.doubt.named
    # So are the flash photos' weights of the sources; the usual photos' are hand-set.
    assert s.fuse_flash.occupancy == values["fuse_flash.occupancy"] and s.fuse_flash.net == values["fuse_flash.net"]
    assert s.fuse_flash != s.fuse and not any(name.startswith("fuse.") for name in values)


def test_settings_written_beside_a_net_are_read_for_that_net_only(tmp_path):
    net = tmp_path / "net" / "space_classifier.onnx"
    net.parent.mkdir()
    beside = shutil.copy(PACKAGED, net.with_name(SETTINGS_NAME))
    write_fitted({"doubt.bias": (0.1, 0.2, 0.3), "doubt.below": 0.9, "doubt_flash.below": 0.8},
                 by="benchmarks/fit_doubt.py --fit X",
                 data="three renders", path=beside)
    doc = json.loads(Path(beside).read_text(encoding="utf-8"))
    assert doc["fitted"]["doubt.bias"] == {"value": [0.1, 0.2, 0.3], "by": "benchmarks/fit_doubt.py --fit X",
                                           "data": "three renders"}
    assert "[0.1, 0.2, 0.3]" in Path(beside).read_text(encoding="utf-8")  # a list on one line
    s = load_settings(net)
    assert s.doubt.bias == (0.1, 0.2, 0.3) and s.doubt.below == 0.9
    assert s.doubt.slope == ReaderSettings().doubt.slope  # the rest as packaged
    assert s.doubt_flash.below == 0.8 and s.doubt_flash.bias == ReaderSettings().doubt_flash.bias
    other = tmp_path / "other" / "space_classifier.onnx"  # a net with no settings of its own
    other.parent.mkdir()
    assert load_settings(other) == ReaderSettings()
