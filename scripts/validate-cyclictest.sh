#!/usr/bin/env bash
# Side-by-side validation of rtgauge's cyclic probe against cyclictest (Debian rt-tests):
# same CPUs, priority and period (-d 0: cyclictest otherwise gives thread N a period of
# 1 ms + N x 500 us), run alternately ROUNDS times so machine noise hits both.
# Usage: scripts/validate-cyclictest.sh [RTGAUGE_BIN] [SECONDS] [ROUNDS]
# Needs root (both tools run SCHED_FIFO 95 with memory locked), cyclictest and python3.
set -euo pipefail
bin=${1:-target/release/rtgauge}
secs=${2:-20}
rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-6s %-10s %-4s %8s %8s %8s %8s\n' round tool cpu min_us median_us avg_us max_us
for round in $(seq 1 "$rounds"); do
  cyclictest -m -a 0-1 -t 2 -d 0 -p 95 -i 1000 -D "${secs}s" -q -h 20000 \
    --histfile="$work/ct.hist" --json="$work/ct.json" >/dev/null
  "$bin" run cyclic --cpus 0-1 --priority 95 --period 1ms --duration "${secs}s" \
    --warmup 1s -q -o "$work/rg.json" --no-report >/dev/null
  python3 - "$work" "$round" <<'PY'
import json, sys
work, rnd = sys.argv[1], sys.argv[2]
# cyclictest: 1 us histogram bins, one column per thread; median from the cumulative counts.
rows = [l.split() for l in open(f"{work}/ct.hist") if l.strip() and not l.startswith("#")]
ct = json.load(open(f"{work}/ct.json"))
for t in range(2):
    counts = [(int(r[0]), int(r[1 + t])) for r in rows]
    total = sum(c for _, c in counts); acc = 0; median = None
    for v, c in counts:
        acc += c
        if acc * 2 >= total:
            median = v; break
    th = ct["thread"][str(t)]
    print(f"{rnd:<6} {'cyclictest':<10} {t:<4} {th['min']:8.1f} {median:8.1f} {th['avg']:8.1f} {th['max']:8.1f}")
rg = json.load(open(f"{work}/rg.json"))
for s in rg["runs"][0]["series"]:
    if s["name"] != "latency": continue
    st = s["stats"]
    print(f"{rnd:<6} {'rtgauge':<10} {s['labels']['cpu']:<4} {st['min_ns']/1e3:8.1f} {st['median_ns']/1e3:8.1f} {st['mean_ns']/1e3:8.1f} {st['max_ns']/1e3:8.1f}")
PY
done
