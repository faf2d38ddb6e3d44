"""The training recipe stays alive: a seconds-long `ttr train --smoke` renders patches, trains two
teacher YOLO classifiers from their yaml offline, distils them into one student, exports ONNX,
writes the config, and the reader can load it.
Skips when the training extra (ultralytics, torch) is not installed."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

# find_spec, not importorskip: importing ultralytics in the test process would patch PIL.Image.open
# for every other test (its patch reaches for a plugin to install on an unknown image).
_MISSING = importlib.util.find_spec("ultralytics") is None or importlib.util.find_spec("torch") is None
if _MISSING and os.environ.get("TTR_REQUIRE_TRAINING"):  # CI: the recipe must run, not skip
    raise RuntimeError("TTR_REQUIRE_TRAINING is set but the training extra (ultralytics, torch) is not installed")
pytestmark = pytest.mark.skipif(_MISSING, reason="the training extra (ultralytics, torch) is not installed")


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

    from vision.evidence.net import load_classifier

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
    assert reader.net_seen_height_mm == 4.0
    rng = np.random.default_rng(5)
    photo = render_photo(rng, random_position(rng, reader.board), (1200, 900))
    assert len(reader.read(photo.image_bgr).tracks) == 100


@pytest.mark.parametrize("text", ["12x", "2000", "axb", "100x100", "9000x2000"])
def test_a_bad_photo_size_is_a_one_line_error(text):
    r = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                        "train", "--photo-size", text, "--out", "unused"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("ttr: error: --photo-size") and "\n" not in r.stderr.strip()


@pytest.fixture(scope="module")
def fake_real(tmp_path_factory):
    """A tiny stand-in for ../shared/real/dev made from renders: two played boards (one named state
    A) and an empty one, with their truth in gt/ (the real folder's layout)."""
    tmp_path = tmp_path_factory.mktemp("real")
    real = tmp_path / "real"
    r = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                        "render", "--out", str(real), "--count", "3", "--seed", "77", "--size", "1000x750",
                        "--empty-fraction", "0.34"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    gts = sorted((real / "gt").glob("*.json"))
    played = [g for g in gts if any(t["owner"] for t in json.loads(g.read_text())["tracks"])]
    assert played
    truth = json.loads(played[0].read_text())
    truth["board_state"] = "A"
    played[0].write_text(json.dumps(truth))
    return real, played[0].stem


def _train(args, tmp_path):
    env = dict(os.environ, YOLO_OFFLINE="1", YOLO_AUTOINSTALL="false")
    return subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                           "train", *args], capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)


def test_smoke_fine_tune_on_real_photos_leaving_one_state_out(tmp_path, fake_real):
    """`ttr train --real DIR --leave-out A --paste 40`: the packaged net fine-tuned on the patches the
    reader cuts from DIR's photos (state A's left out) and on 40 patches of the other photos' cars laid
    on the empty board, its config naming what was left out and what was pasted from; the reader
    takes it through TTR_SPACE_MODEL."""
    from vision.evidence.net import default_model_paths

    if not default_model_paths()[0].exists():
        pytest.skip("no packaged model to fine-tune")
    real, stem_a = fake_real
    out = tmp_path / "ft"
    r = _train(["--smoke", "--real", str(real), "--leave-out", "A", "--paste", "40", "--out", str(out),
                "--work", str(tmp_path / "work")], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    config = json.loads((out / "space_classifier.json").read_text())
    assert config["real"]["leave_out"] == "A"
    assert [Path(p).stem for p in config["real"]["photos_left_out"]] == [stem_a]
    assert len(config["real"]["photos_trained"]) == 2
    assert sum(config["real"]["patches_trained"].values()) >= 309
    assert sum(config["real"]["patches_left_out"].values()) >= 250
    assert config["classes"] == ["empty", "red", "blue", "green", "yellow", "black"]
    assert config["crop"]["car_seen_height_mm"] == json.loads(default_model_paths()[1].read_text())["crop"][
        "car_seen_height_mm"]
    assert config["init"]["sha256"] and 0.0 <= config["metrics"]["real_left_out_top1"] <= 1.0
    pasted = config["real"]["paste"]
    assert sum(pasted["patches"].values()) == 40 and pasted["patches"]["empty"] == 20
    assert pasted["car_photos"] and stem_a not in {Path(p).stem for p in pasted["car_photos"] + pasted["background_photos"]}
    assert config["finetune"]["real_patches"] == sum(config["real"]["patches_trained"].values()) + 40
    # Nothing of the real folder lands beside the weights.
    assert sorted(p.name for p in out.iterdir()) == ["space_classifier.json", "space_classifier.onnx"]
    # The reader reads with it when TTR_SPACE_MODEL names it.
    env = dict(os.environ, TTR_SPACE_MODEL=str(out / "space_classifier.onnx"))
    code = "from vision.read import Reader; print(Reader().net.config.raw['real']['leave_out'])"
    rr = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                        cwd=tmp_path)
    assert rr.returncode == 0, rr.stderr[-2000:]
    assert rr.stdout.strip().splitlines()[-1] == "A"


