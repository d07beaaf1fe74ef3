#!/bin/bash
# Struct offsets the lazy-TLB probes fetch (task_struct pid, flags, mm, active_mm; mm_struct
# mm_users, mm_count, cpu_bitmap; rq prev_mm; powerpc: paca_struct __current), printed as "NAME VALUE".
#   lazytlb-offsets.sh KERNEL_DIR
# KERNEL_DIR from tools/kernel-build (KERNEL_DIR/build is the O= tree, no debug info): compiles
# offsetof()s with the flags Kbuild used for kernel/fork.o, as native-offsets.sh does.
# Otherwise KERNEL_DIR/vmlinux with BTF (a Debian stock kernel: extract-vmlinux of its vmlinuz),
# or KERNEL_DIR/vmlinux-dbg with DWARF (the -dbg package's usr/lib/debug/boot/vmlinux-*: Debian's
# 6.1 ppc64el kernels have no BTF): read with pahole.
set -euo pipefail
K=$(readlink -f "$1")
if [ -d "$K/build" ]; then
	B=$K/build
	. "$(dirname "$(readlink -f "$0")")/kbuild-offsets.sh"
	cmd=$(kbuild_cmd "$B" kernel/fork)
	T=$(mktemp -d /tmp/ltlb-off.XXXX)
	trap 'rm -rf "$T"' EXIT
	ppc=0
	grep -q -- '-mcpu=power' <<< "$cmd" && ppc=1
	{
		echo '#include <linux/kbuild.h>'
		echo '#include <linux/sched.h>'
		echo '#include <linux/mm_types.h>'
		echo '#include <linux/mmu_context.h>'
		[ $ppc = 1 ] && echo '#include <asm/paca.h>'
		echo "#include \"$B/source/kernel/sched/sched.h\""
		echo 'void kacct_offsets(void);'
		echo 'void kacct_offsets(void)'
		echo '{'
		echo '	OFFSET(task_pid, task_struct, pid);'
		echo '	OFFSET(task_flags, task_struct, flags);'
		echo '	OFFSET(task_mm, task_struct, mm);'
		echo '	OFFSET(task_active_mm, task_struct, active_mm);'
		echo '	OFFSET(mm_users, mm_struct, mm_users);'
		echo '	OFFSET(mm_count, mm_struct, mm_count);'
		echo '	OFFSET(mm_cpu_bitmap, mm_struct, cpu_bitmap);'
		echo '	OFFSET(rq_prev_mm, rq, prev_mm);'
		[ $ppc = 1 ] && echo '	OFFSET(paca_current, paca_struct, __current);'
		[ $ppc = 1 ] && echo '	OFFSET(paca_data_offset, paca_struct, data_offset);'
		echo '}'
	} > "$T/off.c"
	kbuild_offsets "$B" kernel/fork "$T/off.c"
else
	V=$K/vmlinux
	[ -r "$K/vmlinux-dbg" ] && V=$K/vmlinux-dbg
	[ -r "$V" ] || { echo "neither $K/build nor $V" >&2; exit 1; }
	m() { pahole -C "$1" "$V" | awk -v f="$2" '{for (i = 1; i < NF; i++) if ($i == f ";" || index($i, f "[") == 1) {for (j = i; j <= NF; j++) if ($j == "/*") {print $(j + 1); exit}}}'; }
	echo "task_pid $(m task_struct pid)"
	echo "task_flags $(m task_struct flags)"
	echo "task_mm $(m task_struct mm)"
	echo "task_active_mm $(m task_struct active_mm)"
	echo "mm_users $(m mm_struct mm_users)"
	echo "mm_count $(m mm_struct mm_count)"
	echo "mm_cpu_bitmap $(m mm_struct cpu_bitmap)"
	echo "rq_prev_mm $(m rq prev_mm)"
	if file -L "$V" | grep -q PowerPC; then
		echo "paca_current $(m paca_struct __current)"
		echo "paca_data_offset $(m paca_struct data_offset)"
	fi
	# without KALLSYMS_ALL (Debian's 6.1 ppc64el) /proc/kallsyms has no data symbols: init_mm
	# from the image's symbol table, with a text symbol the guest checks against kallsyms
	# (the same address there: the image was not relocated)
	nm "$K/vmlinux" 2> /dev/null | awk '$3 == "init_mm" || $3 == "wake_up_new_task" {print "sym_" $3, $1}'
fi
