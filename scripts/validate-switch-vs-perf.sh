#!/usr/bin/env bash
# The switch probe's same-CPU pipe round trip beside `perf bench sched pipe`, at the same policy
# (SCHED_FIFO 95) and pinning (one CPU), in paired rounds: perf, then rtgauge, ROUNDS times.
# Short rounds on purpose: the machine's state (on a VM, the host) moves both tools by more
# than their difference within seconds, so each pair is measured within about a second; and
# perf's run stays far below the RT throttling budget (950 ms per second), which a long FIFO
# run of perf would hit and count in its total.
# Prints each pair, then the median of the per-pair ratios rtgauge / perf with a 95 % bootstrap
# interval. Needs root (SCHED_FIFO), perf (Debian: linux-perf) and python3.
# Usage: scripts/validate-switch-vs-perf.sh [RTGAUGE_BIN] [ROUNDS] [CPU]
set -euo pipefail
bin=${1:-target/release/rtgauge}
rounds=${2:-30}
cpu=${3:-$(($(nproc) - 1))}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for i in $(seq 1 "$rounds"); do
  perf_us=$(chrt -f 95 taskset -c "$cpu" perf bench sched pipe -T -l 15000 2>/dev/null |
    awk '/usecs\/op/ { print $1 }')
  "$bin" run switch --mode rt --cpus "$cpu" -d 300ms --warmup 50ms \
    --set switch.via=pipe --set switch.placement=same-cpu \
    --no-report -q --force -o "$work/switch.json" >/dev/null
  mv "$work/switch.json" "$work/round-$i.json"
  echo "$i $perf_us" >>"$work/pairs"
done
python3 -c '
import json, random, statistics, sys
ratios = []
print("round  perf us/op  rtgauge mean   median  ratio")
for line in open(f"{sys.argv[1]}/pairs"):
    i, perf_us = line.split()
    run = json.load(open(f"{sys.argv[1]}/round-{i}.json"))["runs"][0]
    rt = next(s for s in run["series"] if s["name"] == "pipe_round_trip")["stats"]
    mean, median = rt["mean_ns"] / 1e3, rt["median_ns"] / 1e3
    ratios.append(mean / float(perf_us))
    print(f"{i:>5} {float(perf_us):>10.3f} {mean:>12.3f} {median:>8.3f} {ratios[-1]:>6.3f}")
random.seed(1)
medians = sorted(statistics.median(random.choices(ratios, k=len(ratios))) for _ in range(4000))
print(f"rtgauge / perf, median of {len(ratios)} pairs: {statistics.median(ratios):.3f} "
      f"(95 % interval {medians[100]:.3f}-{medians[3899]:.3f}); rtgauge lower in "
      f"{sum(r < 1 for r in ratios)} of {len(ratios)}")
' "$work"
