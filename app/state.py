"""What the page holds between reruns, and its conversions to and from the project's libraries.

Pure Python (no Streamlit), so the tests can hold every hand-off: the page keeps a `TableState`
(setup, owner of each track, tickets, score-track markers, undo steps, tickets set aside by a
variant switch) and a `PhotoCheck` (what the photo reader said about each track, in words), and
asks `scoring` for everything that is a rule. Ticket keys are "A – B" strings in the board data's
city order. Both convert to and from plain JSON, which is what `app.history` saves.

Doubt in words: the reader (`vision.reading.TrackReading`) gives a confidence (the calibrated
chance its owner is right), a doubtful flag and, for a doubtful track, why in a player's words
(`vision.decide.doubt_reason`); the page shows that reason with the owner read and how sure.
A reading without one (made before readers gave reasons) gets one derived from the spaces'
evidence: the next likeliest owner and how far behind it is.
"""
from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from calibration.template import load_template
from scoring.board import Ticket, Track, load_board
from scoring.errors import TtrError
from scoring.game import Game, parse_game, parse_json
from scoring.review import Review, hold_to_rules
from scoring.rules import PLAYER_COLORS, VARIANTS, route_points
from scoring.score import SCORE_TRACK_LAP, PlayerScore, ScoreSheet, score_game
from vision.image_io import load_photo
from vision.reading import DOUBTFUL_TRACKS, Notice, Reading, TrackReading
from vision.rectify import flatten, photo_px_per_mm
from vision.settings import DecideSettings, DoubtSettings

DASH = " – "  # between two city names in every label the page shows
CHECK_MARK = "? "  # before a track to check in the page's track list (as "?" marks it on the board)


def ticket_key(ticket: Ticket) -> str:
    return f"{ticket.a}{DASH}{ticket.b}"


def ticket_points(ticket: Ticket, ticket_values: str) -> int:
    """The value printed on the card in the chosen set (2004 cards fall back to the 1910 box)."""
    if ticket_values == "2004" and ticket.points_2004 is not None:
        return ticket.points_2004
    return ticket.points


def deck(variant: str) -> list[Ticket]:
    """The variant's destination tickets, sorted by first city then second."""
    tag = VARIANTS[variant].deck
    return sorted((t for t in load_board().tickets if tag in t.decks), key=lambda t: (t.a, t.b))


def ticket_labels(variant: str, ticket_values: str) -> dict[str, str]:
    """Ticket key -> "Denver – El Paso (4)" for the variant's deck."""
    return {ticket_key(t): f"{ticket_key(t)} ({ticket_points(t, ticket_values)})" for t in deck(variant)}


def track_label(track: Track) -> str:
    """"Denver – Kansas City (4-train black track)": the printed colour said as the track's, not a
    player's. The two tracks of a double route differ by printed colour, or, both gray, by where
    they lie: "Portland – Seattle (1-train gray track, left)"."""
    label = f"{track.a}{DASH}{track.b} ({track.length}-train {track.color} track"
    other = load_board().double_of(track)
    if other is not None and other.color == track.color:
        label += ", " + _side(track.id, other.id)
    return label + ")"


def _side(track_id: int, other_id: int) -> str:
    """Where a track lies beside its twin on the board: upper/lower, or left/right for a
    track running more up-down than across."""
    tpl = load_template()
    mine, theirs = tpl.tracks[track_id].centers(), tpl.tracks[other_id].centers()
    run = np.abs(mine[-1] - mine[0]) if len(mine) > 1 else np.abs(
        tpl.cities[tpl.tracks[track_id].b] - tpl.cities[tpl.tracks[track_id].a])
    dx, dy = mine.mean(axis=0) - theirs.mean(axis=0)
    if run[0] >= run[1]:  # runs across: one above the other
        return "upper" if dy < 0 else "lower"
    return "left" if dx < 0 else "right"


@dataclass(frozen=True)
class Step:
    """One change of one track's owner, for undo."""

    track_id: int
    before: str | None
    after: str | None


