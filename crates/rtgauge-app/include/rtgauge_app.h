/*
 * rtgauge_app.h: instrument an application's own code for rtgauge (C and C++).
 *
 * Link with librtgauge_app.a (plus -lpthread -ldl -lm) or librtgauge_app.so, built by
 * `cargo build -p rtgauge-app`. Documentation: docs/app-instrumentation.md.
 *
 *   rtg_point compute;
 *   if (rtg_register("servo.compute", RTG_INTERVAL, 0, &compute) != 0) {
 *       fprintf(stderr, "%s\n", rtg_error());
 *       return 1;
 *   }
 *   uint64_t t = rtg_begin(compute);
 *   ... work ...
 *   rtg_end(compute, t);
 *
 * Recording never blocks, allocates, locks or enters the kernel; a full ring drops the
 * record and counts it. Points are enabled by RTGAUGE_POINTS (e.g. "servo.*,-servo.debug");
 * a disabled point costs one branch.
 */
#ifndef RTGAUGE_APP_H
#define RTGAUGE_APP_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a point records. */
#define RTG_INTERVAL 1u /* begin/end: duration (and start latency when periodic) */
#define RTG_EVENT 2u    /* a value at a time (u64 or double) */
#define RTG_COUNTER 4u  /* increments: reported as a rate */
#define RTG_OBJECT 5u   /* a snapshot of up to 4 uint64_t */

/* A registered point: copy it freely (two words). `enabled` is 0 for a disabled point, else
 * the clock this process stamps records with: RTG_CLOCK_MONOTONIC, or RTG_CLOCK_COUNTER (the
 * CPU's counter, chosen where the kernel keeps CLOCK_MONOTONIC on it; rtgauge converts). */
typedef struct rtg_point {
    uint32_t id;
    uint32_t enabled;
} rtg_point;

#define RTG_CLOCK_MONOTONIC 1u
#define RTG_CLOCK_COUNTER 2u

/* Registers `name` (1-63 letters, digits, '_', '-', '.' between levels). period_ns > 0
 * declares an RTG_INTERVAL point periodic. Returns 0, or -1 with the reason in rtg_error().
 * Registering a name again returns the same point. */
int rtg_register(const char *name, uint32_t kind, uint64_t period_ns, rtg_point *out);
/* The calling thread's last error, one line. */
const char *rtg_error(void);
/* Claims the calling thread's ring now (optional; the first record does it otherwise). */
int rtg_thread_init(void);
/* Removes this process's shared-memory file; call before exiting. */
void rtg_shutdown(void);

/* Out-of-line recorders: call the inline functions below instead. */
void rtg_record_interval(rtg_point point, uint64_t begun, uint64_t deadline_ns);
void rtg_record_event_u64(rtg_point point, uint64_t value);
void rtg_record_event_f64(rtg_point point, double value);
void rtg_record_count(rtg_point point, uint64_t increment);
void rtg_record_object(rtg_point point, const uint64_t *values, uint32_t count);

/* CLOCK_MONOTONIC in ns: the clock of deadlines (and of the results). */
static inline uint64_t rtg_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A stamp of the point's record clock (the same read as the library's own). */
static inline uint64_t rtg_stamp(rtg_point point) {
#if defined(__x86_64__)
    if (point.enabled == RTG_CLOCK_COUNTER)
        return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    if (point.enabled == RTG_CLOCK_COUNTER) {
        uint64_t ticks;
        __asm__ volatile("mrs %0, cntvct_el0" : "=r"(ticks));
        return ticks;
    }
#endif
    return rtg_now();
}

/* Begins an interval: pass the result (a stamp, not necessarily ns) to rtg_end. 0 when the
 * point is disabled. */
static inline uint64_t rtg_begin(rtg_point point) {
    return point.enabled ? rtg_stamp(point) : 0;
}

static inline void rtg_end(rtg_point point, uint64_t begun) {
    if (point.enabled)
        rtg_record_interval(point, begun, 0);
}

/* Ends an interval that was meant to begin at deadline_ns (CLOCK_MONOTONIC, from rtg_now):
 * the collector reports how late it began. */
static inline void rtg_end_deadline(rtg_point point, uint64_t begun, uint64_t deadline_ns) {
    if (point.enabled)
        rtg_record_interval(point, begun, deadline_ns);
}

static inline void rtg_event_u64(rtg_point point, uint64_t value) {
    if (point.enabled)
        rtg_record_event_u64(point, value);
}

static inline void rtg_event_f64(rtg_point point, double value) {
    if (point.enabled)
        rtg_record_event_f64(point, value);
}

static inline void rtg_count(rtg_point point, uint64_t increment) {
    if (point.enabled)
        rtg_record_count(point, increment);
}

static inline void rtg_object(rtg_point point, const uint64_t *values, uint32_t count) {
    if (point.enabled)
        rtg_record_object(point, values, count);
}

#ifdef __cplusplus
}
#endif

#endif
