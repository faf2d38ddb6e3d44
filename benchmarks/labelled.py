"""A labelled photo set as `eval_real.py` reads one: photos in a folder, each with its truth in
gt/<photo stem>.json (`ttr render --out DIR` makes such a folder; so is ../shared/real/dev)."""
from __future__ import annotations

from pathlib import Path

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".heic")


def labelled_photos(folder: Path) -> list[tuple[Path, Path]]:
    """(photo, truth file) of every photo in `folder` that has its truth, by name."""
    folder = Path(folder)
    out = []
    for photo in sorted(p for p in folder.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES):
        gt = folder / "gt" / f"{photo.stem}.json"
        if gt.exists():
            out.append((photo, gt))
    return out


def missing_folder(folders) -> str | None:
    """The first of `folders` that is not a folder, for a script's one-line refusal; None if all are."""
    return next((str(d) for d in folders if not Path(d).is_dir()), None)


# The development set's photo sessions (../shared/real/README.md): a `_small` copy belongs to the
# session of its photo. Measured by leaving one session out, each is a fold.
SESSIONS = {
    "A+B": ("IMG_4066", "IMG_4076"),
    "D wood": ("IMG_4134",),
    "D stone": ("IMG_4132", "IMG_4140"),
    "D blanket": ("IMG_4146", "IMG_4150"),
    "D2": tuple(f"IMG_{n}" for n in range(4156, 4168)),
    "empty": ("IMG_4048", "IMG_4169", "IMG_4170", "IMG_4172"),
}


def session_of(photo_name: str) -> str:
    """The development session a photo belongs to ("" for a photo of another set)."""
    for session, stems in SESSIONS.items():
        if any(Path(photo_name).stem.startswith(s) for s in stems):
            return session
    return ""


def _key(t: dict) -> tuple:
    a, b = sorted((t["a"], t["b"]))
    return a, b, t["color"]


def compare_tracks(truth: dict, tracks: list) -> dict:
    """A reading's tracks (TrackReadings, or dicts with a, b, color, owner, doubtful) against the
    truth, as `eval_real.py` compares them: per track, the lanes of a double printed alike as a pair.
    Returns played (the truth has a claimed track), right, total, wrong (a list of (a, b, colour,
    truth owners, read owners, marked doubtful)), claims (tracks read owned) and doubtful (marked)."""
    def as_dict(t):
        return t if isinstance(t, dict) else {"a": t.a, "b": t.b, "color": t.color, "owner": t.owner,
                                              "doubtful": t.doubtful}
    tracks = [as_dict(t) for t in tracks]
    want: dict = {}
    for t in truth["tracks"]:
        want.setdefault(_key(t), []).append(t.get("owner") or None)
    got: dict = {}
    for t in tracks:
        got.setdefault(_key(t), []).append(t)
    right = total = 0
    wrong = []
    for key, owners in want.items():
        read = got.get(key, [])
        left = [t.get("owner") for t in read]
        hit = 0
        for o in owners:
            if o in left:
                left.remove(o)
                hit += 1
        right += hit
        total += len(owners)
        if hit < len(owners):
            wrong.append((*key, owners, [t.get("owner") for t in read], any(t.get("doubtful") for t in read)))
    return {"played": any(o for owners in want.values() for o in owners), "right": right, "total": total,
            "wrong": wrong, "claims": sum(1 for t in tracks if t.get("owner")),
            "doubtful": sum(1 for t in tracks if t.get("doubtful"))}
