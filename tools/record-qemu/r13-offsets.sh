# Sourced by the ppc64le guest /init scripts (native-init.sh, irq-init.sh; copied into their
# initramfs as /r13-offsets.sh). A per-CPU variable of CPU c is at ADDR + paca->data_offset and r13
# holds the paca; kprobe fetch offsets are 32-bit, so fetches go relative to r13.
#   r13_offsets FUNC DOFF   one probe on FUNC (DOFF: data_offset's offset in the paca) on each CPU
# sets D0 and D1 = data_offset - r13 of CPU 0 and 1; needs T (tracefs) and say().
r13_offsets() {
	echo "p:kacct/dbg $1 r13=%gpr13:s64 do=+$2(%gpr13):s64" >> $T/kprobe_events
	echo 1 > $T/events/kacct/dbg/enable
	taskset 2 usleep 20000
	usleep 20000
	echo 0 > $T/events/kacct/dbg/enable
	for c in 0 1; do
		l=$(grep "\[00$c\].* dbg:" $T/trace | tail -1)
		r13=$(echo "$l" | sed -n 's/.*r13=\(-*[0-9]*\).*/\1/p')
		do=$(echo "$l" | sed -n 's/.*do=\(-*[0-9]*\).*/\1/p')
		[ -n "$r13" ] && [ -n "$do" ] || { say "no r13/data_offset for cpu $c"; continue; }
		eval "D$c=$((do - r13))"
		say "cpu $c r13 $r13 data_offset $do"
	done
	echo "-:kacct/dbg" >> $T/kprobe_events
	echo > $T/trace
}
