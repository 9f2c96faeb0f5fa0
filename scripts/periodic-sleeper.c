// A SCHED_OTHER thread that wakes every 10 ms and does nothing else: what cyclictest's main
// thread does on the CPUs it may run on. Used by scripts/validate-minimum.sh to show that such
// a neighbour lowers the minimum wake-up latency of a measuring thread (docs/validation.md).
//   gcc -O2 -o /tmp/periodic-sleeper scripts/periodic-sleeper.c
#include <time.h>
int main(void) {
  const struct timespec ten_ms = {0, 10000000};
  for (;;) nanosleep(&ten_ms, 0);
}
