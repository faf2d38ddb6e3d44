"""Games kept on this computer: the page saves the game it shows as it changes, and lists them.

One SQLite file (the standard library's sqlite3), by default `history.sqlite` in the user's data
folder (`$XDG_DATA_HOME/ttr` or `~/.local/share/ttr` on Linux, `~/Library/Application Support/ttr`
on macOS, `%APPDATA%\\ttr` on Windows); `TTR_HISTORY_DB` or `ttr history --db` names another.

Why a file on the server, keyed by an id in the page's address (`?game=…`): a Streamlit session
lives only as long as the browser's connection, so a reload, a phone locking or a browser restart
starts a new one. The game is written here on every change (one row; the flattened photo only when
it changes), and the page reopens the row its address names, or, opened without one, the game
changed last. The ttr server runs on the players' own computer, so "this device" is that computer
and every browser that opens it; each game has its own id, and "New game" starts another.

A row holds the page's state (`app.state.TableState` and `PhotoCheck` as JSON), and, once the
game is scored, its summary (variant, players, totals, winners) for the list. The photos of the
game's board are kept beside it, each file as it was sent, in the order they were added (a photo
added after a reload is read together with them). The names last given to each train colour are
kept too, and a new game starts with them.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from scoring.errors import TtrError
from scoring.score import ScoreSheet

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
  id TEXT PRIMARY KEY,
  created REAL NOT NULL,
  updated REAL NOT NULL,
  state TEXT NOT NULL,          -- the page's state, JSON
  photo BLOB,                   -- the flattened board, JPEG (NULL without a photo)
  summary TEXT                  -- JSON: variant, players [{color, name, total}], winners; NULL until scored
);
CREATE INDEX IF NOT EXISTS games_updated ON games(updated);
CREATE TABLE IF NOT EXISTS photos (  -- the photos of a game's board, in the order they were added
  game TEXT NOT NULL,
  n INTEGER NOT NULL,
  name TEXT NOT NULL,           -- as the page names it (unique in its game)
  digest TEXT NOT NULL,         -- SHA-256 of the file: the same photo is not added twice
  data BLOB NOT NULL,           -- the file as sent, read again when a photo is added after a reload
  PRIMARY KEY (game, n)
);
CREATE TABLE IF NOT EXISTS names (  -- the name last given to each train colour, for the next game
  color TEXT PRIMARY KEY,
  name TEXT NOT NULL
);
"""


def data_dir() -> Path:
    """The user's data folder for ttr."""
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / "ttr"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "ttr"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "ttr"


def default_path() -> Path:
    return Path(os.environ.get("TTR_HISTORY_DB") or data_dir() / "history.sqlite")


def new_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class PlayerTotal:
    color: str
    name: str
    total: int


@dataclass(frozen=True)
class GameSummary:
    """What the list shows of a scored game."""

    variant: str
    players: tuple[PlayerTotal, ...]
    winners: tuple[str, ...]  # colours

    def to_json(self) -> dict:
        # (not asdict: the stored key order, and lists for the tuples)
        return {"variant": self.variant, "winners": list(self.winners), "players": [asdict(p) for p in self.players]}

    @classmethod
    def from_json(cls, d: dict) -> GameSummary:
        return cls(d["variant"], tuple(PlayerTotal(**p) for p in d["players"]), tuple(d["winners"]))

    @classmethod
    def of_sheet(cls, sheet: ScoreSheet, names: dict[str, str]) -> GameSummary:
        return cls(sheet.variant, tuple(PlayerTotal(p.color, (names.get(p.color) or "").strip(), p.total)
                                        for p in sheet.players), tuple(sheet.winners))

    def winner_text(self) -> str:
        by = {p.color: p for p in self.players}
        return " and ".join(by[c].name or c for c in self.winners if c in by)


@dataclass(frozen=True)
class SavedGame:
    id: str
    created: float  # seconds since the epoch
    updated: float
    state: dict
    summary: GameSummary | None
    photo: bytes | None = None

    def to_json(self) -> dict:
        """The `ttr history --json` entry."""
        out = {"id": self.id, "created": _iso(self.created), "updated": _iso(self.updated)}
        if self.summary:
            out |= self.summary.to_json()
        return out


@dataclass(frozen=True)
class KeptPhoto:
    """A photo of a game's board, as the page lists it (its file stays in the database)."""

    name: str
    digest: str  # `photo_digest` of its file


def photo_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


