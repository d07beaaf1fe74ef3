/* A tiny consumer of the installed kacct: built by test/capi/install_consumer.cmake against the
 * installed header and library only (pkg-config and find_package(kacct CONFIG)). */
#include <kacct/kacct.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  static const char trace[] =
      "kacct-trace 1\ncpu x86-64\nncpus 1\nclock ns\ntask 7 comm=consumer mm=1\nevents\n"
      "1000000 0 switch prev=0 next=7\n1001000 0 syscall_exit\n4000000 0 tick\n"
      "5000000 0 syscall_enter nr=0\n5001000 0 read kind=proc_stat id=1\n5002000 0 syscall_exit\n";
  kacct_model* m = NULL;
  kacct_read rd;
  if (kacct_api_version() != KACCT_API_VERSION) {
    printf("not ok - API version %u, header %d\n", kacct_api_version(), KACCT_API_VERSION);
    return 1;
  }
  if (kacct_open("x86-64", "6.6-tick-hz250", &m) != KACCT_OK) {
    printf("not ok - open: %s\n", kacct_last_error());
    return 1;
  }
  if (kacct_feed_text(m, trace, strlen(trace)) != KACCT_OK || kacct_find_read(m, 1, &rd) != KACCT_OK) {
    printf("not ok - %s\n", kacct_error_message(m));
    kacct_close(m);
    return 1;
  }
  /* one user tick, rtime 4.001 ms: all of it utime */
  if (rd.utime_ns != 4001000 || rd.stime_ns != 0) {
    printf("not ok - utime %llu stime %llu\n", (unsigned long long)rd.utime_ns, (unsigned long long)rd.stime_ns);
    kacct_close(m);
    return 1;
  }
  printf("ok - kacct %s: /proc/7/stat utime=%llu stime=%llu\n", kacct_version_string(),
         (unsigned long long)rd.utime_ticks, (unsigned long long)rd.stime_ticks);
  kacct_close(m);
  return 0;
}
