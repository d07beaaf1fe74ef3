#!/bin/busybox sh
# /init of the lazy-TLB recording guest (lazytlb-record.sh builds the initramfs with /offsets
# and /lazytlb-work). On each CPU N, kprobes fetch the current task (per-CPU current_task, or
# pcpu_hot.current_task from 6.2) with its pid, flags, mm and active_mm, and that active_mm's
# mm_users, mm_count and first mm_cpumask word:
#   fs<N>  finish_task_switch entry: after context_switch(); also prev (%di): pid, flags, mm,
#          and rq->prev_mm (runqueues)
#   fr<N>  finish_task_switch return: after the lazy drop of rq->prev_mm
#   wf<N>  wake_up_new_task: after copy_process(); also the child (%di): pid, flags, mm
#   ex<N>  exit_files: in do_exit() right after exit_mm()
#   xc<N>  setup_new_exec: after begin_new_exec()'s exec_mmap()
#   xf<N>, xr<N>  do_exit_flush_lazy_tlb entry and return (powerpc radix: the IPI of the exit
#          flush and of the mm_cpumask trim), with the mm (argument) and its mm_users
#   sd<N>, sr<N>  do_shoot_lazy_tlb entry and return (MMU_LAZY_TLB_SHOOTDOWN: __mmdrop's IPI)
# while lazytlb-work runs (threads, fork, exec, exit, migration, idle). The ftrace text goes
# gzip+base64 to the third serial port (x86) or the second VTY (powerpc), framed by
# "==== NAME" sections; console lines start with "LTLB:".
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing
T=/sys/kernel/tracing
say() { echo "LTLB: $*"; }
taskset -p 1 $$ > /dev/null
NCPU=$(grep -c '^processor' /proc/cpuinfo)
say "kernel $(uname -r) cpus $(cat /sys/devices/system/cpu/online) ncpu $NCPU machine $(uname -m)"
O=/dev/ttyS2
[ "$(uname -m)" = ppc64le ] && O=/dev/hvc1
stty -F $O raw 2> /dev/null
sect() { echo "==== $1" > $O; }
ksym() { awk -v s="$1" '$3 == s {print $1; exit}' /proc/kallsyms; }
kfunc() { awk -v s="$1" '($2 == "t" || $2 == "T") && ($3 == s || index($3, s ".") == 1) {print $3; exit}' /proc/kallsyms; }
off() { awk -v n="$1" '$1 == n {print $2}' /offsets; }
TPID=$(off task_pid) TFL=$(off task_flags) TMM=$(off task_mm) TAM=$(off task_active_mm)
MU=$(off mm_users) MC=$(off mm_count) BM=$(off mm_cpu_bitmap) RQPM=$(off rq_prev_mm)
RQ=$(ksym runqueues)
# current task: per-CPU current_task (x86 up to 6.1), pcpu_hot.current_task (x86 6.2+, first
# member), paca->__current through r13 (powerpc)
CUR=$(ksym current_task)
[ -n "$CUR" ] || CUR=$(ksym pcpu_hot)
INIT_MM=$(ksym init_mm)
# no data symbols in kallsyms (no KALLSYMS_ALL): the host's, if the text agrees
if [ -z "$INIT_MM" ] && [ -n "$(off sym_init_mm)" ]; then
	if [ "$(ksym wake_up_new_task)" = "$(off sym_wake_up_new_task)" ]; then
		INIT_MM=$(off sym_init_mm)
	else
		say "kallsyms wake_up_new_task $(ksym wake_up_new_task), image $(off sym_wake_up_new_task): init_mm unknown"
	fi
