"""`ttr score PHOTO [--game GAME.json] [--json]`: read a photo, then tally the game exactly.

The game file (the `ttr tally` format) gives the variant, each player's tickets and score-track
position; its routes are ignored, since the routes come from the photo. Without a game file the
photo is scored as a classic game with no tickets. The output is `ttr tally`'s, plus the reading
(doubtful tracks listed so they can be checked).
"""
from __future__ import annotations

import json
import sys

RULES_TRAINS = 45


def add_arguments(parser):
    parser.add_argument("photo", metavar="PHOTO", help="a photo of the finished board")
    parser.add_argument("--game", metavar="GAME.json", help="variant, tickets and score-track positions")
    parser.add_argument("--json", action="store_true", help="print the reading and the score sheet as JSON")
    parser.add_argument("--calibration", metavar="DIR", help="a folder made by `ttr calibrate`")


def game_from_reading(reading, game_data: dict | None):
    """A `scoring.game.Game` with the photo's claims and the game file's tickets and score track."""
    from scoring.game import Game

    variant, values, tickets, score_track = "classic", None, {}, {}
    if game_data is not None:
        if not isinstance(game_data, dict):
            from scoring.errors import TtrError

            raise TtrError("game file must be a JSON object with variant and players")
        variant = game_data.get("variant", variant)
        values = game_data.get("ticket_values")
        for p in game_data.get("players") or []:
            if not isinstance(p, dict) or "color" not in p:
                continue
            c = p["color"]
            if p.get("tickets"):
                tickets[c] = [tuple(t) if isinstance(t, list) else t for t in p["tickets"]]
            if p.get("score_track") is not None:
                score_track[c] = p["score_track"]
    claims = reading.claims()
    return Game.from_claims(variant, claims, tickets=tickets, score_track=score_track, ticket_values=values)


def run(args) -> int:
    from scoring.errors import TtrError
    from scoring.game import load_json
    from scoring.report import render_text
    from scoring.score import score_game
    from vision.decide import DecideConfig
    from vision.read import Reader

    game_data = load_json(args.game) if args.game else None  # bad files fail before the photo is read
    calibration = None
    if args.calibration:
        from calibration.fit import load_calibration

        calibration = load_calibration(args.calibration)
    # Scoring holds a game to the rules, so the reading is too: at most 45 trains a player (the
    # rule settles doubtful spaces; a track it had to drop is listed as doubtful, not hidden).
    reading = Reader(calibration, decide_cfg=DecideConfig(max_trains=RULES_TRAINS)).read_path(args.photo)
    try:
        sheet = score_game(game_from_reading(reading, game_data))
    except TtrError as e:
        raise TtrError(f"{e}, as read from {args.photo} (see it with `ttr detect --overlay DIR`)") from None
    doubtful = [f"{t.a}-{t.b} ({t.color}): {t.owner or 'nobody'}, confidence {t.confidence:.2f}"
                for t in reading.doubtful]
    if args.json:
        out = {"image": args.photo, "reading": reading.to_dict(), "score": sheet.to_dict(), "doubtful": doubtful}
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(render_text(sheet))
    print(f"\nread from {args.photo} in {reading.elapsed_ms:.0f} ms")
    for w in reading.warnings:
        print(f"warning: {w}")
    if doubtful:
        print("doubtful tracks (check them on the board):")
        for d in doubtful:
            print(f"  {d}")
    return 0
