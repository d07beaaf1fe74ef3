#!/usr/bin/env python3
"""Cut the kernel's accounting functions and macros out of a Debian linux-source tarball.

Writes, into OUT (a build directory, never the repository):
  cputime.inc      functions of kernel/sched/cputime.c, verbatim, in source order
  div64_generic.inc  mul_u64_u64_div_u64() of lib/math/div64.c (generic C)
  div64_x86.inc    mul_u64_u64_div_u64() of arch/x86/include/asm/div64.h (mulq/divq)
  math64.inc       div64_u64(), div64_u64_rem() of include/linux/math64.h (64-bit)
  tree.h           the tree's version, from its Makefile
  psi.inc          record_times(), psi_account_irqtime() (+ psi_write_begin/end) of kernel/sched/psi.c
  macros.h         preempt-count, TICK_NSEC and PF_VCPU macros
  rename.h         one #define per extracted non-static function, prefixing it (KD_SYM)
  SOURCE           tarball, file and line of every piece
Nothing is edited: a piece is copied from its first line to its closing brace (or macro line).
Exits non-zero with a message when the tarball or a piece is missing.
"""
import argparse
import os
import re
import sys
import tarfile

# (file, name, nth definition) -- nth counts definitions with a body, in source order, so that
# the #ifdef alternatives (native vtime's trivial cputime_adjust, the !IRQ_TIME stubs) are skipped.
CPUTIME = [
    ("irqtime_account_delta", 1), ("irqtime_account_irq", 1), ("irqtime_tick_accounted", 1),
    ("task_group_account_field", 1), ("account_user_time", 1), ("account_guest_time", 1),
    ("account_system_index_time", 1), ("account_system_time", 1), ("account_steal_time", 1),
    ("account_idle_time", 1), ("steal_account_process_time", 1), ("account_other_time", 1),
    ("irqtime_account_process_tick", 1), ("irqtime_account_idle_ticks", 1),
    ("account_process_tick", 1), ("account_idle_ticks", 1), ("cputime_adjust", 2),
    # CONFIG_VIRT_CPU_ACCOUNTING_GEN
    ("vtime_delta", 1), ("get_vtime_delta", 1), ("vtime_account_system", 1), ("vtime_account_guest", 1),
    ("__vtime_account_kernel", 1), ("vtime_account_kernel", 1), ("vtime_user_enter", 1), ("vtime_user_exit", 1),
    ("vtime_guest_enter", 1), ("vtime_guest_exit", 1), ("vtime_account_idle", 1),
    ("vtime_task_switch_generic", 1), ("task_cputime", 1),
]
# kernel/sched/psi.c: the PSI irq charge (both trees carry the 6.10 form, psi_account_irqtime(rq,
# curr, prev)); psi_write_begin/end and for_each_group only where the per-CPU psi_seq is backported.
PSI = [("record_times", 1, False), ("psi_write_begin", 1, True), ("psi_write_end", 1, True),
       ("psi_account_irqtime", 1, False)]
MACROS = [
    ("include/linux/preempt.h", n, 1) for n in (
        "PREEMPT_BITS", "SOFTIRQ_BITS", "HARDIRQ_BITS", "NMI_BITS", "PREEMPT_SHIFT", "SOFTIRQ_SHIFT",
        "HARDIRQ_SHIFT", "NMI_SHIFT", "__IRQ_MASK", "PREEMPT_MASK", "SOFTIRQ_MASK", "HARDIRQ_MASK",
        "NMI_MASK", "PREEMPT_OFFSET", "SOFTIRQ_OFFSET", "HARDIRQ_OFFSET", "NMI_OFFSET", "nmi_count",
        "hardirq_count", "in_serving_softirq")
] + [
    # the !CONFIG_PREEMPT_RT alternatives (the second definition in preempt.h)
    ("include/linux/preempt.h", "softirq_count", 2), ("include/linux/preempt.h", "irq_count", 2),
    ("include/vdso/jiffies.h", "TICK_NSEC", 1), ("include/linux/sched.h", "PF_VCPU", 1),
]
FILES = ["Makefile", "kernel/sched/psi.c", "kernel/sched/cputime.c", "lib/math/div64.c", "arch/x86/include/asm/div64.h",
         "include/linux/math64.h", "include/linux/preempt.h", "include/vdso/jiffies.h",
         "include/linux/sched.h"]


def die(msg):
    sys.stderr.write("kernel-diff extract: " + msg + "\n")
    sys.exit(1)


def has_function(lines, name):
    return any(re.match(r"^(?:[A-Za-z_][\w \*]*\s[\*]*)?" + re.escape(name) + r"\(", l) for l in lines)