def test_smoke_real_patches_added_when_training_from_the_yaml(tmp_path, fake_real):
    """`--init none`: no net to start from, so the recipe trains from the yaml with the real
    patches (cut by the reader, with the recipe's own patch geometry) among the rendered ones."""
    real, _ = fake_real
    out = tmp_path / "m"
    r = _train(["--smoke", "--teachers", "1", "--real", str(real), "--init", "none", "--out", str(out),
                "--work", str(tmp_path / "work")], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    config = json.loads((out / "space_classifier.json").read_text())
    assert config["real"]["leave_out"] is None and len(config["real"]["photos_trained"]) == 3
    assert sum(config["patches"]["train_real"].values()) >= 3 * 250


def test_smoke_car_or_print_check_learns_from_real_photos_leaving_states_out(tmp_path, fake_real):
    """`ttr train --occupancy --real DIR --leave-out A --paste 40`: the car-or-print check trained on
    the renders, the patches the reader cuts from DIR's photos but state A's and 40 patches of the
    other photos' cars laid on the empty board; its config says what was left out and pasted, the
    model answers P(empty), P(car) for a batch of any size, and the reader fuses it."""
    real, stem_a = fake_real
    out = tmp_path / "occ"
    r = _train(["--occupancy", "--smoke", "--draws", "2", "--real", str(real), "--leave-out", "A",
                "--paste", "40", "--out", str(out), "--work", str(tmp_path / "work")], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["space_occupancy.json", "space_occupancy.onnx"]
    config = json.loads((out / "space_occupancy.json").read_text())
    assert config["classes"] == ["empty", "car"] and config["smoke"] is True
    assert config["real"]["left_out"] == ["A"]
    assert [Path(p).stem for p in config["real"]["photos_left_out"]] == [stem_a]
    assert len(config["real"]["photos_trained"]) == 2 and config["real"]["patches"]["empty"] > 250
    pasted = config["real"]["paste"]
    assert sum(pasted["patches"].values()) == 40 and pasted["patches"]["empty"] == 20
    used = {Path(p).stem for p in pasted["car_photos"] + pasted["background_photos"]}
    assert pasted["car_photos"] and stem_a not in used
    assert config["real"]["patches"]["car"] >= 20  # the pasted cars are among the real patches
    assert config["renders"]["patches"]["car"] > 0
    # Two draws: each its own seed, renders and weights kept under --work.
    assert [d["seed"] for d in config["draws"]] == [config["recipe"]["seed"], config["recipe"]["seed"] + 1]
    assert len(list((tmp_path / "work").glob("space_occupancy_A_*.pt"))) == 2
    # Shipped in 8-bit integers, its ranges measured on training patches.
    import onnx

    ops = {n.op_type for n in onnx.load(str(out / "space_occupancy.onnx")).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert config["quantized"]["ranges_from_training_patches"] > 0

    from vision.evidence.net import load_occupancy
    from vision.read import Reader
    from vision.synth.positions import random_position
    from vision.synth.render import render_photo

    check = load_occupancy(str(out / "space_occupancy.onnx"))
    assert check.occupancy
    patches = np.random.default_rng(1).integers(0, 255, (6, 64, 64, 3), dtype=np.uint8)
    p = check.predict(patches)
    assert p.shape == (6, 2) and np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert np.allclose(check.predict(patches[:1]), p[:1], atol=1e-5)  # one patch alone as in a batch
    reader = Reader(occupancy_path=str(out / "space_occupancy.onnx"))
    rng = np.random.default_rng(5)
    photo = render_photo(rng, random_position(rng, reader.board), (1200, 900))
    trace = reader.trace(photo.image_bgr)
    assert reader.occupancy.path == out / "space_occupancy.onnx"
    occ = trace.evidence.sources["occupancy"]
    assert np.allclose(occ[:, 1:], occ[:, 1:2])  # one answer for every car colour
    assert np.allclose(sum(trace.evidence.sources.values()), trace.evidence.loglik)


def test_smoke_car_colour_net_learns_from_real_cars_leaving_states_out(tmp_path, fake_real):
    """`ttr train --car-colour --real DIR --leave-out A`: the car-colour net trained on the car
    patches of DIR's photos but state A's (and of the renders); its config says what was left out,
    the model answers the five colours' probabilities, and the reader fuses it as evidence about
    which colour only (nothing for or against empty)."""
    real, stem_a = fake_real
    out = tmp_path / "colour"
    r = _train(["--car-colour", "--smoke", "--real", str(real), "--leave-out", "A", "--out", str(out),
                "--work", str(tmp_path / "work")], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["space_car_colour.json", "space_car_colour.onnx"]
    config = json.loads((out / "space_car_colour.json").read_text())
    assert config["classes"] == ["red", "blue", "green", "yellow", "black"] and config["smoke"] is True
    assert config["real"]["left_out"] == ["A"]
    assert [Path(p).stem for p in config["real"]["photos_left_out"]] == [stem_a]
    assert config["patches"]["real_cars"] > 0 and config["patches"]["rendered_cars"] > 0

    from vision.evidence.net import load_car_colour
    from vision.read import Reader
    from vision.synth.positions import random_position
    from vision.synth.render import render_photo

    net = load_car_colour(str(out / "space_car_colour.onnx"))
    assert net.car_colour and not net.occupancy
    patches = np.random.default_rng(2).integers(0, 255, (7, 64, 64, 3)).astype(np.uint8)
    p = net.predict(patches)
    assert p.shape == (7, 5) and np.allclose(p.sum(axis=1), 1.0, atol=1e-5)
    reader = Reader(car_colour_path=str(out / "space_car_colour.onnx"))
    rng = np.random.default_rng(5)
    trace = reader.trace(render_photo(rng, random_position(rng, reader.board), (1200, 900)).image_bgr)
    colour = trace.evidence.sources["car colour"]
    # Empty scores as the likeliest colour; the others below it as the net says.
    assert np.allclose(colour[:, 0], 0.0) and np.allclose(colour[:, 1:].max(axis=1), 0.0)
    assert np.all(colour[:, 1:] <= 1e-9) and np.any(colour[:, 1:] < -0.1)
    assert np.allclose(sum(trace.evidence.sources.values()), trace.evidence.loglik)


def _copies(real: Path, folder: Path, fired: dict[str, bool]) -> Path:
    """A stand-in for a folder of re-lit copies: `real`'s photos named in `fired`, each written
    with its EXIF saying whether the flash fired, with the same truth."""
    from vision.synth.camera import with_flash_tag

    (folder / "gt").mkdir(parents=True)
    for stem, flash in fired.items():
        photo = next(p for p in real.iterdir() if p.stem == stem and p.is_file())
        (folder / f"{stem}_rl1_0.jpg").write_bytes(with_flash_tag(photo.read_bytes(), flash))
        (folder / "gt" / f"{stem}_rl1_0.json").write_text((real / "gt" / f"{stem}.json").read_text())
    return folder


def test_smoke_car_colour_net_learns_the_copies_under_a_flash_leaving_their_states_out(tmp_path, fake_real):
    """`--copies DIR`: the copies whose flash fired are learnt beside the real photos, each left out
    with its source's state; a copy without a flash is not learnt."""
    real, stem_a = fake_real
    others = sorted(p.stem for p in (real / "gt").glob("*.json") if p.stem != stem_a)
    copies = _copies(real, tmp_path / "copies", {stem_a: True, others[0]: True, others[1]: False})
    out = tmp_path / "colour"
    r = _train(["--car-colour", "--smoke", "--real", str(real), "--copies", str(copies), "--leave-out", "A",
                "--out", str(out), "--work", str(tmp_path / "work")], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    config = json.loads((out / "space_car_colour.json").read_text())["real"]
    assert config["flash_copies"] == str(copies)
    trained, left_out = set(config["photos_trained"]), set(config["photos_left_out"])
    assert f"{others[0]}_rl1_0.jpg" in trained and f"{others[1]}_rl1_0.jpg" not in trained | left_out
    assert f"{stem_a}_rl1_0.jpg" in left_out and f"{stem_a}_rl1_0.jpg" not in trained


def test_copies_missing_or_without_a_flash_are_a_one_line_error(tmp_path, fake_real):
    real, stem_a = fake_real
    unflashed = _copies(real, tmp_path / "copies", {stem_a: False})
    for copies, message in ((unflashed, "none of its photos says its flash fired"),
                            (tmp_path / "nowhere", "not a folder with photos and their truth in gt/")):
        r = _train(["--car-colour", "--real", str(real), "--copies", str(copies), "--out", str(tmp_path / "o")],
                   tmp_path)
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1
        assert f"--copies {copies}: {message}" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--occupancy"], "--occupancy needs --real DIR"),
    (["--occupancy", "--real", "/nonexistent/real", "--copies", "/nonexistent/c"], "--copies DIR goes with --car-colour"),
    (["--car-colour"], "--car-colour needs --real DIR"),
    (["--car-colour", "--real", "/nonexistent/real"], "--real /nonexistent/real: not a folder"),
    (["--car-colour", "--occupancy", "--real", "/nonexistent/real"], "--car-colour and --occupancy make two models"),
    (["--occupancy", "--real", "/nonexistent/real", "--draws", "0"], "--draws must be at least 1"),
    (["--draws", "3"], "--draws N goes with --occupancy"),
    (["--count", "0"], "--count must be at least 1"),  # once taken silently as the default
    (["--epochs", "-1"], "--epochs must be at least 1"),
    (["--teachers", "0"], "--teachers must be at least 1"),
    (["--student-epochs", "0"], "--student-epochs must be at least 1"),
    (["--real", "/nonexistent/real", "--count", "0"], "--count must be at least 1"),
    (["--leave-out", "A"], "--leave-out and --init go with --real"),
    (["--real", "/nonexistent/real"], "--real /nonexistent/real: not a folder"),
    (["--paste", "10"], "--paste N goes with --real DIR"),
])
def test_bad_real_options_are_one_line_errors(args, message):
    r = subprocess.run([sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())",
                        "train", *args, "--out", "unused"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.strip().startswith("ttr: error: " + message) and "\n" not in r.stderr.strip()


def test_quantized_check_answers_as_the_float_one(tmp_path):
    """`models.occupancy.quantize`: the check in 8-bit integers gives the float check's P(car) to
    within a few hundredths on patches like those that measured its ranges, and still takes a batch
    of any size."""
    import onnxruntime as ort
    import torch

    from models.occupancy import export, occupancy_net, quantize
    from vision.evidence.net import model_input

    torch.manual_seed(3)
    net = occupancy_net(4).eval()
    onnx_path = tmp_path / "check.onnx"
    export([net], onnx_path, 64)
    rng = np.random.default_rng(4)
    # Smooth patches (a blurred field of a few colours), as spaces are, rather than pixel noise.
    coarse = rng.integers(0, 255, (300, 8, 8, 3)).astype(np.float32)
    patches = np.repeat(np.repeat(coarse, 8, axis=1), 8, axis=2).astype(np.uint8)
    float_p = ort.InferenceSession(str(onnx_path)).run(None, {"images": model_input(patches)})[0]
    assert quantize(onnx_path, patches[:200], seed=1, count=128) == 128
    import onnx

    graph = onnx.load(str(onnx_path)).graph
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in graph.node}
    assert any(t.data_type == onnx.TensorProto.INT8 for t in graph.initializer)  # the weights, in integers
    session = ort.InferenceSession(str(onnx_path))
    int_p = session.run(None, {"images": model_input(patches)})[0]
    assert int_p.shape == (300, 2)
    assert np.abs(int_p[:, 1] - float_p[:, 1]).max() < 0.05
    assert np.allclose(session.run(None, {"images": model_input(patches[250:251])})[0], int_p[250:251], atol=1e-6)


def test_check_of_several_draws_answers_their_mean_p_car(tmp_path):
    """`models.occupancy.export` of several draws: one model whose P(car) is the mean of each draw's
    own (each from its looks' log-odds), so no single draw decides alone."""
    import onnxruntime as ort
    import torch

    from models.occupancy import export, occupancy_net
    from vision.evidence.net import model_input

    nets = []
    for seed in (3, 4):
        torch.manual_seed(seed)
        nets.append(occupancy_net(4).eval())
    patches = np.random.default_rng(6).integers(0, 255, (20, 64, 64, 3), dtype=np.uint8)

    def p_car(members, name):
        export(members, tmp_path / name, 64)
        return ort.InferenceSession(str(tmp_path / name)).run(None, {"images": model_input(patches)})[0]

    one, other, both = p_car(nets[:1], "a.onnx"), p_car(nets[1:], "b.onnx"), p_car(nets, "ab.onnx")
    assert np.abs(one[:, 1] - other[:, 1]).max() > 1e-3  # the draws differ, so the mean is seen
    assert np.allclose(both, (one + other) / 2, atol=1e-6)
    assert np.allclose(both.sum(axis=1), 1.0, atol=1e-6)


def test_a_share_of_the_boards_finished_by_another_phones_look(tmp_path):
    """`--look-share`: the same boards and labels, their pixels as another phone finishes them
    (seed 1001's look is vivid HDR); a share of 0 is the recipe without it."""
    from models.train import render_patches
    kw = dict(count=1, seed=1001, imgsz=32, side_mm=30.0, photo_wh=(1000, 750), log=None)
    dirs = {share: tmp_path / str(share) for share in (None, 0.0, 1.0)}
    counts = {share: render_patches(d, **kw) if share is None else render_patches(d, **kw, look_share=share)
              for share, d in dirs.items()}
    assert counts[None] == counts[0.0] == counts[1.0]
    files = {share: sorted(p.relative_to(d) for p in d.rglob("*.png")) for share, d in dirs.items()}
    assert files[None] == files[0.0] == files[1.0] and files[None]
    read = lambda share, f: cv2.imread(str(dirs[share] / f)).astype(int)  # noqa: E731
    assert all(np.array_equal(read(None, f), read(0.0, f)) for f in files[None])
    changed = [np.abs(read(1.0, f) - read(None, f)).mean() > 1 for f in files[None]]
    assert np.mean(changed) > 0.5
