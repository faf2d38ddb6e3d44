"""`ttr score PHOTO [PHOTO ...] [--game GAME.json] [--json]`: read a photo, then tally the game exactly.

The game file (the `ttr tally` format) gives the variant, each player's tickets, name and
score-track position. Routes in it are corrections: a track the file gives to a player is that
player's, whatever the photo says (each track it changes is listed). Without a game file the photo
is scored as a classic game with no tickets. The output is `ttr tally`'s, plus the reading
(doubtful tracks listed so they can be checked). Several photos are of one board, from other
sides: they are read together into one reading (`vision.several`).

A reading that breaks the rules (a player's spare cars on the board: more than 45 trains; one
colour on both tracks of a double) is held to them by `scoring.review.hold_to_rules`, the rule the
app uses too: the least sure claims that make the game legal are not counted and are listed first,
each with its reason, and everything else is scored.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from app.commands.detect import doubt_lines, other_warnings
from app.state import TableState, fix_text, marker_hints, photo_check, track_label
from calibration.user import load_calibration
from scoring.board import load_board
from scoring.errors import TtrError
from scoring.game import Game, load_json, parse_game
from scoring.report import render_text
from scoring.review import hold_to_rules
from scoring.rules import PLAYER_COLORS
from scoring.score import score_game
from vision.read import Reader
from vision.several import read_same_board


def add_arguments(parser):
    parser.add_argument("photos", nargs="+", metavar="PHOTO",
                        help="a photo of the finished board (several: the same board from other sides, read together)")
    parser.add_argument("--game", metavar="GAME.json",
                        help="variant, tickets and score-track positions (routes in it correct the photo)")
    parser.add_argument("--json", action="store_true", help="print the reading and the score sheet as JSON")
    parser.add_argument("--calibration", metavar="DIR", help="a folder made by `ttr calibrate`")


@dataclass
class Scored:
    """A photo's claims, the game file's corrections, held to the rules, ready to score."""

    game: object  # scoring.game.Game
    review: object  # scoring.review.Review
    corrections: list  # (track id, owner as read, owner in the game file)
    table: TableState  # the same as the app holds it: owners, markers, names; the file's tracks as checked


def game_from_reading(reading, game_data: dict | None) -> Scored:
    """The photo's claims, corrected by the game file's routes, held to the rules
    (`scoring.review`), with the game file's variant, tickets, names and score track."""

    read = reading.claims()
    owner = {t.track_id: t.owner for t in reading.tracks}
    variant, values, tickets, score_track, names, corrections = "classic", None, {}, {}, {}, []
    named: set[int] = set()  # the tracks the game file names: a person's word, as if checked
    parsed = parse_game(game_data) if game_data is not None else None  # (one line for a bad file)
    # The players in the game file's order, as `ttr tally` lists them; colours it leaves out
    # (or all, without a file) in the box's order.
    order = [p.color for p in parsed.players] if parsed else []
    order += [c for c in PLAYER_COLORS if c in read and c not in order]
    claims = {c: list(read.get(c, [])) for c in order}
    if parsed is not None:
        variant, values = parsed.variant, parsed.ticket_values
        for p in parsed.players:
            tickets[p.color] = list(p.tickets)
            if p.score_track is not None:
                score_track[p.color] = p.score_track
            if p.name:
                names[p.color] = p.name
        wanted = _lanes_as_read({i: p.color for p in parsed.players for i in p.track_ids}, owner)
        named = set(wanted)
        corrections = [(i, owner.get(i), now) for i, now in wanted.items() if owner.get(i) != now]
        for i, was, now in corrections:
            if was:
                claims[was].remove(i)
            claims[now].append(i)
            owner[i] = now
    sure = {t.track_id: t.confidence for t in reading.tracks}
    sure.update({i: 1.0 for i, _, _ in corrections})  # a person said so
    review = hold_to_rules(claims, sure, tickets)
    game = Game.from_claims(variant, {c: sorted(ids) for c, ids in review.claims.items()},
                            tickets=review.tickets, score_track=score_track, ticket_values=values,
                            names=names)
    table = TableState(variant=variant, players=list(claims), names=names, owners=owner,
                       score_track=score_track, checked=sorted(named))
    return Scored(game, review, corrections, table)


