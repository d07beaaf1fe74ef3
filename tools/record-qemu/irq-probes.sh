# Sourced by the irq-time guests' /init (irq-init.sh, irq-reads-init.sh; irq-record.sh copies it
# into every irq guest's initramfs as /irq-probes.sh): adds irq-record.sh's /probes.txt to
# kprobe_events. ppc64le (/pcpu.env present): per-CPU fetches go relative to r13
# (r13-offsets.sh), each +@ADDR@(%gpr13) rewritten for the CPU in the probe's name (ia0, tk1).
# Needs T (tracefs) and say().
irq_probes() {
	if [ -e /pcpu.env ]; then
		. /pcpu.env
		. /r13-offsets.sh
		r13_offsets irqtime_account_irq "$DOFF"
		while read -r l; do
			n=${l%% *}
			eval "d=\$D${n#${n%?}}"
			out=
			while [ "${l#*@}" != "$l" ]; do
				a=${l#*@}
				v=$((${a%%@*} + d))
				[ $v -ge -2147483648 ] && [ $v -le 2147483647 ] || say "per-CPU offset $v from r13 out of range: $n"
				out="$out${l%%@*}$v"
				l=${a#*@}
			done
			echo "$out$l" >> $T/kprobe_events || say "kprobe failed: $out$l"
		done < /probes.txt
	else
		while read -r l; do echo "$l" >> $T/kprobe_events || say "kprobe failed: $l"; done < /probes.txt
	fi
	grep . $T/error_log 2> /dev/null | while read -r l; do say "error_log $l"; done
}