@dataclass
class TableState:
    """Everything a person has entered or corrected, as plain values."""

    variant: str = "classic"
    ticket_values: str = "2004"
    players: list[str] = field(default_factory=lambda: ["red", "blue"])
    names: dict[str, str] = field(default_factory=dict)
    owners: dict[int, str | None] = field(default_factory=dict)  # track id -> player colour
    tickets: dict[str, list[str]] = field(default_factory=dict)  # colour -> ticket keys
    score_track: dict[str, int | None] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)  # owner changes, oldest first (undo pops the last)
    set_aside_tickets: dict[str, list[str]] = field(default_factory=dict)  # colour -> keys not in this deck
    checked: list[int] = field(default_factory=list)  # doubtful tracks a person looked at and found right

    def to_json(self) -> dict:
        d = asdict(self)
        d["owners"] = {str(k): v for k, v in self.owners.items()}
        return d

    @classmethod
    def from_json(cls, d: dict) -> "TableState":
        d = dict(d)
        d["owners"] = {int(k): v for k, v in d.get("owners", {}).items()}
        d["steps"] = [Step(**s) for s in d.get("steps", [])]
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    def claims(self) -> dict[str, list[int]]:
        """Track ids per player, every player present (a player may own none)."""
        out: dict[str, list[int]] = {c: [] for c in self.players}
        for tid, owner in sorted(self.owners.items()):
            if owner:
                out.setdefault(owner, []).append(tid)
        return out

    def ticket_pairs(self) -> dict[str, list[tuple[str, str]]]:
        return {c: [tuple(k.split(DASH)) for k in self.tickets.get(c, [])] for c in self.players}

    def markers(self) -> dict[str, int]:
        return {c: int(v) for c, v in self.score_track.items() if v is not None and c in self.players}

    def display_name(self, color: str) -> str:
        name = (self.names.get(color) or "").strip()
        return f"{name} ({color})" if name else color.capitalize()


def sort_players(colors) -> list[str]:
    """Player colours in the box's order (red, blue, green, yellow, black)."""
    chosen = set(colors)
    return [c for c in PLAYER_COLORS if c in chosen]


def score_sheet(sheet: "ScoreSheet | dict") -> ScoreSheet:
    """A score sheet, also from its JSON form (`ScoreSheet.to_dict()`, as `ttr tally --json` writes it)."""
    return ScoreSheet.from_dict(sheet) if isinstance(sheet, dict) else sheet


def sheet_csv(sheet: "ScoreSheet | dict", names: dict[str, str] | None = None) -> str:
    """The score sheet as CSV: one row per player, one per ticket."""
    sheet = score_sheet(sheet)
    names = names or {}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["player", "name", "item", "points", "detail"])
    for p in sheet.players:
        c, n = p.color, names.get(p.color, "")
        for r in p.routes:
            w.writerow([c, n, "route", r.points, f"{r.a}{DASH}{r.b} ({r.length} {r.color})"])
        w.writerow([c, n, "route points", p.route_points, f"{p.trains} trains"])
        for t in p.tickets:
            sign = t.points if t.completed else -t.points
            w.writerow([c, n, "ticket", sign, f"{t.a}{DASH}{t.b} {'completed' if t.completed else 'failed'}"])
        w.writerow([c, n, "longest path", p.longest_path_bonus,
                    f"{p.longest_path} trains: {DASH.join(p.longest_path_cities)}"])
        w.writerow([c, n, "globetrotter", p.globetrotter_bonus, f"{p.completed_tickets} tickets completed"])
        check = p.score_track
        if check:
            w.writerow([c, n, "score track", check.reported,
                        f"expected {check.expected}: {'matches' if check.matches else 'does not match'}"])
        w.writerow([c, n, "total", p.total, "winner" if c in sheet.winners else ""])
    return out.getvalue()


def player_rows(p: PlayerScore, variant: str) -> "list[tuple[str, int]]":
    """One player's score-sheet entry as (item, points) rows: routes, each ticket completed (+)
    or failed (-), the variant's bonus cards, the total."""
    rows = [(f"Routes ({p.trains} trains)", p.route_points)]
    for t in p.tickets:
        rows.append((f"{'✓' if t.completed else '✗'} {t.a}{DASH}{t.b}", t.points if t.completed else -t.points))
    if VARIANTS[variant].longest_path_card:
        rows.append((f"Longest path: {p.longest_path} trains", p.longest_path_bonus))
    if VARIANTS[variant].globetrotter_card:
        rows.append((f"Globetrotter ({p.completed_tickets} tickets done)", p.globetrotter_bonus))
    rows.append(("Total", p.total))
    return rows


