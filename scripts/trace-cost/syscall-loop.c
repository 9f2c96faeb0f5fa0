// getppid() in batches on CPU 1 at SCHED_FIFO 90; prints the ns per call of the batches at the
// 10th, 25th and 50th percentile (scripts/trace-cost/syscall-events.py).
//   usage: syscall-loop BATCHES CALLS_PER_BATCH
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static long long now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int batches=atoi(argv[1]), per=atoi(argv[2]);
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
  struct sched_param p={.sched_priority=90};sched_setscheduler(0,SCHED_FIFO,&p);
  double *r=malloc(sizeof(double)*batches);
  for(int w=0;w<per*10;w++) syscall(SYS_getppid);
  for(int b=0;b<batches;b++){long long t0=now();for(int i=0;i<per;i++) syscall(SYS_getppid);r[b]=(double)(now()-t0)/per;}
  qsort(r,batches,sizeof(double),cmp);
  printf("%.1f %.1f %.1f\n",r[batches/10],r[batches/4],r[batches/2]);
  return 0;}
