#!/usr/bin/env bash
# Cyclic latency under rtgauge's built-in cpu and messaging loads beside the same latency under
# stress-ng --cpu and hackbench (the loads users glue to cyclictest by hand), same duration,
# same intensity (2 workers / 2 groups on a 2-CPU machine), normal and rt mode.
# Usage: scripts/validate-loads.sh [RTGAUGE_BIN] [DURATION]
set -euo pipefail
bin=${1:-target/release/rtgauge}
dur=${2:-20s}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common=(run cyclic --mode normal,rt --period 1ms --duration "$dur" --warmup 1s -q --no-report)
"$bin" "${common[@]}" --load none,cpu:2,messaging:2 -o "$work/builtin.json" >/dev/null
"$bin" "${common[@]}" --load "exec:stress-ng --cpu 2 --timeout 0" -o "$work/stressng.json" >/dev/null
"$bin" "${common[@]}" --load "exec:hackbench -g 2 -l 100000000" -o "$work/hackbench.json" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print(f"{'load':<42} {'mode':<7} {'median_us':>9} {'p99_us':>9} {'max_us':>9} {'overruns':>8}  load rate")
for name in ["builtin", "stressng", "hackbench"]:
    r = json.load(open(f"{work}/{name}.json"))
    rates = {l["name"]: l for l in r["loads"]}
    for run in r["runs"]:
        lat = [s for s in run["series"] if s["name"] == "latency"]
        med = max(s["stats"]["median_ns"] for s in lat) / 1e3
        p99 = max(s["stats"]["percentiles"]["p99_ns"] or 0 for s in lat) / 1e3
        mx = max(s["stats"]["max_ns"] for s in lat) / 1e3
        ov = sum(s["counters"]["overruns"] for s in lat)
        l = rates.get(run["load"], {})
        ops = l.get("operations_per_second")
        rate = f"{ops:,.0f} {l.get('unit') or 'ops'}/s" if ops else (f"restarts {l.get('restarts', 0)}" if run["load"] != "none" else "")
        print(f"{run['load']:<42} {run['mode']:<7} {med:9.1f} {p99:9.1f} {mx:9.1f} {ov:8d}  {rate}")
PY