class History:
    """The games database. Each call opens its own connection (safe across Streamlit's threads)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else default_path()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=10)
        con.executescript(SCHEMA)
        return con

    def save(self, game_id: str, state: dict, summary: GameSummary | None = None,
             photo: bytes | None = None, keep_photo: bool = True) -> None:
        """Write a game's state (and summary); `photo` replaces the stored board image, or with
        None and `keep_photo` the stored one stays (None and not `keep_photo`: removed)."""
        now = time.time()
        with self._connect() as con:
            con.execute("INSERT INTO games(id, created, updated, state) VALUES (?, ?, ?, '{}') "
                        "ON CONFLICT(id) DO NOTHING", (game_id, now, now))
            con.execute("UPDATE games SET updated = ?, state = ?, summary = ? WHERE id = ?",
                        (now, json.dumps(state, ensure_ascii=False),
                         json.dumps(summary.to_json()) if summary else None, game_id))
            if photo is not None or not keep_photo:
                con.execute("UPDATE games SET photo = ? WHERE id = ?", (photo, game_id))
        con.close()

    def load(self, game_id: str) -> SavedGame | None:
        with self._connect() as con:
            row = con.execute("SELECT id, created, updated, state, summary, photo FROM games WHERE id = ?",
                              (game_id,)).fetchone()
        con.close()
        return _saved(row) if row else None

    def latest(self) -> str | None:
        """The id of the game changed last."""
        with self._connect() as con:
            row = con.execute("SELECT id FROM games ORDER BY updated DESC LIMIT 1").fetchone()
        con.close()
        return row[0] if row else None

    def games(self, scored_only: bool = True) -> list[SavedGame]:
        """Games, the one changed last first (without their photos)."""
        where = "WHERE summary IS NOT NULL" if scored_only else ""
        with self._connect() as con:
            rows = con.execute(f"SELECT id, created, updated, state, summary, NULL FROM games {where} "
                               "ORDER BY updated DESC").fetchall()
        con.close()
        return [_saved(r) for r in rows]

    def remember_names(self, names: dict[str, str]) -> None:
        """Keep the names given to the train colours (blank ones leave the last name there)."""
        given = [(c, n.strip()) for c, n in names.items() if (n or "").strip()]
        if not given:
            return
        with self._connect() as con:
            con.executemany("INSERT INTO names(color, name) VALUES (?, ?) "
                            "ON CONFLICT(color) DO UPDATE SET name = excluded.name", given)
        con.close()

    def names(self) -> dict[str, str]:
        """The name last given to each train colour, for a new game."""
        with self._connect() as con:
            rows = con.execute("SELECT color, name FROM names").fetchall()
        con.close()
        return dict(rows)

    def set_photos(self, game_id: str, photos: list[tuple[str, bytes]]) -> None:
        """The game's photos become `photos` ((name, file) in order; none: the game has no photo)."""
        with self._connect() as con:
            con.execute("DELETE FROM photos WHERE game = ?", (game_id,))
            con.executemany("INSERT INTO photos(game, n, name, digest, data) VALUES (?, ?, ?, ?, ?)",
                            [(game_id, n, name, photo_digest(data), data) for n, (name, data) in enumerate(photos)])
        con.close()

    def add_photo(self, game_id: str, name: str, data: bytes) -> None:
        """Another photo of the game's board, after those it has."""
        with self._connect() as con:
            con.execute("INSERT INTO photos(game, n, name, digest, data) VALUES "
                        "(?, (SELECT COALESCE(MAX(n) + 1, 0) FROM photos WHERE game = ?), ?, ?, ?)",
                        (game_id, game_id, name, photo_digest(data), data))
        con.close()

    def photos(self, game_id: str) -> list[KeptPhoto]:
        """The game's photos, in the order they were added (without their files)."""
        with self._connect() as con:
            rows = con.execute("SELECT name, digest FROM photos WHERE game = ? ORDER BY n", (game_id,)).fetchall()
        con.close()
        return [KeptPhoto(*r) for r in rows]

    def photo_files(self, game_id: str) -> dict[str, bytes]:
        """Each photo's file, by name."""
        with self._connect() as con:
            rows = con.execute("SELECT name, data FROM photos WHERE game = ?", (game_id,)).fetchall()
        con.close()
        return dict(rows)

    def delete(self, game_id: str) -> bool:
        with self._connect() as con:
            n = con.execute("DELETE FROM games WHERE id = ?", (game_id,)).rowcount
            con.execute("DELETE FROM photos WHERE game = ?", (game_id,))
        con.close()
        return bool(n)


def _saved(row) -> SavedGame:
    gid, created, updated, state, summary, photo = row
    return SavedGame(gid, created, updated, json.loads(state),
                     GameSummary.from_json(json.loads(summary)) if summary else None, photo)


# ---------------------------------------------------------------------------------------------
# `ttr history [--json] [--db FILE]`

def add_arguments(parser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per game per line")
    parser.add_argument("--db", metavar="FILE", help=f"the games database (default {default_path()})")
    parser.add_argument("--delete", metavar="ID", help="delete one game")


def run(args) -> int:
    hist = History(args.db)
    if args.db and not hist.path.exists():
        raise TtrError(f"{hist.path}: no such file")
    try:
        if args.delete:
            if not hist.delete(args.delete):
                raise TtrError(f"no game {args.delete!r} in {hist.path}")
            print(f"deleted game {args.delete}")
            return 0
        games = hist.games()
    except sqlite3.DatabaseError as e:
        raise TtrError(f"{hist.path}: not a ttr games database ({e})") from None
    if args.json:
        for g in games:
            print(json.dumps(g.to_json(), ensure_ascii=False))
        return 0
    if not games:
        print(f"no games yet in {hist.path}")
        return 0
    for g in games:
        s = g.summary
        totals = ", ".join(f"{p.name or p.color} {p.total}" for p in sorted(s.players, key=lambda p: -p.total))
        print(f"{_iso(g.updated).replace('T', ' ')[:16]}  {s.variant:<10}  {totals}  "
              f"winner: {s.winner_text()}  [{g.id}]")
    return 0