fi
FTS=$(kfunc finish_task_switch) WNT=$(kfunc wake_up_new_task) EXF=$(kfunc exit_files) SNE=$(kfunc setup_new_exec)
XFL=$(kfunc do_exit_flush_lazy_tlb) SHL=$(kfunc do_shoot_lazy_tlb)
say "symbols current $CUR init_mm $INIT_MM finish $FTS wake $WNT exit $EXF exec $SNE exit-flush $XFL shoot $SHL"
for c in $(seq 0 $((NCPU - 1))); do
	pcpu="@__per_cpu_offset+$((8 * c))"
	if [ "$(uname -m)" = ppc64le ]; then
		cur="+$(off paca_current)(%gpr13)"
		pcpu="+$(off paca_data_offset)(%gpr13)"
	else
		cur="+$((0x$CUR))($pcpu)"
	fi
	blk="cp=+$TPID($cur):s32 cf=+$TFL($cur):x32 cm=+$TMM($cur):x64 ca=+$TAM($cur):x64"
	blk="$blk mu=+$MU(+$TAM($cur)):u32 mc=+$MC(+$TAM($cur)):u32 mk=+$BM(+$TAM($cur)):x64"
	if [ "$(uname -m)" = ppc64le ]; then
		a0=%gpr3 rp="" # runqueues is not within a 32-bit fetch offset of r13's paca
	else
		a0=%di rp=" rp=+$((0x$RQ + RQPM))($pcpu):x64"
	fi
	{
		echo "p:kacct/fs$c $FTS $blk pp=+$TPID($a0):s32 pf=+$TFL($a0):x32 pm=+$TMM($a0):x64$rp"
		echo "r:kacct/fr$c $FTS $blk"
		echo "p:kacct/wf$c $WNT $blk ch=+$TPID($a0):s32 chf=+$TFL($a0):x32 chm=+$TMM($a0):x64"
		echo "p:kacct/ex$c $EXF $blk"
		echo "p:kacct/xc$c $SNE $blk"
		# shootdown kernels: the radix exit flush's IPI handler and __mmdrop's shootdown
		# (their argument is the mm: its mm_users tells the exit flush, 0, from a trim flush)
		[ -n "$XFL" ] && echo "p:kacct/xf$c $XFL $blk fm=$a0:x64 fu=+$MU($a0):u32" && echo "r:kacct/xr$c $XFL $blk"
		[ -n "$SHL" ] && echo "p:kacct/sd$c $SHL $blk fm=$a0:x64" && echo "r:kacct/sr$c $SHL $blk"
	} > /tmp/probes$c
	while read -r l; do echo "$l" >> $T/kprobe_events || say "kprobe failed: $l"; done < /tmp/probes$c
	for e in fs fr wf ex xc xf xr sd sr; do
		[ -d $T/events/kacct/$e$c ] && echo "cpu == $c" > $T/events/kacct/$e$c/filter
	done
done
grep . $T/error_log 2> /dev/null | sed "s/^/LTLB: error_log /"
# the order of events across CPUs: the counter clock is an atomic increment per event (the
# global clock clamps a lagging CPU to the last value, and under TCG gave runs of equal stamps)
echo counter > $T/trace_clock || say "no counter trace clock"
echo 16384 > $T/buffer_size_kb
sect header
echo "init_mm $INIT_MM"
echo "init_mm $INIT_MM" > $O
echo "ncpu $NCPU" > $O
echo "kernel $(uname -r)" > $O
cat /tmp/probes* > $O
echo 0 > $T/tracing_on
echo > $T/trace
echo 1 > $T/events/kacct/enable
echo 1 > $T/tracing_on
/lazytlb-work
echo 0 > $T/tracing_on
say "trace lines $(wc -l < $T/trace), lost $(grep -c LOST $T/trace)"
grep -E 'entries-in-buffer|overrun' $T/per_cpu/cpu*/stats 2> /dev/null | sed 's/^/LTLB: /'
for c in $(seq 0 $((NCPU - 1))); do
	for e in fs fr wf ex xc xf xr sd sr; do say "hits $e$c $(grep -c " $e$c:" $T/trace)"; done
done
sect trace
gzip -c $T/trace | uuencode -m trace.gz > $O
sect end
usleep 500000
say done
[ "$(uname -m)" = ppc64le ] && poweroff -f
reboot -f
