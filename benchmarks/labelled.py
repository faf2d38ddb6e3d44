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
