"""The training recipe stays alive: a seconds-long `ttr train --smoke` renders patches, trains the
YOLO classifier from its yaml offline, exports ONNX, writes the config, and the reader can load it.
Skips when the training extra (ultralytics, torch) is not installed."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

# find_spec, not importorskip: importing ultralytics in the test process would patch PIL.Image.open
# for every other test (its patch reaches for a plugin to install on an unknown image).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ultralytics") is None or importlib.util.find_spec("torch") is None,
    reason="the training extra (ultralytics, torch) is not installed")


def test_smoke_training_exports_a_model_the_reader_loads(tmp_path):
    out = tmp_path / "models"
    env = dict(os.environ, YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    # Run from tmp_path so the copy of ttr under test (installed, in CI) is the one that trains.
    r = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                        "train", "--smoke", "--car-seen-height", "4", "--out", str(out), "--work", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    onnx, cfg = out / "space_classifier.onnx", out / "space_classifier.json"
    assert onnx.exists() and cfg.exists()
    config = json.loads(cfg.read_text())
    assert config["imgsz"] == 64 and config["smoke"] is True
    assert set(config["classes"]) == {"empty", "red", "blue", "green", "yellow", "black"}
    assert config["crop"]["side_mm"] > 0 and config["versions"]["ultralytics"]
    assert config["crop"]["car_seen_height_mm"] == 4.0
    # Training saw patches of every kind.
    assert sum(config["patches"]["train"].values()) > 100

    from vision.classify import load_classifier

    clf = load_classifier(str(onnx))
    patches = np.random.default_rng(0).integers(0, 255, (5, 64, 64, 3), dtype=np.uint8)
    p = clf.predict(patches)
    assert p.shape == (5, 6)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-3)

    # The reader cuts its patches as the model was trained (where a 4 mm high car is seen).
    from vision.read import Reader
    from vision.synth.positions import random_position
    from vision.synth.render import render_photo

    reader = Reader(model_path=str(onnx))
    assert reader.patch_seen_height_mm == 4.0
    rng = np.random.default_rng(5)
    photo = render_photo(rng, random_position(rng, reader.board), (1200, 900))
    assert len(reader.read(photo.image_bgr).tracks) == 100


@pytest.mark.parametrize("text", ["12x", "2000", "axb", "100x100", "9000x2000"])
def test_a_bad_photo_size_is_a_one_line_error(text):
    r = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                        "train", "--photo-size", text, "--out", "unused"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("ttr: error: --photo-size") and "\n" not in r.stderr.strip()
