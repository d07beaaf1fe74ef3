#!/bin/bash
# Kprobe definitions for one Debian kernel, from its -dbg vmlinux (DWARF) via pahole.
#   probes.sh VMLINUX_DBG ARCH > probes.txt      (one kprobe_events line each; ARCH amd64|ppc64el)
# Each probe records the task's gen-vtime state on entry, so the kernel's own sched_clock()
# values and ns residues are in the trace (6.1 kernel/sched/cputime.c):
#   vtime_user_exit(tsk), vtime_user_enter(tsk), vtime_task_switch_generic(prev): the task's
#     pid, vtime.{starttime,state,utime,stime}, utime, stime, se.sum_exec_runtime;
#   cputime_adjust(curr, prev, ...): the raw task_cputime (stime, utime, sum_exec_runtime) a
#     reader adjusts, and prev_cputime before it;
#   bacct_add_tsk(user_ns, pid_ns, stats, tsk): a taskstats reply is being built for tsk.
# struct task_cputime and prev_cputime start with u64 fields whose order pahole checks too.
set -euo pipefail
V=$1
# The first two arguments by register: 6.1's powerpc kprobe_events has no $argN.
case $2 in amd64) A1=%di A2=%si A4=%cx ;; ppc64el) A1=%r3 A2=%r4 A4=%r6 ;; *) echo "probes.sh: ARCH?" >&2; exit 2 ;; esac
off() { # off STRUCT MEMBER -> byte offset (fails if absent)
	pahole -C "$1" "$V" 2>/dev/null | awk -v m="$2" '
		{ line=$0; sub(/\/\*.*$/, "", line); n=split(line, w, /[ \t;*]+/) }
		{ for (i=1;i<=n;i++) if (w[i]==m && $0 ~ /\/\*/) { sub(/.*\/\*[ \t]*/, ""); split($0, o, /[ \t]+/); print o[1]; exit } }'
}
need() { local v; v=$(off "$1" "$2"); [ -n "$v" ] || { echo "probes.sh: no $1.$2 in $V" >&2; exit 1; }; echo "$v"; }
VT=$(need task_struct vtime) SE=$(need task_struct se) TU=$(need task_struct utime) TS=$(need task_struct stime)
PID=$(need task_struct pid) SUM=$(need sched_entity sum_exec_runtime)
ST=$(need vtime starttime) STATE=$(need vtime state) VU=$(need vtime utime) VS=$(need vtime stime)
[ "$(need task_cputime stime)/$(need task_cputime utime)/$(need task_cputime sum_exec_runtime)" = 0/8/16 ] ||
	{ echo "probes.sh: unexpected struct task_cputime layout" >&2; exit 1; }
[ "$(need prev_cputime utime)/$(need prev_cputime stime)" = 0/8 ] ||
	{ echo "probes.sh: unexpected struct prev_cputime layout" >&2; exit 1; }
task() { # fields of the task_struct whose address is $1
	echo "pid=+$PID($1):s32 st=+$((VT + ST))($1):u64 vs=+$((VT + STATE))($1):u32" \
		"vu=+$((VT + VU))($1):u64 vst=+$((VT + VS))($1):u64 tu=+$TU($1):u64 ts=+$TS($1):u64" \
		"rt=+$((SE + SUM))($1):u64"
}
echo "p:kprobes/vtime_user_exit vtime_user_exit $(task $A1)"
echo "p:kprobes/vtime_user_enter vtime_user_enter $(task $A1)"
# x86: perf's clock is local_clock() = sched_clock() + __sched_clock_offset once sched_clock is
# stable (6.1 kernel/sched/clock.c); record the offset so vtime's raw clock maps onto perf's.
OFF=""
nm "$V" | grep ' [DdBb] __sched_clock_offset$' >/dev/null && OFF=" off=@__sched_clock_offset:u64"
echo "p:kprobes/vtime_task_switch vtime_task_switch_generic $(task $A1)$OFF"
echo "p:kprobes/cputime_adjust cputime_adjust cs=+0($A1):u64 cu=+8($A1):u64 cr=+16($A1):u64 pu=+0($A2):u64 ps=+8($A2):u64"
echo "p:kprobes/bacct_add_tsk bacct_add_tsk pid=+$PID($A4):s32"
