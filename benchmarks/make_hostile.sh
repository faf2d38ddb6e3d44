#!/usr/bin/env bash
# The fixed hostile render set the board locator is measured on (issue 12): 100 photos of played
# boards on checked cloths, dark stone, red-brown wood, a table edge with a dark floor and chair
# beyond, and tiles; boxes, card fans, hands and cards over the board's edge. Sizes vary from
# 1008x756 to 12 MP. Photo i depends on (1212, i) alone, so the set is the same on every machine
# with the same OpenCV and NumPy. Each truth file's "background" names the table and the clutter.
#
#   benchmarks/make_hostile.sh [OUT]          (default /tmp/hostile; a few minutes on 2 cores)
#   python3 ../shared/eval/eval_real.py /tmp/hostile --cmd "ttr detect --json"
set -euo pipefail
out="${1:-/tmp/hostile}"
exec ttr render --out "$out" --count 100 --seed 1212 --backgrounds hostile