@dataclass
class Scored:
    """What the results show: the game as scored (held to the rules), its sheet, and what the
    rules made the page set aside (`scoring.review`, the rule `ttr score` uses too)."""

    game: Game  # legal: `ttr tally` scores its file the same
    score_sheet: ScoreSheet
    review: Review

    @property
    def sheet(self) -> dict:
        """The sheet in its JSON form (`ScoreSheet.to_dict()`), for callers that index it."""
        return self.score_sheet.to_dict()


def score(tab: TableState, photo: "PhotoCheck | None" = None) -> Scored:
    """Score what is on the page. Claims that break a rule (more than 45 trains, both tracks of
    a double) do not stop it: `scoring.review.hold_to_rules` sets the least sure aside (the photo's
    confidence; a track a person gave an owner counts as sure) and the rest is scored."""
    sure: dict[int, float] = {}
    if photo is not None:
        for t in photo.tracks:
            if tab.owners.get(t.track_id) == t.owner and t.track_id not in tab.checked:
                sure[t.track_id] = t.confidence
    claims = tab.claims()
    review = hold_to_rules(claims, sure, tickets=tab.ticket_pairs(), n_players=len(claims))
    game = Game.from_claims(tab.variant, review.claims, tickets=review.tickets,
                            score_track=tab.markers(), ticket_values=tab.ticket_values,
                            names={c: n.strip()[:40] for c, n in tab.names.items() if (n or "").strip()})
    return Scored(game, score_game(game), review)


# ---------------------------------------------------------------------------------------------
# The photo's reading, as the page keeps it (and saves it)

OWNER_CLASSES = (None,) + PLAYER_COLORS  # vision.reading.SPACE_CLASSES order, nobody for "empty"
# The reader's own setting (vision.decide): how it tempers summed space evidence (spaces are not
# independent).
TEMPERATURE = DecideSettings().temperature


@dataclass(frozen=True)
class TrackCheck:
    """What the photo says about one track, with the page's reason in words."""

    track_id: int
    owner: str | None
    confidence: float  # the reader's, for `owner`
    doubtful: bool  # the reader's mark
    evidence: tuple[float, ...]  # P(nobody, red, blue, green, yellow, black) from the spaces alone
    reason: str = ""  # why it is doubtful, for a player ("" when it is not)

    def chance(self, owner: str | None) -> float:
        return self.evidence[OWNER_CLASSES.index(owner)]


@dataclass
class PhotoCheck:
    """A photo's reading kept by the page: per track, the reader's owner, confidence, mark and
    the reason in words; the warnings (`vision.reading.Notice`: the page matches their codes);
    the flattened board as JPEG (`board_as_taken`: at the photo's own resolution; drawn on at
    the page's size)."""

    image: str
    tracks: list[TrackCheck]
    warnings: list[Notice]
    elapsed_ms: float
    board_jpeg: bytes = b""

    @property
    def doubtful(self) -> list[TrackCheck]:
        return [t for t in self.tracks if t.doubtful]

    def owners(self) -> dict[int, str | None]:
        return {t.track_id: t.owner for t in self.tracks}

    def to_json(self, with_image: bool = False) -> dict:
        """Plain JSON: a warning without a code is its text, one with a code {"code", "text"}."""
        d = {"image": self.image, "warnings": [asdict(w) if w.code else w.text for w in self.warnings],
             "elapsed_ms": self.elapsed_ms, "tracks": [asdict(t) for t in self.tracks]}
        if with_image:
            d["board_jpeg"] = base64.b64encode(self.board_jpeg).decode()
        return d

    @classmethod
    def from_json(cls, d: dict, board_jpeg: bytes | None = None) -> "PhotoCheck":
        jpeg = board_jpeg if board_jpeg is not None else base64.b64decode(d.get("board_jpeg", ""))
        tracks = [TrackCheck(**{**t, "evidence": tuple(t["evidence"])}) for t in d["tracks"]]
        warnings = [Notice(**w) if isinstance(w, dict) else Notice.of(w) for w in d.get("warnings", [])]
        return cls(d["image"], tracks, _coded(warnings, tracks), float(d.get("elapsed_ms", 0.0)), jpeg)


def _coded(warnings: list[Notice], tracks: list[TrackCheck]) -> list[Notice]:
    """The warnings, the doubtful tracks' one coded also where it came as plain text (games saved
    before warnings had codes, or a reader that gives none): the reader names the doubtful tracks
    in its last warning, and only when some track is doubtful."""
    if warnings and not any(w.code for w in warnings) and any(t.doubtful for t in tracks):
        return warnings[:-1] + [Notice(DOUBTFUL_TRACKS, warnings[-1].text)]
    return warnings


