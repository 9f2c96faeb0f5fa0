#!/usr/bin/env python3
"""The cost of one trace event on a hot path, split: a loop of getppid() system calls on CPU 1
(syscall-loop.c, SCHED_FIFO 90, 300 batches of 1,000) with the event raw_syscalls:sys_enter
not enabled, enabled in an instance whose recording is off (the tracepoint and the probe run,
the ring buffer refuses), filtered out in the kernel, or recorded with each trace clock,
buffer size and sub-buffer size. Interleaved rounds; one JSON line per run (ns per call at
the 10th, 25th and 50th percentile of the batches; events recorded).

    gcc -O2 -o syscall-loop scripts/trace-cost/syscall-loop.c
    sudo python3 scripts/trace-cost/syscall-events.py ROUNDS OUT.jsonl   (in the directory of syscall-loop)
"""
import os, re, subprocess, json, sys, time
T="/sys/kernel/tracing"
def w(p,v):
    with open(p,"w") as f: f.write(v)
V={
 "none":None,
 "armed-off":{"on":"0"},
 "cpu-masked":{"mask":"1"},
 "filter-rejects":{"filter":"id == 99999"},
 "mono":{},
 "local":{"clock":"local"},
 "boot":{"clock":"boot"},
 "x86-tsc":{"clock":"x86-tsc"},
 "counter":{"clock":"counter"},
 "global":{"clock":"global"},
 "mono_raw":{"clock":"mono_raw"},
 "mono-buf16":{"buf":16},
 "mono-buf1024":{"buf":1024},
 "mono-subbuf64":{"subbuf":64},
 "mono-filter-passes":{"filter":"id != 99999"},
}
rounds=int(sys.argv[1]); out=open(sys.argv[2],"a")
names=list(V)
for r in range(rounds):
    order=names[r%len(names):]+names[:r%len(names)]
    for n in order:
        v=V[n]; d=None
        if v is not None:
            d=f"{T}/instances/micro-{os.getpid()}"; os.mkdir(d)
            w(d+"/tracing_on","0"); w(d+"/trace_clock",v.get("clock","mono"))
            if "subbuf" in v: w(d+"/buffer_subbuf_size_kb",str(v["subbuf"]))
            w(d+"/buffer_size_kb",str(v.get("buf",128)))
            w(d+"/tracing_cpumask",v.get("mask","2"))
            if "filter" in v: w(d+"/events/raw_syscalls/sys_enter/filter",v["filter"])
            w(d+"/events/raw_syscalls/sys_enter/enable","1")
            w(d+"/tracing_on",v.get("on","1"))
        o=subprocess.run(["./syscall-loop","300","1000"],capture_output=True,text=True).stdout.split()
        ent=None
        if d:
            st=open(d+"/per_cpu/cpu1/stats").read()
            ent=st
            w(d+"/tracing_on","0"); w(d+"/events/raw_syscalls/sys_enter/enable","0"); os.rmdir(d)
        ev=None if ent is None else sum(int(x) for x in re.findall(r"^(?:entries|overrun): (\d+)",ent,re.M))
        rec={"round":r,"variant":n,"p10":float(o[0]),"p25":float(o[1]),"median":float(o[2]),"events":ev}
        out.write(json.dumps(rec)+"\n"); out.flush()