def marker_notes(scored: Scored, reading) -> dict[str, list[str]]:
    """Under each marker that disagrees with the routes: the likeliest single track the photo
    leaves in doubt that explains it (the app's hint, `app.state.marker_hints`), or that none does."""
    hints = marker_hints(scored.table, photo_check(reading), max_fixes=1, claims=scored.review.claims)
    return {h.color: [f"likely: {fix_text(h.fixes[0], scored.table)}" if h.fixes
                      else "no single track the photo doubts explains it: recount the marker"] for h in hints}


def _lanes_as_read(wanted: dict[int, str], owner: dict[int, str | None]) -> dict[int, str]:
    """The game file's tracks (`wanted`: track id -> player) on the lanes the photo read them on.

    A route a game file names by its cities and colour fits either lane of a double printed alike,
    and the file's choice of lane says nothing; so where the photo read that player on the other
    lane, the route is that lane (not a second claim beside it), and a lane the file's players were
    not read on goes to them, lanes read as nobody first."""
    board = load_board()
    out = dict(wanted)
    for t in board.tracks:
        twin = board.double_of(t)
        if twin is None or twin.color != t.color or t.id > twin.id or not ({t.id, twin.id} & wanted.keys()):
            continue
        lanes = (t.id, twin.id)
        players = [wanted[i] for i in lanes if i in wanted]
        kept = {}
        for i in lanes:  # lanes already read as one of the file's players of this route
            if owner.get(i) in players:
                players.remove(owner[i])
                kept[i] = owner[i]
        for i in sorted((i for i in lanes if i not in kept), key=lambda i: owner.get(i) is not None):
            if players:
                kept[i] = players.pop(0)
        for i in lanes:
            out.pop(i, None)
        out.update(kept)
    return out


def run(args) -> int:
    game_data = load_json(args.game) if args.game else None
    if game_data is not None:
        parse_game(game_data)  # a bad file fails before the photo is read
    calibration = None
    if args.calibration:
        calibration = load_calibration(args.calibration)
    # The photo is read as it is (up to the 48 cars a colour has in the box, like `ttr detect`);
    # then held to the rules by scoring.review, which says what it set aside and why.
    reader = Reader(calibration)
    if len(args.photos) == 1:
        reading, images = reader.read_path(args.photos[0]), args.photos[0]
    else:
        both = read_same_board(reader, args.photos)
        reading, images = both.reading, " and ".join(p.image for p in both.photos if p.read)
    try:
        scored = game_from_reading(reading, game_data)
        sheet = score_game(scored.game)
    except TtrError as e:
        raise TtrError(f"{e}, as read from {images} (see it with `ttr detect --overlay DIR`)") from None
    tracks = load_board().tracks
    set_aside = [f"{track_label(tracks[s.track_id])}: {s.owner}: {s.reason}" for s in scored.review.set_aside]
    set_aside += [f"ticket {t.ticket[0]}-{t.ticket[1]}: {t.owner}: {t.reason}"
                  for t in scored.review.set_aside_tickets]
    corrected = [f"{track_label(tracks[i])}: read {was or 'nobody'}, the game file says {now}"
                 for i, was, now in scored.corrections]
    doubtful = doubt_lines(reading)
    notes = marker_notes(scored, reading)
    if args.json:
        out = {"image": images, "reading": reading.to_dict(), "score": sheet.to_dict(),
               "not_counted": set_aside, "corrected_by_game_file": corrected, "doubtful": doubtful,
               "score_track_mismatches": notes}
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(render_text(sheet, notes))
    print(f"\nread from {images} in {reading.elapsed_ms:.0f} ms")
    if set_aside:
        print("not counted, the rules forbid them (check these first):")
        for d in set_aside:
            print(f"  {d}")
    if corrected:
        print(f"corrected by {args.game}:")
        for d in corrected:
            print(f"  {d}")
    for w in other_warnings(reading):
        print(f"warning: {w}")
    if doubtful:
        print("doubtful tracks (check them on the board):")
        for d in doubtful:
            print(f"  {d}")
    return 0
