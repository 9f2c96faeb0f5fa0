// SPDX-License-Identifier: GPL-2.0 OR MIT
// rtgauge's flight recorder: BPF programs on the scheduler and interrupt tracepoints keep, per
// CPU, a ring of the last events in a map. Nothing leaves the kernel until user space reads a
// window after a late sample. Compiled by build.rs with clang -target bpfel -g -O2.
//
// CO-RE without a generated vmlinux.h: the few kernel structures read here are declared with
// only the fields used and `preserve_access_index`, so the loader moves each field to its offset
// in the running kernel's BTF.

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name

// The helpers used, by their numbers in the kernel's BPF helper list (stable ABI).
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u32 (*bpf_get_smp_processor_id)(void) = (void *)8;
static long (*bpf_probe_read_kernel_str)(void *dst, __u32 size, const void *src) = (void *)115;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;
static void *(*bpf_ringbuf_reserve)(void *ringbuf, __u64 size, __u64 flags) = (void *)131;
static void (*bpf_ringbuf_submit)(void *data, __u64 flags) = (void *)132;
static struct task_struct *(*bpf_get_current_task_btf)(void) = (void *)158;

struct thread_info {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info;
	int pid;
	int prio;
	char comm[16];
} __attribute__((preserve_access_index));

// Kernels before 5.16 (and architectures without THREAD_INFO_IN_TASK) keep the CPU in
// task_struct itself; the loader keeps whichever branch the running kernel has.
struct task_struct___cpu_in_task {
	unsigned int cpu;
} __attribute__((preserve_access_index));

#define BPF_FIELD_EXISTS 2

static __attribute__((always_inline)) __u32 task_cpu(struct task_struct *p)
{
	struct task_struct___cpu_in_task *old = (void *)p;
	if (__builtin_preserve_field_info(old->cpu, BPF_FIELD_EXISTS))
		return old->cpu;
	return p->thread_info.cpu;
}

struct irqaction {
	const char *name;
} __attribute__((preserve_access_index));

// Must match src/ring.rs.
#define RING_LEN 512
#define KIND_SWITCH 1
#define KIND_WAKEUP 2
#define KIND_IRQ_ENTRY 3
#define KIND_IRQ_EXIT 4
#define KIND_VECTOR_ENTRY 5 // arg: VEC_*
#define KIND_VECTOR_EXIT 6
#define KIND_HRTIMER_ENTRY 7 // b_comm: the callback's address (u64)
// 8 was the hrtimer callback's end: left unused so an old record never reads as a new kind.
#define KIND_SOFTIRQ_ENTRY 9 // arg: the softirq's vector number (TIMER, NET_RX, RCU, ...)
#define KIND_SOFTIRQ_EXIT 10 // arg: the same
#define KIND_WORK_START 11 // b_comm: the work function's address (u64)
#define KIND_WORK_END 12
#define KIND_NMI 13 // b_comm: the handler's address (u64), then its duration in ns (s64)
#define VEC_LOCAL_TIMER 0
#define VEC_RESCHEDULE 1
#define VEC_CALL_FUNCTION 2
#define VEC_CALL_FUNCTION_SINGLE 3
#define VEC_IRQ_WORK 4
#define VEC_X86_PLATFORM_IPI 5
#define VEC_THERMAL_APIC 6
#define VEC_THRESHOLD_APIC 7
#define VEC_DEFERRED_ERROR_APIC 8
#define VEC_ERROR_APIC 9
#define VEC_SPURIOUS_APIC 10
#define FLAG_PREEMPTED 0x100 // switch: prev was preempted (tracefs prints its state "R+")

struct rec {
	__u64 ts;       // bpf_ktime_get_ns: CLOCK_MONOTONIC
	__u32 kind;     // KIND_* in the low byte, FLAG_* above
	__u32 arg;      // switch: prev_state; wakeup: target CPU; irq: number; softirq: vector
	__u32 a_pid;    // switch: prev; wakeup: the woken task; irq: the interrupted task
	__s32 a_prio;
	__u32 b_pid;    // switch: next; wakeup: the waker (current); irq exit: return value
	__s32 b_prio;
	char a_comm[16]; // empty for the idle task (pid 0): user space names it swapper/N
	char b_comm[16]; // irq entry: the handler's name
};

