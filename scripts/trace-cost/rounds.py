#!/usr/bin/env python3
"""What `--trace` costs a periodic wake-up, and which of its settings the cost comes from
(docs/trace.md, "Where the cost goes").

    sudo python3 scripts/trace-cost/rounds.py RTGAUGE ROUNDS OUT.jsonl [VARIANT,...]

Interleaved rounds (the order rotates each round) of `rtgauge run cyclic --cpus 1 --duration 5s
--mode rt`: untraced (`off`), with `--trace` (`trace`), and untraced beside a tracefs instance
set up as rtgauge's session is (`inst`: mono clock, 128 KiB, overwrite, CPU 1 only, the same
events) or with one setting changed (the kernel's cost of recording is the same whoever owns
the instance). One JSON line per run: p25, median, p99, max of the wake-up latency, and the
events recorded on CPU 1 (entries + overrun). `analyse.py OUT.jsonl` makes the table."""
import json, os, subprocess, sys, time

RTG = sys.argv[1]
ROUNDS = int(sys.argv[2])
OUT = sys.argv[3]
ONLY = sys.argv[4].split(",") if len(sys.argv) > 4 else None
T = "/sys/kernel/tracing"
CPU = 1

EVENTS = {
    "sched": ["sched_switch", "sched_wakeup"],
    "irq": ["irq_handler_entry", "irq_handler_exit", "softirq_entry", "softirq_exit"],
    "irq_vectors": "*_entry|*_exit",
    "timer": ["hrtimer_expire_entry"],
    "workqueue": ["workqueue_execute_start", "workqueue_execute_end"],
    "nmi": ["nmi_handler"],
}


def w(path, value):
    with open(path, "w") as f:
        f.write(value)


def events_of(system):
    names = EVENTS[system]
    if isinstance(names, str):
        d = f"{T}/events/{system}"
        names = sorted(n for n in os.listdir(d) if n.endswith("_entry") or n.endswith("_exit"))
    return names


def setup(name, v):
    d = f"{T}/instances/{name}"
    os.mkdir(d)
    w(f"{d}/tracing_on", "0")
    w(f"{d}/trace_clock", v.get("clock", "mono"))
    if "subbuf" in v:
        w(f"{d}/buffer_subbuf_size_kb", str(v["subbuf"]))
    w(f"{d}/buffer_size_kb", str(v.get("buf", 128)))
    w(f"{d}/options/overwrite", "1")
    w(f"{d}/tracing_cpumask", v.get("mask", "%08x" % (1 << CPU)))
    w(f"{d}/options/pause-on-trace", "0")
    if "record-cmd" in v:
        w(f"{d}/options/record-cmd", v["record-cmd"])
    for system in EVENTS:
        if system in v.get("without", ()):
            continue
        for ev in events_of(system):
            if f"{system}:{ev}" in v.get("without_events", ()):
                continue
            w(f"{d}/events/{system}/{ev}/enable", "1")
    for ev, flt in v.get("filters", {}).items():
        w(f"{d}/events/{ev}/filter", flt)
    w(f"{d}/tracing_on", v.get("on", "1"))
    return d


def entries(d):
    s = open(f"{d}/per_cpu/cpu{CPU}/stats").read()
    f = dict(l.split(":", 1) for l in s.splitlines() if ":" in l)
    return int(f["entries"]) + int(f["overrun"])


VARIANTS = {
    "off": None,
    "trace": "--trace",
    "inst": {},
    "clock-local": {"clock": "local"},
    "clock-boot": {"clock": "boot"},
    "clock-x86tsc": {"clock": "x86-tsc"},
    "clock-counter": {"clock": "counter"},
    "clock-global": {"clock": "global"},
    "buf-1024": {"buf": 1024},
    "buf-16": {"buf": 16},
    "subbuf-64": {"subbuf": 64},
    "no-irq_vectors": {"without": ["irq_vectors"]},
    "no-workqueue": {"without": ["workqueue"]},
    "no-irq": {"without": ["irq"]},
    "no-hrtimer": {"without": ["timer"]},
    "no-wakeup": {"without_events": ["sched:sched_wakeup"]},
    "wakeup-filter": {"filters": {"sched/sched_wakeup": f"target_cpu == {CPU}"}},
    "armed-off": {"on": "0"},
}
names = ONLY or list(VARIANTS)

out = open(OUT, "a")
for r in range(ROUNDS):
    shift = r % len(names)
    order = names[shift:] + names[:shift]
    for name in order:
        v = VARIANTS[name]
        res = f"/tmp/rtgauge-trace-cost-{os.getpid()}.json"
        cmd = [RTG, "run", "cyclic", "--cpus", str(CPU), "--duration", "5s", "--mode", "rt",
               "-q", "-o", res, "--no-report", "--force"]
        d = None
        if isinstance(v, str):
            cmd.append(v)
        elif isinstance(v, dict):
            d = setup(f"tcost-{os.getpid()}", v)
        before = entries(d) if d else None
        started = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        ev = entries(d) - before if d else None
        if d:
            w(f"{d}/tracing_on", "0")
            os.rmdir(d)
        if p.returncode not in (0, 2):
            print(name, "failed", p.stderr[-500:], file=sys.stderr)
            time.sleep(5)
            continue
        doc = json.load(open(res)); os.unlink(res)
        s = doc["runs"][0]["series"][0]["stats"]
        rec = {"round": r, "variant": name, "t": started, "count": s["count"],
               "p25": s["p25_ns"], "median": s["median_ns"], "p99": s["percentiles"]["p99_ns"],
               "max": s["max_ns"], "events": ev, "load": os.getloadavg()[0]}
        out.write(json.dumps(rec) + "\n")
        out.flush()
        print(json.dumps(rec), flush=True)
