"""`ttr`: the command line. Each subcommand is a module of `app/commands`.

A subcommand module exposes `add_arguments(parser)` and `run(args) -> int`. Only the module of the
command being run is imported (by name, below), so `ttr --help` and `ttr tally` start fast, without
OpenCV, onnxruntime or Streamlit.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from scoring.errors import TtrError

# name -> (module, one-line help), in two groups `ttr --help` shows apart, each in its order.
AT_THE_TABLE: dict[str, tuple[str, str]] = {
    "app": ("app.commands.app", "serve the page to the phones at the table (a QR code to scan)"),
    "score": ("app.commands.score", "read a photo, then tally it with a game file"),
    "tally": ("app.commands.tally", "score a game file (claimed routes, tickets) exactly"),
    "history": ("app.history", "list the games the app kept (or delete one)"),
    "detect": ("app.commands.detect", "read which player owns each track in board photos"),
    "calibrate": ("app.commands.calibrate", "adapt the reader to your own empty board"),
}
FOR_DEVELOPERS: dict[str, tuple[str, str]] = {
    "render": ("app.commands.render", "render synthetic end-of-game photos with exact truth"),
    "template": ("app.commands.template", "measure or check the board template"),
    "train": ("app.commands.train", "train the space classifier and export it to ONNX"),
}
SUBCOMMANDS = AT_THE_TABLE | FOR_DEVELOPERS


def _command_list() -> str:
    """The commands as `ttr --help` lists them: players' commands first, developers' tools apart."""
    width = max(map(len, SUBCOMMANDS)) + 2
    return "\n\n".join(f"{title}:\n" + "\n".join(f"  {name:<{width}}{text}" for name, (_, text) in group.items())
                       for title, group in (("at the table", AT_THE_TABLE), ("for developers", FOR_DEVELOPERS)))


class _Parser(argparse.ArgumentParser):
    """argparse with its errors as one line (`ttr: error: --size: ...`), exit status 2."""

    def error(self, message: str):
        self.exit(2, f"ttr: error: {message.removeprefix('argument ')} (see `{self.prog} --help`)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The `ttr` parser; only `command`'s module is imported (so `ttr tally` never loads OpenCV)."""
    parser = _Parser(
        prog="ttr", usage="%(prog)s [-h] COMMAND ...", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Ticket to Ride (USA) board reader and exact scorer.\n\n" + _command_list(),
        epilog="`ttr COMMAND --help` tells more about each.",
    )
    # (the commands are listed in the description, in their groups; argparse's own list is one)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help=argparse.SUPPRESS)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, prog=f"ttr {name}", description=help_text)
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The subcommand named in argv: its first word that is not an option."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_in(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return int(args._module.run(args) or 0)
    except TtrError as e:
        for line in str(e).splitlines() or [""]:  # a game file's problems: one line each
            print(f"ttr: error: {line}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("ttr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as e:  # a file a subcommand could not read or write: one line, never a traceback
        where = f"{e.filename}: " if e.filename else ""
        print(f"ttr: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