def evidence(space_probs) -> tuple[float, ...]:
    """P(owner) over OWNER_CLASSES from a track's per-space class probabilities, summed in log
    and tempered as the reader does (no rules, no priors: what the spaces alone say)."""
    ll = np.log(np.clip(np.asarray(space_probs, float), 1e-6, 1.0)).sum(axis=0) / TEMPERATURE
    p = np.exp(ll - ll.max())
    return tuple(float(v) for v in p / p.sum())


def who(owner: str | None) -> str:
    return owner or "nobody"


def track_check(t: TrackReading, board_track: Track) -> TrackCheck:
    """A track's reading as the page keeps it, with the reason it is doubtful."""
    check = TrackCheck(t.track_id, t.owner, float(t.confidence), bool(t.doubtful), evidence(t.space_probs))
    return replace(check, reason=doubt_reason(check, board_track, t.reason))


def runner_up(t: TrackCheck) -> tuple[str | None, float]:
    """The likeliest owner other than the one read, by the spaces' evidence."""
    others = [(p, o) for o, p in zip(OWNER_CLASSES, t.evidence) if o != t.owner]
    p, o = max(others, key=lambda x: x[0])
    return o, p


def doubt_reason(t: TrackCheck, track: Track, said: str = "") -> str:
    """Why a track is marked doubtful, in a player's words: the reader's reason (`said`) with the
    owner read and how sure; without one, derived from the spaces' evidence."""
    if not t.doubtful:
        return ""
    if said:
        said = said.strip()
        end = "" if said[-1] in ".?!" else "."
        return f"{said[0].upper()}{said[1:]}{end} Read as {who(t.owner)}, {t.confidence:.0%} sure."
    alt, p_alt = runner_up(t)
    own_colour = track.color in OWNER_CLASSES and t.owner in (None, track.color) and alt in (None, track.color)
    if own_colour:
        return (f"{track.color.capitalize()} cars on a {track.color} track are hard to tell from the print: "
                f"read as {who(t.owner)} ({t.confidence:.0%}). Look whether {track.color} cars are there.")
    if p_alt >= 0.02:
        return (f"Read as {who(t.owner)} ({t.confidence:.0%}); it could be {who(alt)} "
                f"({p_alt:.0%} by the photo). Look at it.")
    return (f"Read as {who(t.owner)}, only {t.confidence:.0%} sure: the rules "
            "or a close neighbour weighed in. Look at it.")


OWN_PX_PER_MM_MAX = 5.0  # a 12 MP photo of the board is ~3.5-4.5 px/mm; a bigger one is kept at this


def board_as_taken(photo_path: str, reading: Reading) -> np.ndarray:
    """The photo's board flattened at the photo's own resolution (its pixels per mm over the board,
    at most OWN_PX_PER_MM_MAX): what the page cuts a track out of to show it as photographed. (The
    reader's own flattened board is at 2 px/mm, and read from a photo decoded reduced.)"""
    corners = reading.location.corners_xy
    return flatten(load_photo(photo_path), corners, px_per_mm=min(photo_px_per_mm(corners), OWN_PX_PER_MM_MAX))


def photo_check(reading: Reading, board_jpeg: bytes = b"") -> PhotoCheck:
    """A photo's reading as the page keeps it."""
    board_tracks = load_board().tracks
    tracks = [track_check(t, board_tracks[t.track_id]) for t in reading.tracks]
    warnings = _coded([Notice.of(w) for w in reading.warnings], tracks)
    return PhotoCheck(reading.image, tracks, warnings, float(reading.elapsed_ms), board_jpeg)


# ---------------------------------------------------------------------------------------------
# Undo and the variant switch

def change_owner(tab: TableState, track_id: int, owner: str | None) -> bool:
    """Give a track to `owner` (None: nobody), remembered as one undo step. False if no change."""
    before = tab.owners.get(track_id)
    if before == owner:
        return False
    tab.owners[track_id] = owner
    tab.steps.append(Step(track_id, before, owner))
    return True