struct ring {
	__u64 head;     // records written so far; the next goes to recs[head % RING_LEN]
	struct rec recs[RING_LEN];
};

// One ring per CPU, indexed by CPU number; user space sets max_entries to the possible CPUs.
struct {
	__uint(type, 2); // BPF_MAP_TYPE_ARRAY
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ring);
} rings SEC(".maps");

// The measured thread of each CPU and its next programmed wake-up, written by user space
// through a shared mapping (BPF_F_MMAPABLE): one store per period, no system call. Must match
// src/watch.rs.
struct watch {
	__u64 programmed; // CLOCK_MONOTONIC ns of the wake-up asked for; 0: none
	__u64 threshold;  // ns late that makes a spike
	__u32 tid;        // the measured thread; 0: no watch
	__u32 late;       // set when it was switched in late; the window is sent at its switch out
	__u64 woke;       // when it was switched in late
	__u64 late_programmed; // the wake-up it was late for (programmed moves on before the send)
};

struct {
	__uint(type, 2); // BPF_MAP_TYPE_ARRAY
	__uint(max_entries, 1);
	__uint(map_flags, 1024); // BPF_F_MMAPABLE
	__type(key, __u32);
	__type(value, struct watch);
} watches SEC(".maps");

// A late wake-up's window: the CPU's whole ring as it was when the thread went to sleep again.
struct spike {
	__u32 cpu;
	__u32 tid;
	__u64 programmed;
	__u64 woke;
	struct ring ring;
};

struct {
	__uint(type, 27); // BPF_MAP_TYPE_RINGBUF
	__uint(max_entries, 512 * 1024);
} spikes SEC(".maps");

// Which CPUs record (bit N for CPU N, up to 256 CPUs); set by user space before loading.
volatile const __u64 cpu_mask[4] = {0, 0, 0, 0};

static __attribute__((always_inline)) int recorded(__u32 cpu)
{
	return cpu < 256 && (cpu_mask[cpu / 64] & (1ULL << (cpu % 64)));
}

// The next record of `cpu`'s ring, stamped; the caller checked `recorded(cpu)` first.
static __attribute__((always_inline)) struct rec *next_rec_in(__u32 cpu, struct ring **out)
{
	struct ring *ring = bpf_map_lookup_elem(&rings, &cpu);
	if (!ring)
		return 0;
	*out = ring;
	__u64 head = ring->head;
	ring->head = head + 1;
	struct rec *r = &ring->recs[head & (RING_LEN - 1)];
	r->ts = bpf_ktime_get_ns();
	return r;
}

// A task's name, except the idle task's (pid 0, "swapper/N"): user space names it from the
// CPU, so the wake-up path out of idle reads no name at all.
static __attribute__((always_inline)) void copy_comm(char *dst, __u32 pid, const char *comm)
{
	if (pid)
		__builtin_memcpy(dst, comm, 16);
	else
		dst[0] = 0;
}

// After a switch was recorded: the watched thread switched in late is marked; when it leaves
// the CPU again (it has read its clock and recorded its sample by then, so the copy does not
// delay it), the ring goes to user space.
static __attribute__((always_inline)) void check_watch(__u32 cpu, struct ring *ring, __u64 now,
						       __u32 prev_pid, __u32 next_pid)
{
	struct watch *w = bpf_map_lookup_elem(&watches, &cpu);
	if (!w || !w->tid)
		return;
	if (next_pid == w->tid) {
		__u64 programmed = w->programmed;
		if (programmed && now > programmed + w->threshold) {
			w->late = 1;
			w->woke = now;
			w->late_programmed = programmed;
		}
	} else if (prev_pid == w->tid && w->late) {
		w->late = 0;
		struct spike *s = bpf_ringbuf_reserve(&spikes, sizeof(struct spike), 0);
		if (!s)
			return;
		s->cpu = cpu;
		s->tid = w->tid;
		s->programmed = w->late_programmed;
		s->woke = w->woke;
		bpf_probe_read_kernel(&s->ring, sizeof(struct ring), ring);
		bpf_ringbuf_submit(s, 0);
	}
}

