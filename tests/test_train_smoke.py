"""The training recipe stays alive: a seconds-long `ttr train --smoke` renders patches, trains two
teacher YOLO classifiers from their yaml offline, distils them into one student, exports ONNX,
writes the config, and the reader can load it.
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
    # The student answers in the reader's class order (the teachers in Ultralytics' folder order).
    assert config["classes"] == ["empty", "red", "blue", "green", "yellow", "black"]
    assert config["teachers"] == 2 and len(config["render"]["seeds"]) == 2
    assert 0.0 <= config["metrics"]["student_agreement_with_teachers"] <= 1.0
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

    # The student's targets: the teachers' mean over each patch and its half-turned copy, so the
    # same teacher twice gives its own answer, and a patch and its half-turn get the same target.
    from models.distill import teacher_targets

    teacher = tmp_path / "work" / "teacher0" / "model" / "space_classifier.onnx"
    t1 = teacher_targets([teacher], patches)
    assert np.allclose(teacher_targets([teacher, teacher], patches), t1, atol=1e-6)
    assert np.allclose(teacher_targets([teacher], np.ascontiguousarray(patches[:, ::-1, ::-1])), t1, atol=1e-5)
    own = load_classifier(str(teacher)).predict(patches)
    assert np.allclose(t1, (own + load_classifier(str(teacher)).predict(
        np.ascontiguousarray(patches[:, ::-1, ::-1]))) / 2, atol=1e-6)

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