def to_check(tab: TableState, photo: "PhotoCheck | None", set_aside: Iterable[int] = ()) -> list[int]:
    """The tracks a person should look at, in the order to look at them: those the rules set
    aside (`set_aside`, from `scoring.review`), then the photo's doubtful ones nobody has settled
    yet, least sure first."""
    first = sorted(set(set_aside))
    doubtful = sorted(still_doubtful(tab, photo), key=lambda t: t.confidence)
    return first + [t.track_id for t in doubtful if t.track_id not in first]


def check_reason(track_id: int, tab: TableState, photo: "PhotoCheck | None", review: Review | None = None) -> str:
    """What the page says of a track, in one line: why the rules set it aside, why the photo
    doubts it, or what the photo read and how sure, and whether a person corrected or checked it."""
    aside = {a.track_id: a.reason for a in review.set_aside} if review else {}
    if track_id in aside:
        return aside[track_id][0].upper() + aside[track_id][1:]
    if photo is None:
        return ""
    t = photo.tracks[track_id]
    if tab.owners.get(track_id) != t.owner:
        return f"Corrected: the photo read {who(t.owner)}, {t.confidence:.0%} sure."
    if t.doubtful and track_id in tab.checked:
        return f"Checked: right as read ({who(t.owner)})."
    if t.doubtful:
        return t.reason
    return f"The photo reads {who(t.owner)}, {t.confidence:.0%} sure."


def still_doubtful(tab: TableState, photo: "PhotoCheck | None") -> list[TrackCheck]:
    """The photo's doubtful tracks nobody has settled yet: not found right as read, not
    corrected (a person gave it an owner)."""
    if photo is None:
        return []
    return [t for t in photo.doubtful if t.track_id not in tab.checked and tab.owners.get(t.track_id) == t.owner]


def undo(tab: TableState) -> Step | None:
    """Take back the last owner change; returns it (None when there is nothing to undo)."""
    if not tab.steps:
        return None
    step = tab.steps.pop()
    tab.owners[step.track_id] = step.before
    return step


def switch_variant(tab: TableState, variant: str) -> dict[str, list[str]]:
    """Change the variant keeping every ticket that is in the new deck; those that are not are
    set aside (and come back when a deck that has them is chosen again). Returns the tickets set
    aside by this switch, per colour."""
    keys = {ticket_key(t) for t in deck(variant)}
    moved: dict[str, list[str]] = {}
    for c in set(tab.tickets) | set(tab.set_aside_tickets):
        held = list(tab.tickets.get(c, []))
        aside = list(tab.set_aside_tickets.get(c, []))
        back = [k for k in aside if k in keys and k not in held]
        out = [k for k in held if k not in keys]
        tab.tickets[c] = [k for k in held if k in keys] + back
        tab.set_aside_tickets[c] = [k for k in aside if k not in back] + out
        if not tab.set_aside_tickets[c]:
            del tab.set_aside_tickets[c]
        if out:
            moved[c] = out
    tab.variant = variant
    values = VARIANTS[variant].ticket_values
    if tab.ticket_values not in values:
        tab.ticket_values = values[0]
    return moved


# ---------------------------------------------------------------------------------------------
# Another photo of the same board (read together with the game's others: `vision.several`)

def photo_name(name: str, taken: Iterable[str]) -> str:
    """The name a photo goes by in its game: its file's, with " (2)", " (3)", ... where another
    photo of the game has that name already (a phone names every camera photo alike)."""
    taken = set(taken)
    if name not in taken:
        return name
    stem, dot, ext = name.rpartition(".")
    if not stem:
        stem, dot, ext = name, "", ""
    n = 2
    while f"{stem} ({n}){dot}{ext}" in taken:
        n += 1
    return f"{stem} ({n}){dot}{ext}"


def set_by_person(tab: TableState) -> set[int]:
    """The tracks a person decided: corrected (an undo step) or found right as read."""
    return {s.track_id for s in tab.steps} | set(tab.checked)


@dataclass(frozen=True)
class PhotoNews:
    """What a photo added to the game changed in its reading (track ids, in track order)."""

    photo: str  # the photo added
    settled: tuple[int, ...]  # tracks the reading doubted and now does not
    doubts: tuple[int, ...]  # tracks it doubts now and did not before ("the photos disagree", most often)
    changed: tuple[int, ...]  # other tracks now read with another owner
    kept: tuple[int, ...]  # tracks a person set that the photos now read otherwise: they stay as set


