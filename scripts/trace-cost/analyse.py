#!/usr/bin/env python3
"""The table of docs/trace.md, "Where the cost goes", from rounds.py's output files: per variant,
the median over rounds of the shift against the untraced run of the same round.

    python3 scripts/trace-cost/analyse.py OUT.jsonl [MORE.jsonl ...]
"""
import json, sys, statistics as st
from collections import defaultdict

recs = []
for f in sys.argv[1:]:
    for l in open(f):
        recs.append(json.loads(l))
# rounds are (file, round)
rounds = defaultdict(dict)
for i, f in enumerate(sys.argv[1:]):
    for l in open(f):
        r = json.loads(l)
        rounds[(i, r["round"])][r["variant"]] = r
variants = []
for r in recs:
    if r["variant"] not in variants:
        variants.append(r["variant"])


def q(xs, p):
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


print("| variant | rounds | median of medians | p25 shift vs off: median (IQR of rounds) | median shift vs off: median (IQR) | median shift vs rtgauge's settings (inst): median (IQR) | rounds with median above off | p99 shift vs off: median | events per run (median) |")
print("|---|---|---|---|---|---|---|---|---|")
for v in variants:
    dp25, dmed, dinst, dp99, meds, evs = [], [], [], [], [], []
    above = 0
    for key, rr in rounds.items():
        if v not in rr or "off" not in rr:
            continue
        a, o = rr[v], rr["off"]
        dp25.append((a["p25"] - o["p25"]) / 1000)
        dmed.append((a["median"] - o["median"]) / 1000)
        dp99.append((a["p99"] - o["p99"]) / 1000)
        meds.append(a["median"] / 1000)
        above += a["median"] > o["median"]
        if "inst" in rr:
            dinst.append((a["median"] - rr["inst"]["median"]) / 1000)
        if a.get("events") is not None:
            evs.append(a["events"])
    if not dmed:
        continue
    fmt = lambda xs: f"{st.median(xs):+.1f} ({q(xs, .25):+.1f} to {q(xs, .75):+.1f})" if xs else ""
    print(f"| {v} | {len(dmed)} | {st.median(meds):.1f} µs | {fmt(dp25)} | {fmt(dmed)} | {fmt(dinst) if v not in ('off','inst') else ''} | {above} of {len(dmed)} | {st.median(dp99):+.1f} | {int(st.median(evs)) if evs else ''} |")
