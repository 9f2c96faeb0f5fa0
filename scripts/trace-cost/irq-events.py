#!/usr/bin/env python3
"""The timer interrupt's own duration (local_timer_entry to _exit, x86-tsc clock, in an
instance recording only those two) while a second instance records, inside that interrupt,
hrtimer_expire_entry/exit, sched_waking and sched_wakeup: armed but not recording, or recording
with one clock or another. The difference against no second instance, divided by the 4 events,
is what one event costs in the cold interrupt path.

    sudo python3 scripts/trace-cost/irq-events.py RTGAUGE ROUNDS   (writes irq2.jsonl here)

TSC_MHZ is this VM's (dmesg: "tsc: Detected 2596.134 MHz"); set it for another machine."""
import os, re, subprocess, sys, json, statistics as st
T = "/sys/kernel/tracing"; TSC_MHZ = 2596.134
RTG = sys.argv[1]; ROUNDS = int(sys.argv[2])
INNER = ["timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit", "sched/sched_waking", "sched/sched_wakeup"]
SETS = {"none": None, "armed-off": ("mono", "0"), "mono": ("mono", "1"), "x86-tsc": ("x86-tsc", "1"),
        "counter": ("counter", "1"), "local": ("local", "1")}
def w(p, v):
    with open(p, "w") as f: f.write(v)
def inst(name, clock, evs, on):
    d = f"{T}/instances/{name}-{os.getpid()}"; os.mkdir(d)
    w(d+"/tracing_on", "0"); w(d+"/trace_clock", clock); w(d+"/buffer_size_kb", "4096")
    w(d+"/tracing_cpumask", "2")
    for e in evs: w(f"{d}/events/{e}/enable", "1")
    w(d+"/tracing_on", on); return d
out = open("irq2.jsonl", "a")
for r in range(ROUNDS):
    names = list(SETS); names = names[r % len(names):] + names[:r % len(names)]
    for name in names:
        a = inst("irqa", "x86-tsc", ["irq_vectors/local_timer_entry", "irq_vectors/local_timer_exit"], "1")
        b = inst("irqb", SETS[name][0], INNER, SETS[name][1]) if SETS[name] else None
        p = subprocess.run([RTG, "run", "cyclic", "--cpus", "1", "--duration", "3s", "--mode", "rt", "-q",
                    "--no-report", "-o", f"/tmp/rtgauge-irq-cost-{os.getpid()}.json", "--force"], capture_output=True)
        w(a+"/tracing_on", "0")
        text = open(a+"/per_cpu/cpu1/trace").read()
        inner = None
        if b:
            w(b+"/tracing_on", "0")
            s = open(b+"/per_cpu/cpu1/stats").read()
            inner = sum(int(x) for x in re.findall(r"^(?:entries|overrun): (\d+)", s, re.M))
            os.rmdir(b)
        os.rmdir(a)
        if p.returncode != 0:
            print(name, "run failed", p.stderr[-200:], flush=True); continue
        durs = []; start = None
        for line in text.splitlines():
            m = re.search(r"\s(\d+):\s+(local_timer_\w+):", line)
            if not m: continue
            ts, ev = int(m.group(1)), m.group(2)
            if ev == "local_timer_entry": start = ts
            elif start is not None: durs.append(ts - start); start = None
        durs.sort()
        rec = {"round": r, "set": name, "irqs": len(durs), "inner_events": inner,
               "p25_us": durs[len(durs)//4] / TSC_MHZ, "median_us": durs[len(durs)//2] / TSC_MHZ}
        out.write(json.dumps(rec) + "\n"); out.flush(); print(rec, flush=True)