def photo_news(tab: TableState, before: PhotoCheck, after: PhotoCheck, photo: str) -> PhotoNews:
    """Compare the game's reading before and after a photo was added (call before `take_reading`)."""
    was, now = before.tracks, after.tracks
    settled = tuple(t.track_id for t in now if was[t.track_id].doubtful and not t.doubtful)
    doubts = tuple(t.track_id for t in now if t.doubtful and not was[t.track_id].doubtful)
    mine = set_by_person(tab)
    kept = tuple(t.track_id for t in now if t.track_id in mine and t.owner != was[t.track_id].owner
                 and tab.owners.get(t.track_id) != t.owner)
    changed = tuple(t.track_id for t in now if t.owner != was[t.track_id].owner
                    and t.track_id not in settled + doubts + kept)
    return PhotoNews(photo, settled, doubts, changed, kept)


def take_reading(tab: TableState, after: PhotoCheck) -> None:
    """The game's reading becomes `after` (the reading of all its photos): a track a person set
    (corrected, or found right as read) stays as they set it, every other track takes the owner
    read now. The undo steps stay, each track's first one now going back to the owner read now;
    a step that no longer changes anything goes."""
    mine = set_by_person(tab)
    for t in after.tracks:
        if t.track_id not in mine:
            tab.owners[t.track_id] = t.owner
    seen: set[int] = set()
    steps = []
    for s in tab.steps:
        if s.track_id not in seen:
            seen.add(s.track_id)
            s = replace(s, before=after.tracks[s.track_id].owner)
            if s.before == s.after:
                continue
        steps.append(s)
    tab.steps[:] = steps


def _tracks_said(ids: Iterable[int], say, sep: str = "; ") -> str:
    return sep.join(f"{track_label(load_board().tracks[i])}: {say(i)}" for i in ids)


