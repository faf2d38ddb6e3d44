"""Placeholder: replaced by the module's owner (keeps `ttr --help` importable meanwhile)."""
from scoring.errors import TtrError


def add_arguments(parser):
    parser.add_argument("rest", nargs="*")


def run(args):
    raise TtrError("this command is not built yet")