SEC("tp_btf/sched_switch")
int on_switch(__u64 *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!recorded(cpu))
		return 0;
	struct task_struct *prev = (void *)ctx[1];
	struct task_struct *next = (void *)ctx[2];
	struct ring *ring;
	struct rec *r = next_rec_in(cpu, &ring);
	if (!r)
		return 0;
	r->kind = KIND_SWITCH | (ctx[0] & 1 ? FLAG_PREEMPTED : 0);
	r->arg = (__u32)ctx[3];
	r->a_pid = prev->pid;
	r->a_prio = prev->prio;
	r->b_pid = next->pid;
	r->b_prio = next->prio;
	copy_comm(r->a_comm, r->a_pid, prev->comm);
	copy_comm(r->b_comm, r->b_pid, next->comm);
	check_watch(cpu, ring, r->ts, r->a_pid, r->b_pid);
	return 0;
}

// An event recorded on this CPU by the task on it (the waker; in interrupt context the
// interrupted task): its pid and, unless it is the idle task, its name, read from the task
// itself (no helper call). The other fields are the caller's.
static __attribute__((always_inline)) struct rec *current_rec(__u32 kind, __u32 arg)
{
	__u32 cpu = bpf_get_smp_processor_id();
	if (!recorded(cpu))
		return 0;
	struct ring *ring;
	struct rec *r = next_rec_in(cpu, &ring);
	if (!r)
		return 0;
	struct task_struct *current = bpf_get_current_task_btf();
	r->kind = kind;
	r->arg = arg;
	r->a_pid = current->pid;
	r->a_prio = 0;
	r->b_pid = 0;
	r->b_prio = 0;
	copy_comm(r->a_comm, r->a_pid, current->comm);
	return r;
}