def _n(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


def news_texts(news: PhotoNews, after: PhotoCheck, tab: TableState) -> list[tuple[str, str]]:
    """What the page says of a photo added, as (kind, text), kind one of "settled", "doubts",
    "changed", "kept", or "same" when the photo changes nothing."""
    now = after.tracks
    out = []
    if news.settled:
        out.append(("settled", f"The new photo ({news.photo}) settles {_n(len(news.settled), 'track')}: "
                    + _tracks_said(news.settled, lambda i: who(now[i].owner)) + "."))
    if news.doubts:
        out.append(("doubts", f"The new photo ({news.photo}) brings {_n(len(news.doubts), 'new doubt')}, "
                    "marked ? to check: " + _tracks_said(news.doubts, lambda i: now[i].reason, " ")))
    if news.changed:
        out.append(("changed", f"The new photo ({news.photo}) reads {_n(len(news.changed), 'track')} otherwise: "
                    + _tracks_said(news.changed, lambda i: f"now {who(now[i].owner)}") + "."))
    if news.kept:
        out.append(("kept", "Kept as you set " + ("it" if len(news.kept) == 1 else "them") + ", though the photos "
                    "now read otherwise: " + _tracks_said(
                        news.kept, lambda i: f"yours {who(tab.owners.get(i))}, the photos {who(now[i].owner)}") + "."))
    if not out:
        out.append(("same", f"The new photo ({news.photo}) reads the board as it was read: nothing changes."))
    return out


# ---------------------------------------------------------------------------------------------
# The score track as a check on the reading

@dataclass(frozen=True)
class Fix:
    """A change of one track that would make a player's marker agree with the route points."""

    track_id: int
    owner: str | None  # the owner it would get
    was: str | None
    chance: float | None  # the photo's chance that `owner` is right (`change_chance`); None without a photo
    all_agree: bool  # with it, every marker entered agrees


@dataclass(frozen=True)
class MarkerHint:
    color: str
    reported: int
    expected: int
    fixes: tuple[Fix, ...]  # likeliest first


LAP = SCORE_TRACK_LAP  # the score track runs 0..99 and markers lap it
# A hint proposes a change only where the photo leaves it this likely (below, one tap would make
# the numbers agree and the score wrong), and never on a track the reader calls sure (read at
# `DoubtSettings.below` or surer) nor on one the photo is 95 % sure of, whatever the fitted mark,
# even to give it back after a person changed it.
PLAUSIBLE = 0.05
NEVER_FIXED_FROM = 0.95
SURE = min(DoubtSettings().below, NEVER_FIXED_FROM)


def change_chance(t: TrackCheck, owner: str | None) -> float:
    """The photo's chance that a track's owner is `owner`: the reader's confidence for the owner it
    read; for another, the rest of the chance (1 - confidence) shared as the spaces' evidence
    shares it among the other owners."""
    if owner == t.owner:
        return t.confidence
    others = sum(p for o, p in zip(OWNER_CLASSES, t.evidence) if o != t.owner)
    share = t.chance(owner) / others if others > 0 else 1 / (len(OWNER_CLASSES) - 1)
    return (1 - t.confidence) * share


def marker_hints(tab: TableState, photo: PhotoCheck | None = None, max_fixes: int = 3,
                 claims: dict[str, list[int]] | None = None) -> list[MarkerHint]:
    """For each player whose marker disagrees with their route points: which single track, given
    to them or taken from them, would close the gap (a lap of 100 allowed). With a photo, only
    changes it leaves plausible (`change_chance` at least PLAUSIBLE), never on a track it is SURE
    of, and never on a track a person found right as read and left so; likeliest first. A change that makes another player's
    entered marker disagree is left out; `all_agree` says when every entered marker then agrees.
    `claims`: the claims scored (default: the page's; the app passes those `scoring.review` kept)."""
    board = load_board()
    claims = claims if claims is not None else tab.claims()
    owner_of = {i: c for c, ids in claims.items() for i in ids}
    points = {c: sum(route_points(board.tracks[i].length) for i in ids) for c, ids in claims.items()}
    markers = tab.markers()

    def agrees(c: str, pts: int) -> bool:
        return c not in markers or markers[c] % LAP == pts % LAP

    checks = {t.track_id: t for t in photo.tracks} if photo else {}
    hints = []
    for c, m in markers.items():
        if agrees(c, points.get(c, 0)):
            continue
        fixes = []
        for t in board.tracks:
            if t.id in tab.checked and (photo is None or tab.owners.get(t.id) == checks[t.id].owner):
                continue  # a person looked and found it right as read (and left it so)
            was = owner_of.get(t.id)
            pts = route_points(t.length)
            if was == c:
                options = [o for o in [None] + list(claims) if o != c]
                change = {c: -pts}
            else:
                other = board.double_of(t)
                if other is not None and owner_of.get(other.id) == c:
                    continue  # a player holds one track of a double
                options = [c]
                change = {c: pts} | ({was: -pts} if was else {})
            for new in options:
                if tab.owners.get(t.id) == new:
                    continue  # (a claim the rules set aside: the page has it already)
                delta = dict(change)
                if was == c and new:
                    delta[new] = delta.get(new, 0) + pts
                if not agrees(c, points.get(c, 0) + delta[c]):
                    continue
                others = [o for o in delta if o != c]
                if any(o in markers and agrees(o, points.get(o, 0)) and not agrees(o, points.get(o, 0) + delta[o])
                       for o in others):
                    continue  # it would break a marker that agrees now
                chance = None
                if photo is not None:
                    if checks[t.id].confidence >= SURE:
                        break
                    chance = change_chance(checks[t.id], new)
                    if chance < PLAUSIBLE:
                        continue
                new_points = {o: points.get(o, 0) + delta.get(o, 0) for o in set(points) | set(delta)}
                all_agree = all(agrees(o, new_points.get(o, 0)) for o in markers)
                fixes.append(Fix(t.id, new, was, chance, all_agree))
        fixes.sort(key=lambda f: (not f.all_agree, -(f.chance or 0), track_label(board.tracks[f.track_id])))
        hints.append(MarkerHint(c, m, points.get(c, 0), tuple(fixes[:max_fixes])))
    return hints


def fix_text(f: Fix, tab: TableState) -> str:
    """"Give Portland – Salt Lake City (6-train blue track) to Blue: 15 points (the photo gives
    Blue 84 %)": the change, what it is worth, and how sure the photo is of it."""
    t = load_board().tracks[f.track_id]
    pts = route_points(t.length)
    move = (f"give {track_label(t)} to {tab.display_name(f.owner)}" if f.owner and not f.was
            else f"{track_label(t)} is {tab.display_name(f.owner)}'s, not {tab.display_name(f.was)}'s" if f.owner
            else f"{track_label(t)} is nobody's (take it from {tab.display_name(f.was)})")
    sure = f" (the photo gives {tab.display_name(f.owner) if f.owner else 'nobody'} {f.chance:.0%})" \
        if f.chance is not None else ""
    return f"{move[0].upper()}{move[1:]}: {pts} points{sure}"


# ---------------------------------------------------------------------------------------------
# The ranking

@dataclass(frozen=True)
class Place:
    place: int  # 1 = winner(s); tied totals share a place
    color: str
    name: str
    total: int
    note: str  # what decided it, for the winners; "" otherwise


def ranking(sheet: "ScoreSheet | dict", tab: TableState) -> list[Place]:
    """Players by total (highest first); the winners first and together, with what decided it."""
    sheet = score_sheet(sheet)
    winners = sheet.winners
    players = sorted(sheet.players, key=lambda p: (p.color not in winners, -p.total))
    out, place, last = [], 0, None
    for n, p in enumerate(players, 1):
        key = (p.color in winners, p.total)
        if key != last:
            place, last = n, key
        note = ""
        if p.color in winners:
            note = {"points": "", "completed tickets": "more tickets done",
                    "longest path card": "Longest Path card", "shared": "shared win"}.get(sheet.decided_by, "")
        out.append(Place(place, p.color, tab.display_name(p.color), p.total, note))
    return out


def share_rows(sheet: "ScoreSheet | dict", tab: TableState) -> list[tuple[str, str, str]]:
    """The ranking as the results picture shows it: (colour, "1. Ada (red)", "112"), with what
    decided a tie and who holds a bonus card beside the name."""
    sheet = score_sheet(sheet)
    by_color = {p.color: p for p in sheet.players}
    rows = []
    for p in ranking(sheet, tab):
        me = by_color[p.color]
        extra = [p.note] if p.note else []
        if me.longest_path_bonus:
            extra.append(f"longest path, {me.longest_path} trains")
        if me.globetrotter_bonus:
            extra.append("globetrotter")
        rows.append((p.color, f"{p.place}. {p.name}" + (f" · {', '.join(extra)}" if extra else ""), str(p.total)))
    return rows


def results_text(sheet: "ScoreSheet | dict", tab: TableState, when: str = "") -> str:
    """The results in a few lines for the group chat: the game, the ranking, what decided a tie,
    the longest path."""
    sheet = score_sheet(sheet)
    by_color = {p.color: p for p in sheet.players}
    lines = [VARIANTS[sheet.variant].title + (f", {when}" if when else "")]
    for p in ranking(sheet, tab):
        lines.append(f"{p.place}. {p.name}: {p.total}" + (" (wins)" if p.color in sheet.winners else ""))
    if decided_text(sheet.decided_by):
        lines.append(decided_text(sheet.decided_by))
    holders = [by_color[c] for c in by_color if by_color[c].longest_path_bonus]
    for h in holders:
        lines.append(f"Longest path: {tab.display_name(h.color)}, {h.longest_path} trains "
                     f"({DASH.join(h.longest_path_cities)})")
    return "\n".join(lines) + "\n"


DECIDED = {
    "points": "",
    "completed tickets": "Tied on points; most completed tickets decides.",
    "longest path card": "Tied on points and tickets; the Longest Path card decides.",
    "shared": "Still tied after every tie-break (points, tickets, Longest Path): the win is shared.",
}


def decided_text(decided_by: str) -> str:
    """The score sheet's `decided_by` as a sentence for people."""
    return DECIDED.get(decided_by, decided_by)


def export_json(game: Game) -> str:
    """The game file, exactly as `ttr tally` reads it."""
    return json.dumps(game.to_dict(), ensure_ascii=False, indent=1) + "\n"


def restore(data: bytes, source: str = "game file") -> TableState:
    """A saved game file back into page state. Raises TtrError (one line) for a bad file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise TtrError(f"{source}: not a text file (expected UTF-8 JSON)") from None
    game = parse_game(parse_json(text, source))
    by_pair = {t.cities: ticket_key(t) for t in deck(game.variant)}
    return TableState(
        variant=game.variant, ticket_values=game.ticket_values,
        players=sort_players(p.color for p in game.players),
        owners={**{t.id: None for t in load_board().tracks},
                **{tid: p.color for p in game.players for tid in p.track_ids}},
        tickets={p.color: [by_pair[frozenset(t)] for t in p.tickets] for p in game.players},
        score_track={p.color: p.score_track for p in game.players},
        names={p.color: p.name for p in game.players if p.name})
