#!/bin/bash
# Struct offsets the native vtime probes fetch, from a tools/kernel-build tree (no debug info
# needed): compiles a few offsetof()s with the flags Kbuild used for arch/powerpc/kernel/
# cacheinfo.o and prints "NAME VALUE" lines (paca accounting data, per-CPU data offset, task
# times). Also the System.map address of kernel_cpustat.
#   native-offsets.sh KERNEL_DIR      (build.sh's output: KERNEL_DIR/build is the O= tree)
set -euo pipefail
K=$(readlink -f "$1")
B=$K/build
. "$(dirname "$(readlink -f "$0")")/kbuild-offsets.sh"
kbuild_cmd "$B" arch/powerpc/kernel/cacheinfo >/dev/null
T=$(mktemp -d /tmp/native-off.XXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/off.c" <<'C'
#include <linux/kbuild.h>
#include <linux/sched.h>
#include <asm/paca.h>
#include <asm/accounting.h>
void kacct_offsets(void);
void kacct_offsets(void)
{
	OFFSET(paca_accounting, paca_struct, accounting);
	OFFSET(paca_data_offset, paca_struct, data_offset);
	OFFSET(acct_utime, cpu_accounting_data, utime);
	OFFSET(acct_stime, cpu_accounting_data, stime);
	OFFSET(acct_utime_scaled, cpu_accounting_data, utime_scaled);
	OFFSET(acct_stime_scaled, cpu_accounting_data, stime_scaled);
	OFFSET(acct_gtime, cpu_accounting_data, gtime);
	OFFSET(acct_hardirq_time, cpu_accounting_data, hardirq_time);
	OFFSET(acct_softirq_time, cpu_accounting_data, softirq_time);
	OFFSET(acct_steal_time, cpu_accounting_data, steal_time);
	OFFSET(acct_idle_time, cpu_accounting_data, idle_time);
	OFFSET(acct_starttime, cpu_accounting_data, starttime);
	OFFSET(acct_starttime_user, cpu_accounting_data, starttime_user);
	OFFSET(acct_startspurr, cpu_accounting_data, startspurr);
	OFFSET(acct_utime_sspurr, cpu_accounting_data, utime_sspurr);
	OFFSET(task_pid, task_struct, pid);
	OFFSET(task_utime, task_struct, utime);
	OFFSET(task_stime, task_struct, stime);
	OFFSET(task_utimescaled, task_struct, utimescaled);
	OFFSET(task_stimescaled, task_struct, stimescaled);
}
C
kbuild_offsets "$B" arch/powerpc/kernel/cacheinfo "$T/off.c"
echo "kernel_cpustat 0x$(awk '$3 == "kernel_cpustat" {print $1}' "$K/System.map")"