def cut_function(lines, name, nth, where):
    """Lines of the nth definition (with a body) of function `name`, and its first line number."""
    head = re.compile(r"^(?:[A-Za-z_][\w \*]*\s[\*]*)?" + re.escape(name) + r"\(")
    seen = 0
    for i, line in enumerate(lines):
        if not head.match(line):
            continue
        start = i - 1 if line.startswith(name) else i  # "static u64\nname(" style
        j = i
        while j < len(lines) and "{" not in lines[j] and not lines[j].rstrip().endswith(";"):
            j += 1
        if j >= len(lines) or "{" not in lines[j]:
            continue  # a declaration
        seen += 1
        if seen != nth:
            continue
        if lines[j].rstrip().endswith("}"):  # one-line body
            return lines[start:j + 1], start + 1
        k = j + 1
        while k < len(lines) and not lines[k].startswith("}"):
            k += 1
        if k >= len(lines):
            die(f"{where}: no closing brace for {name}")
        return lines[start:k + 1], start + 1
    die(f"{where}: definition {nth} of {name}() not found ({seen} found)")


def cut_macro(lines, name, nth, where):
    pat = re.compile(r"^#\s*define\s+" + re.escape(name) + r"\b")
    seen = 0
    for i, line in enumerate(lines):
        if pat.match(line):
            seen += 1
            if seen == nth:
                out, start = [line], i
                while out[-1].rstrip().endswith("\\"):
                    i += 1
                    out.append(lines[i])
                return out, start + 1
    die(f"{where}: #define {name} (occurrence {nth}) not found")


def is_static(first_lines):
    return first_lines[0].lstrip().startswith("static")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tarball", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if not os.path.exists(a.tarball):
        die(f"{a.tarball} is missing: install the Debian package "
            f"{os.path.basename(a.tarball).split('.tar')[0]} (setup.sh does)")
    src = {}
    with tarfile.open(a.tarball, "r:xz") as tf:
        for m in tf:
            if not m.isfile():
                continue
            rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if rel in FILES:
                src[rel] = tf.extractfile(m).read().decode("utf-8").splitlines()
                if len(src) == len(FILES):
                    break
    for f in FILES:
        if f not in src:
            die(f"{a.tarball} has no {f}")
    os.makedirs(a.out, exist_ok=True)
    record, renames = [], []

    def emit(fname, pieces):
        with open(os.path.join(a.out, fname), "w") as fh:
            for file, (body, line) in pieces:
                fh.write(f"#line {line} \"{file}\"\n")
                fh.write("\n".join(body) + "\n")

    def fn(file, name, nth):
        body, line = cut_function(src[file], name, nth, file)
        record.append(f"{file}:{line} {name}()")
        if not is_static(body):
            renames.append(name)
        return (file, (body, line))

    emit("cputime.inc", [fn("kernel/sched/cputime.c", n, k) for n, k in CPUTIME])
    psi = [fn("kernel/sched/psi.c", n, k) for n, k, optional in PSI
           if not optional or has_function(src["kernel/sched/psi.c"], n)]
    fe = [l for l in src["kernel/sched/psi.c"] if re.match(r"^#\s*define\s+for_each_group\b", l)]
    if fe:
        body, line = cut_macro(src["kernel/sched/psi.c"], "for_each_group", 1, "kernel/sched/psi.c")
        record.append(f"kernel/sched/psi.c:{line} #define for_each_group")
        psi.insert(0, ("kernel/sched/psi.c", (body, line)))
    emit("psi.inc", psi)
    with open(os.path.join(a.out, "psi_tree.h"), "w") as fh:  # which form this tree has
        fh.write("#define KD_PSI_PERCPU_SEQ %d\n" % int(has_function(src["kernel/sched/psi.c"], "psi_write_begin")))
    # the tree's own version (top-level Makefile), so that a package update is noticed
    mk = {k: v for k, v in (re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = (\d+)", l).groups()
                            for l in src["Makefile"][:10] if re.match(r"^(VERSION|PATCHLEVEL|SUBLEVEL) = \d+", l))}
    if len(mk) != 3:
        die(f"{a.tarball}: no VERSION/PATCHLEVEL/SUBLEVEL in the Makefile")
    with open(os.path.join(a.out, "tree.h"), "w") as fh:
        fh.write('#define KD_TREE_VERSION "%s.%s.%s"\n' % (mk["VERSION"], mk["PATCHLEVEL"], mk["SUBLEVEL"]))
    emit("div64_generic.inc", [fn("lib/math/div64.c", "mul_u64_u64_div_u64", 1)])
    x86 = fn("arch/x86/include/asm/div64.h", "mul_u64_u64_div_u64", 1)
    emit("div64_x86.inc", [x86])
    emit("math64.inc", [fn("include/linux/math64.h", "div64_u64_rem", 1),
                        fn("include/linux/math64.h", "div64_u64", 1)])
    macros = []
    for file, name, nth in MACROS:
        body, line = cut_macro(src[file], name, nth, file)
        record.append(f"{file}:{line} #define {name}")
        macros.append((file, (body, line)))
    emit("macros.h", macros)
    with open(os.path.join(a.out, "rename.h"), "w") as fh:
        for n in sorted(set(renames)):
            fh.write(f"#define {n} KD_SYM({n})\n")
    with open(os.path.join(a.out, "SOURCE"), "w") as fh:
        fh.write(a.tarball + "\n" + "\n".join(record) + "\n")


if __name__ == "__main__":
    main()
