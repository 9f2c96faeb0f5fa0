// A control for validating rtgauge's cyclic probe (docs/validation.md): the smallest loop that
// measures wake-up latency the way rtgauge and cyclictest do, with nothing else in the process.
// SCHED_FIFO 95 on CPU 1, mlockall, /dev/cpu_dma_latency held at 0, clock_nanosleep to
// absolute 1 ms deadlines, clock_gettime, store; 1000 warm-up cycles are discarded.
//
//   gcc -O2 -o /tmp/minimal-cyclic scripts/minimal-cyclic.c
//   sudo /tmp/minimal-cyclic 6000          # deadlines at start + 2 ms + k ms (free phase)
//   sudo /tmp/minimal-cyclic 6000 aligned  # deadlines on whole milliseconds
//
// Prints: name min p1 p5 p25 median, in us.  Not built by CI; it needs root.
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>
static inline long long ns(struct timespec t){return t.tv_sec*1000000000LL+t.tv_nsec;}
static int cmp(const void*a,const void*b){long long x=*(long long*)a,y=*(long long*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int n=atoi(argv[1]); int aligned=argc>2;
  static long long s[100000];
  cpu_set_t c; CPU_ZERO(&c); CPU_SET(1,&c); sched_setaffinity(0,sizeof c,&c);
  struct sched_param p={.sched_priority=95}; sched_setscheduler(0,SCHED_FIFO,&p);
  mlockall(MCL_CURRENT|MCL_FUTURE);
  int fd=open("/dev/cpu_dma_latency",O_WRONLY); int z=0; write(fd,&z,4);
  struct timespec now,next; clock_gettime(CLOCK_MONOTONIC,&next);
  long long t=ns(next)+2000000; if(aligned) t=t/1000000*1000000;
  for(int i=-1000;i<n;i++){
    next.tv_sec=t/1000000000; next.tv_nsec=t%1000000000;
    clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&next,NULL);
    clock_gettime(CLOCK_MONOTONIC,&now);
    if(i>=0) s[i]=ns(now)-t;
    t+=1000000;
  }
  qsort(s,n,8,cmp);
  printf("minloop%s %.1f %.1f %.1f %.1f %.1f\n",aligned?"-al":"",s[0]/1e3,s[n/100]/1e3,s[n/20]/1e3,s[n/4]/1e3,s[n/2]/1e3);
}
