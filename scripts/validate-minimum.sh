#!/usr/bin/env bash
# Where cyclictest's lower minima come from (docs/validation.md, "The minimum"): interleaved
# 6,000-cycle runs at 1 ms, FIFO 95, on CPU 1 of
#   the bare C loop, alone and with a 10 ms sleeper on CPU 1;
#   cyclictest, main thread free (its default) and pinned to CPU 0 (--mainaffinity=0);
#   rtgauge, alone and with the sleeper.
# Prints one line of minima (us) per round; cyclictest's are whole microseconds (truncated).
# Usage: scripts/validate-minimum.sh [RTGAUGE_BIN] [ROUNDS]    (root, gcc, cyclictest, python3)
set -euo pipefail
bin=${1:-target/release/rtgauge}
rounds=${2:-8}
here=$(dirname "$0")
work=$(mktemp -d)
sleeper_pid=
trap '[ -n "$sleeper_pid" ] && kill "$sleeper_pid" 2>/dev/null; rm -rf "$work"' EXIT
gcc -O2 -o "$work/minimal-cyclic" "$here/minimal-cyclic.c"
gcc -O2 -o "$work/sleeper" "$here/periodic-sleeper.c"

c_loop() { "$work/minimal-cyclic" 6000 | awk '{print $2}'; }
cyclictest_min() {
  cyclictest -m -a 1 -t 1 -p 95 -i 1000 -l 6000 -q "$@" | grep -o 'Min: *[0-9]*' | awk '{print $2}'
}
rtgauge_min() {
  "$bin" run cyclic --cpus 1 --priority 95 --period 1ms --loops 6000 --warmup 1s -q \
    --no-report -o "$work/rg.json" >/dev/null
  python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
s = next(x for x in d["runs"][0]["series"] if x["name"] == "latency")
print("%.1f" % (s["stats"]["min_ns"] / 1e3))' "$work/rg.json"
}
with_sleeper() {
  taskset -c 1 "$work/sleeper" & sleeper_pid=$!
  "$@"
  kill "$sleeper_pid"; wait "$sleeper_pid" 2>/dev/null || true; sleeper_pid=
}

echo "round | C loop | C loop + sleeper | cyclictest | cyclictest --mainaffinity=0 | rtgauge | rtgauge + sleeper"
for round in $(seq 1 "$rounds"); do
  a=$(c_loop)
  b=$(with_sleeper c_loop)
  c=$(cyclictest_min)
  d=$(cyclictest_min --mainaffinity=0)
  e=$(rtgauge_min)
  f=$(with_sleeper rtgauge_min)
  echo "$round | $a | $b | $c | $d | $e | $f"
done
