"""`ttr tally GAME.json [--json]`: score a game file exactly.

Prints a table by default, or the score sheet as JSON (the format other tools read) with --json.
Any problem with the file is one line on stderr and exit status 2 (raised as `TtrError`).
"""
from __future__ import annotations

import argparse
import json
import sys

from scoring.game import read_game
from scoring.report import render_text
from scoring.score import score_game


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME.json", help="game file: variant, players with routes and tickets")
    parser.add_argument("--json", action="store_true", help="print the score sheet as JSON")


def run(args: argparse.Namespace) -> int:
    sheet = score_game(read_game(args.game))
    if args.json:
        json.dump(sheet.to_dict(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(sheet))
    return 0
