"""The misreads of an `eval_real.py` run by kind: printed colour, true owner -> owner read.

    python3 ../shared/eval/eval_real.py SET --cmd "ttr detect --json" --report REPORT.json
    python3 benchmarks/misreads.py REPORT.json [--top 10]

Each wrong track (a double printed alike compared as a pair, as `eval_real.py` does) counts once
per owner read wrong, e.g. "red print: empty -> red" (red print read as red cars) or "gray print:
blue -> green". Photos the command could not read are counted apart, not as misreads.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import Counter

# eval_real.py's line per wrong track: "<a>-<b> <colour>: truth [owners] read [owners]"
WRONG = re.compile(r"^.* (?P<colour>\w+): truth (?P<truth>\[.*\]) read (?P<read>.*)$")


def kinds(wrong: str) -> list[str]:
    """The misreads of one of `eval_real.py`'s wrong-track lines."""
    m = WRONG.match(wrong)
    if m is None:
        raise ValueError(f"not an eval_real.py wrong-track line: {wrong!r}")
    truth = list(ast.literal_eval(m["truth"]))
    read = ast.literal_eval(m["read"]) if m["read"].startswith("[") else []
    for o in list(truth):  # owners read right in a pair are no misread
        if o in read:
            truth.remove(o)
            read.remove(o)
    read += ["missing"] * (len(truth) - len(read))
    pairs = zip(sorted(truth, key=str), sorted(read, key=str))
    return [f"{m['colour']} print: {t or 'empty'} -> {r or 'empty'}" for t, r in pairs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args(argv)
    rows = json.load(open(a.report, encoding="utf-8"))["rows"]
    count = Counter(k for row in rows for w in row.get("wrong", []) if "error" not in row for k in kinds(w))
    unread = sum("error" in row for row in rows)
    for kind, n in count.most_common(a.top):
        print(f"{n:4d}  {kind}")
    print(f"MISREADS total={sum(count.values())} kinds={len(count)} photos_not_read={unread}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