SEC("tp_btf/sched_wakeup")
int on_wakeup(__u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	struct rec *r = current_rec(KIND_WAKEUP, 0);
	if (!r)
		return 0;
	// The waker (current) goes to b_*, the woken task to a_*.
	r->arg = task_cpu(p);
	r->b_pid = r->a_pid;
	__builtin_memcpy(r->b_comm, r->a_comm, 16);
	r->a_pid = p->pid;
	r->a_prio = p->prio;
	__builtin_memcpy(r->a_comm, p->comm, 16);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int on_irq_entry(__u64 *ctx)
{
	struct irqaction *action = (void *)ctx[1];
	struct rec *r = current_rec(KIND_IRQ_ENTRY, (__u32)ctx[0]);
	if (r)
		bpf_probe_read_kernel_str(r->b_comm, 16, action->name);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int on_irq_exit(__u64 *ctx)
{
	struct rec *r = current_rec(KIND_IRQ_EXIT, (__u32)ctx[0]);
	if (!r)
		return 0;
	r->b_pid = (__u32)ctx[2];
	r->b_comm[0] = 0;
	return 0;
}

// x86's interrupt vectors (irq_vectors); absent elsewhere, where user space skips them.
#define VECTOR(name, id)                                                  \
	SEC("tp_btf/" #name "_entry")                                     \
	int on_##name##_entry(__u64 *ctx)                                 \
	{                                                                 \
		struct rec *r = current_rec(KIND_VECTOR_ENTRY, id);       \
		if (r)                                                    \
			r->b_comm[0] = 0;                                 \
		return 0;                                                 \
	}                                                                 \
	SEC("tp_btf/" #name "_exit")                                      \
	int on_##name##_exit(__u64 *ctx)                                  \
	{                                                                 \
		struct rec *r = current_rec(KIND_VECTOR_EXIT, id);        \
		if (r)                                                    \
			r->b_comm[0] = 0;                                 \
		return 0;                                                 \
	}

VECTOR(local_timer, VEC_LOCAL_TIMER)
VECTOR(reschedule, VEC_RESCHEDULE)
VECTOR(call_function, VEC_CALL_FUNCTION)
VECTOR(call_function_single, VEC_CALL_FUNCTION_SINGLE)
// The rarer ones: nothing runs unless the vector fires; a kernel without one skips it.
VECTOR(irq_work, VEC_IRQ_WORK)
VECTOR(x86_platform_ipi, VEC_X86_PLATFORM_IPI)
VECTOR(thermal_apic, VEC_THERMAL_APIC)
VECTOR(threshold_apic, VEC_THRESHOLD_APIC)
VECTOR(deferred_error_apic, VEC_DEFERRED_ERROR_APIC)
VECTOR(error_apic, VEC_ERROR_APIC)
VECTOR(spurious_apic, VEC_SPURIOUS_APIC)

struct hrtimer {
	void *function;
} __attribute__((preserve_access_index));

// No program on hrtimer_expire_exit: the callback runs inside the timer interrupt's handler
// (the vector or IRQ whose exit closes it), and attribution gives its time to that handler.
// The expiry's own clock reading (the tracepoint's `now`, behind a pointer: a
// bpf_probe_read_kernel, about 100 ns here) is not kept: the record's nanosecond timestamp is
// the time of the callback's start, which attribution uses for the timer interrupt.
SEC("tp_btf/hrtimer_expire_entry")
int on_hrtimer_entry(__u64 *ctx)
{
	struct hrtimer *timer = (void *)ctx[0];
	struct rec *r = current_rec(KIND_HRTIMER_ENTRY, 0);
	if (!r)
		return 0;
	__u64 function = (__u64)timer->function;
	__builtin_memcpy(&r->b_comm[0], &function, 8);
	__builtin_memset(&r->b_comm[8], 0, 8);
	return 0;
}

// Softirqs and work items run with interrupts enabled, so an interrupt's program can run in
// the middle of these programs, and an NMI's program in the middle of any program here. A
// record's slot is taken by a plain read and write of the ring's head (next_rec_in), not an
// atomic one, so the programs on a periodic wake-up's path stay as cheap as they are: when
// the interruption falls between that read and that write (two instructions), the
// interrupting program's record is overwritten by the interrupted one, whose bytes past a
// name's NUL may be the lost record's. One record lost, none invented, and user space
// reads every field as untrusted (unknown kinds are skipped, names end at NUL or 16 bytes,
// numbers index nothing unchecked). An interruption after the head was moved takes the
// next slot: the interrupted record may then be stamped after the interrupting one, so user
// space orders a window by time (events.rs). Nothing here waits, locks or allocates, so the
// NMI program cannot deadlock with the program it interrupted.

// softirq_entry/softirq_exit(unsigned int vec_nr) (include/trace/events/irq.h).
SEC("tp_btf/softirq_entry")
int on_softirq_entry(__u64 *ctx)
{
	struct rec *r = current_rec(KIND_SOFTIRQ_ENTRY, (__u32)ctx[0]);
	if (r)
		r->b_comm[0] = 0;
	return 0;
}

SEC("tp_btf/softirq_exit")
int on_softirq_exit(__u64 *ctx)
{
	struct rec *r = current_rec(KIND_SOFTIRQ_EXIT, (__u32)ctx[0]);
	if (r)
		r->b_comm[0] = 0;
	return 0;
}

struct work_struct {
	void *func;
} __attribute__((preserve_access_index));

// workqueue_execute_start(struct work_struct *work) (include/trace/events/workqueue.h): the
// function is read from the work item, as the tracepoint itself does.
SEC("tp_btf/workqueue_execute_start")
int on_work_start(__u64 *ctx)
{
	struct work_struct *work = (void *)ctx[0];
	struct rec *r = current_rec(KIND_WORK_START, 0);
	if (!r)
		return 0;
	__u64 function = (__u64)work->func;
	__builtin_memcpy(&r->b_comm[0], &function, 8);
	__builtin_memset(&r->b_comm[8], 0, 8);
	return 0;
}

// workqueue_execute_end(work, function) since 5.3, (work) before: only the kind is kept, the
// kworker's pid says whose work item ended.
SEC("tp_btf/workqueue_execute_end")
int on_work_end(__u64 *ctx)
{
	struct rec *r = current_rec(KIND_WORK_END, 0);
	if (r)
		r->b_comm[0] = 0;
	return 0;
}

// nmi_handler(void *handler, s64 delta_ns, int handled) (include/trace/events/nmi.h, x86
// only): recorded after the handler ran for delta_ns. Runs in NMI context: see above.
SEC("tp_btf/nmi_handler")
int on_nmi(__u64 *ctx)
{
	struct rec *r = current_rec(KIND_NMI, 0);
	if (!r)
		return 0;
	__u64 handler = ctx[0];
	__u64 delta_ns = ctx[1];
	__builtin_memcpy(&r->b_comm[0], &handler, 8);
	__builtin_memcpy(&r->b_comm[8], &delta_ns, 8);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
