/* One SIGFPE/SIGILL handler for every build of the kernel functions: divq's #DE and integer
 * division by zero arrive as SIGFPE, a compiled-in 1/0 may be a trap instruction (SIGILL). The
 * caller points kd_trap_target at its sigsetjmp buffer; SA_NODEFER, so that jumping out of the
 * handler leaves the signal unblocked. */
#include "kdiff_trap.h"

#include <signal.h>
#include <string.h>

sigjmp_buf* kd_trap_target;

static void on_trap(int sig) { siglongjmp(*kd_trap_target, 1); }

void kd_arm_traps(void) {
  static int armed;
  if (armed) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_trap;
  sa.sa_flags = SA_NODEFER;
  sigaction(SIGFPE, &sa, 0);
  sigaction(SIGILL, &sa, 0);
  armed = 1;
}
