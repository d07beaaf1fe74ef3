// The program recorded in this directory (tools/record-reads/record.sh): every kind of CPU-time
// read once. gcc -O1 -o reads reads.c
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/syscall.h>
int main() {
  struct rusage ru;
  struct tms t;
  struct timespec ts;
  char b[512];
  volatile unsigned long x = 0;
  for (long i = 0; i < 30000000; i++) x += i;
  getrusage(RUSAGE_SELF, &ru);
  getrusage(RUSAGE_THREAD, &ru);
  getrusage(RUSAGE_CHILDREN, &ru);
  times(&t);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  clockid_t c;
  clock_getcpuclockid(getpid(), &c);
  clock_gettime(c, &ts);
  clock_gettime(((~(clockid_t)getpid()) << 3) | 6, &ts);
  int fd = open("/proc/self/stat", O_RDONLY);
  read(fd, b, sizeof b);
  close(fd);
  fd = open("/proc/self/schedstat", O_RDONLY);
  read(fd, b, sizeof b);
  close(fd);
  char p[64];
  snprintf(p, 64, "/proc/%d/task/%d/stat", getpid(), getpid());
  fd = open(p, O_RDONLY);
  read(fd, b, sizeof b);
  close(fd);
  fd = open("/proc/stat", O_RDONLY);
  read(fd, b, sizeof b);
  close(fd);
  FILE* f = fopen("/proc/self/stat", "r");
  fscanf(f, "%s", b);
  fclose(f);
  return 0;
}
