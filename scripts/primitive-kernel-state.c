// Why per-call and batched times of pipe_write and mq_receive differ (docs/validation-primitive.md):
// the per-call measurement leaves the kernel object in a different state than a batch does.
// Each variant below is timed around the same system call; only what is in the pipe or queue
// beforehand changes.
//
//   gcc -O2 -o /tmp/primitive-kernel-state scripts/primitive-kernel-state.c -lrt
//   taskset -c 1 /tmp/primitive-kernel-state
//
// Prints the median of 20,000 samples per variant, in ns, clock read included (the "clock read
// pair" line is that cost). Not built by CI.
#define _GNU_SOURCE
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { N = 20000 };
static unsigned long long samples[10][N];

static inline unsigned long long now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
  return x < y ? -1 : x > y;
}

static void report(int k, const char *name) {
  qsort(samples[k], N, sizeof samples[k][0], cmp);
  printf("%-48s median %llu ns\n", name, samples[k][N / 2]);
}

int main(void) {
  char m[8] = {0}, buf[1024];
  unsigned long long t0, t1;

  int p[2];
  if (pipe2(p, O_NONBLOCK)) { perror("pipe2"); return 1; }
  struct mq_attr a = {0};
  a.mq_maxmsg = 10;
  a.mq_msgsize = 8;
  mqd_t q = mq_open("/rtgauge-kernel-state", O_CREAT | O_RDWR | O_NONBLOCK, 0600, &a);
  if (q < 0) { perror("mq_open"); return 1; }
  mq_unlink("/rtgauge-kernel-state");

  for (int r = 0; r < N; r++) {
    t0 = now(); t1 = now(); samples[0][r] = t1 - t0;

    // pipe write: into an empty pipe (a new pipe buffer) vs appending to a buffer with room.
    t0 = now(); write(p[1], m, 8); t1 = now(); samples[1][r] = t1 - t0;
    read(p[0], buf, 8);
    write(p[1], m, 8);
    t0 = now(); write(p[1], m, 8); t1 = now(); samples[2][r] = t1 - t0;
    read(p[0], buf, 16);
    t0 = now(); for (int i = 0; i < 100; i++) write(p[1], m, 8); t1 = now();
    samples[3][r] = (t1 - t0) / 100;
    read(p[0], buf, 800);

    // mq_receive: the queue's only message (its priority's list empties and the tree node is
    // removed) vs one of two, and batches of ten at one priority or at ten priorities.
    mq_send(q, m, 8, 0);
    t0 = now(); mq_receive(q, m, 8, NULL); t1 = now(); samples[4][r] = t1 - t0;
    mq_send(q, m, 8, 0); mq_send(q, m, 8, 0);
    t0 = now(); mq_receive(q, m, 8, NULL); t1 = now(); samples[5][r] = t1 - t0;
    mq_receive(q, m, 8, NULL);
    for (int i = 0; i < 10; i++) mq_send(q, m, 8, 0);
    t0 = now(); for (int i = 0; i < 10; i++) mq_receive(q, m, 8, NULL); t1 = now();
    samples[6][r] = (t1 - t0) / 10;
    for (int i = 0; i < 10; i++) mq_send(q, m, 8, i);
    t0 = now(); for (int i = 0; i < 10; i++) mq_receive(q, m, 8, NULL); t1 = now();
    samples[7][r] = (t1 - t0) / 10;
  }
  report(0, "clock read pair");
  report(1, "pipe write, per call, empty pipe");
  report(2, "pipe write, per call, one message pending");
  report(3, "pipe write, batch of 100 / 100");
  report(4, "mq_receive, per call, the only message");
  report(5, "mq_receive, per call, one of two");
  report(6, "mq_receive, batch of 10 at one priority / 10");
  report(7, "mq_receive, batch of 10 at ten priorities / 10");
  return 0;
}
