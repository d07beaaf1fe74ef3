#!/bin/bash
# task_struct offsets for kprobe fetches on a tools/kernel-build tree (no debug info needed):
# compiles a few offsetof()s with the flags Kbuild used for kernel/fork.o and prints "NAME VALUE"
# lines: the task's pid, utime, stime, gtime and se.sum_exec_runtime, and with
# VIRT_CPU_ACCOUNTING_GEN its struct vtime (starttime, state, utime, stime, gtime, cpu); on ppc64 the
# paca's data_offset (per-CPU fetches relative to r13).
#   task-offsets.sh KERNEL_DIR      (build.sh's output: KERNEL_DIR/build is the O= tree)
set -euo pipefail
K=$(readlink -f "$1")
B=$K/build
. "$(dirname "$(readlink -f "$0")")/kbuild-offsets.sh"
kbuild_cmd "$B" kernel/fork >/dev/null
T=$(mktemp -d /tmp/task-off.XXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/off.c" <<'C'
#include <linux/kbuild.h>
#include <linux/sched.h>
#ifdef CONFIG_PPC64
#include <asm/paca.h>
#endif
void kacct_offsets(void);
void kacct_offsets(void)
{
	OFFSET(task_pid, task_struct, pid);
	OFFSET(task_utime, task_struct, utime);
	OFFSET(task_stime, task_struct, stime);
	OFFSET(task_gtime, task_struct, gtime);
	OFFSET(task_sum_exec_runtime, task_struct, se.sum_exec_runtime);
#ifdef CONFIG_VIRT_CPU_ACCOUNTING_GEN
	OFFSET(task_vtime, task_struct, vtime);
	OFFSET(vtime_starttime, vtime, starttime);
	OFFSET(vtime_state, vtime, state);
	OFFSET(vtime_utime, vtime, utime);
	OFFSET(vtime_stime, vtime, stime);
	OFFSET(vtime_gtime, vtime, gtime);
	OFFSET(vtime_cpu, vtime, cpu);
#endif
#ifdef CONFIG_PPC64
	OFFSET(paca_data_offset, paca_struct, data_offset);
#endif
}
C
kbuild_offsets "$B" kernel/fork "$T/off.c"
