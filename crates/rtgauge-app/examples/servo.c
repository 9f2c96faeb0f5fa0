/*
 * A servo loop at a fixed period, instrumented with rtgauge_app.h.
 *
 *   servo [--period-us P] [--busy-us B] [--cycles N]
 *
 * Every period it wakes at an absolute deadline, "reads" (records how late the cycle began
 * against the deadline), computes for B microseconds (busy, on the clock), and counts the
 * cycle. It runs N cycles (0: until SIGTERM or SIGINT). Build:
 *
 *   cargo build -p rtgauge-app
 *   gcc -O2 -I crates/rtgauge-app/include crates/rtgauge-app/examples/servo.c \
 *       target/debug/librtgauge_app.a -lpthread -ldl -lm -o servo
 *   rtgauge run app -- ./servo --busy-us 100
 */
#include "rtgauge_app.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static int parse(const char *flag, const char *value, unsigned long long *out) {
    char *end;
    errno = 0;
    *out = value ? strtoull(value, &end, 10) : 0;
    if (!value || errno || *end) {
        fprintf(stderr, "servo: %s needs a whole number\n", flag);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    unsigned long long period_us = 1000, busy_us = 100, cycles = 0;
    for (int i = 1; i < argc; i += 2) {
        unsigned long long *target = !strcmp(argv[i], "--period-us") ? &period_us
                                     : !strcmp(argv[i], "--busy-us")  ? &busy_us
                                     : !strcmp(argv[i], "--cycles")   ? &cycles
                                                                      : NULL;
        if (!target) {
            fprintf(stderr, "servo: unknown option %s; use --period-us, --busy-us, --cycles\n", argv[i]);
            return 1;
        }
        if (parse(argv[i], argv[i + 1], target) != 0)
            return 1;
    }
    const uint64_t period_ns = period_us * 1000, busy_ns = busy_us * 1000;

    rtg_point cycle, compute, count, error, state;
    if (rtg_register("servo.cycle", RTG_INTERVAL, period_ns, &cycle) != 0 ||
        rtg_register("servo.compute", RTG_INTERVAL, 0, &compute) != 0 ||
        rtg_register("servo.cycles", RTG_COUNTER, 0, &count) != 0 ||
        rtg_register("servo.error", RTG_EVENT, 0, &error) != 0 ||
        rtg_register("servo.state", RTG_OBJECT, 0, &state) != 0 ||
        rtg_thread_init() != 0) {
        fprintf(stderr, "servo: %s\n", rtg_error());
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    uint64_t next = rtg_now() + period_ns;
    for (unsigned long long n = 0; !stop && (cycles == 0 || n < cycles); n++) {
        struct timespec at = {.tv_sec = (time_t)(next / 1000000000u),
                             .tv_nsec = (long)(next % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR && !stop) {
        }
        uint64_t begun = rtg_begin(cycle);

        uint64_t t = rtg_begin(compute);
        uint64_t start = rtg_now();
        while (rtg_now() - start < busy_ns) {
        }
        rtg_end(compute, t);

        rtg_count(count, 1);
        rtg_event_u64(error, n % 7);
        uint64_t snapshot[2] = {n, busy_ns};
        rtg_object(state, snapshot, 2);
        rtg_end_deadline(cycle, begun, next);

        next += period_ns;
        uint64_t now = rtg_now();
        while (next <= now) /* overran: the next deadline still ahead */
            next += period_ns;
    }
    rtg_shutdown();
    return 0;
}
