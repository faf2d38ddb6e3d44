"""Bare numbers in the reading path: numeric literals other than 0, 1, -1, 2 and 0.5 per 100 lines
of `vision/`, less the renderer (`synth/`), the template maker (`measure/`), the drawing palette
and the settings modules (`config.py`, `settings.py`), where numbers are named and explained.

    python3 benchmarks/count_literals.py [DIR]
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

ALLOWED = {0, 1, 2, 0.5}  # -1 is minus 1: counted as 1
LEFT_OUT_FOLDERS = ("synth/", "measure/")
LEFT_OUT_FILES = ("palette.py", "config.py", "settings.py")


def count(root: Path) -> list[tuple[str, int, int]]:
    """(file, lines, bare numbers) for every counted module under `root`."""
    rows = []
    for p in sorted(root.rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(LEFT_OUT_FOLDERS) or p.name in LEFT_OUT_FILES:
            continue
        src = p.read_text(encoding="utf-8")
        n = sum(1 for node in ast.walk(ast.parse(src))
                if isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
                and not isinstance(node.value, bool) and node.value not in ALLOWED)
        rows.append((rel, len(src.splitlines()), n))
    return rows


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "vision"
    rows = count(root)
    for rel, lines, n in rows:
        print(f"{rel:35s} {lines:5d} {n:4d} {100 * n / max(lines, 1):5.1f}")
    lines, n = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"TOTAL {lines} lines, {n} bare numbers, {100 * n / max(lines, 1):.1f} per 100 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
