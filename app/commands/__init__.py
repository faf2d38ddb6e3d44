"""The `ttr` subcommands, one module each (`app/cli.py` lists them): each has `add_arguments(parser)`
and `run(args) -> int`, and is imported only when its command runs, so `ttr --help` and `ttr tally`
start without OpenCV.
"""
from __future__ import annotations

import argparse


def size_type(low: int, high: int, also: str | None = None):
    """An argparse type for 'WxH' photo sizes, each side `low`..`high` pixels (or the word `also`)."""

    def parse(text: str):
        if also is not None and text == also:
            return text
        try:
            w, h = (int(v) for v in text.lower().split("x"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"size must look like 1600x1200{f' or {also}' if also else ''}, "
                                             f"not {text!r}") from None
        if not (low <= w <= high and low <= h <= high):
            raise argparse.ArgumentTypeError(f"size must be {low}..{high} pixels each way")
        return w, h

    return parse
