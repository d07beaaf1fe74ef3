#!/usr/bin/env python3
"""read-sites.py's control-flow walk without a kernel: a hand-written objdump listing laid out
like 6.12's amd64 getrusage() (the RUSAGE_THREAD call placed after the RUSAGE_SELF one, both
jumping back to a tail the RUSAGE_CHILDREN path reaches without sampling). Done: the blocks
after each sampler's return; before: the entry, the call instructions, the shared tail; a loop
back to the entry makes its blocks before too; an indirect jump leaves the function out.
  read_sites_test.py TOOLS_RECORD_QEMU_DIR"""
import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location('rs', os.path.join(sys.argv[1], 'read-sites.py'))
rs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rs)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, finish  # noqa: E402  (test/checks.py)


def listing(body):
    return ('\nvmlinux:     file format elf64-x86-64\n\n\nDisassembly of section .text:\n\n'
            'ffffffff81000000 <getrusage>:\n' + body + '\nDisassembly of section .init.text:\n')


GETRUSAGE = '''ffffffff81000000:\tpush   %rbp
ffffffff81000001:\tcmp    $0x1,%esi
ffffffff81000004:\tje     ffffffff81000040 <getrusage+0x40>
ffffffff81000006:\ttest   %esi,%esi
ffffffff81000008:\tjne    ffffffff81000020 <getrusage+0x20>
ffffffff8100000a:\tcall   ffffffff81100000 <thread_group_cputime_adjusted>
ffffffff8100000f:\tmov    0x8(%rsp),%rax
ffffffff81000014:\tjmp    ffffffff81000020 <getrusage+0x20>
ffffffff81000016:\tmov    0x10(%rsp),%rax
ffffffff8100001b:\tjmp    ffffffff81000020 <getrusage+0x20>
ffffffff81000020:\tcall   ffffffff81200000 <ns_to_kernel_old_timeval>
ffffffff81000025:\tpop    %rbp
ffffffff81000026:\tjmp    ffffffff81300000 <__x86_return_thunk>
ffffffff81000040:\tcall   ffffffff81100100 <task_cputime_adjusted>
ffffffff81000045:\tadd    %rax,0x80(%rbx)
ffffffff8100004c:\tjmp    ffffffff81000020 <getrusage+0x20>
'''

insns = rs.parse(listing(GETRUSAGE), 'getrusage')
check(len(insns) == 16 and insns[0] == (0xffffffff81000000, 'push', '%rbp'), f'parsed: {len(insns)} instructions')
called, ranges = rs.sites(insns, 'getrusage')
check(called == ['task_cputime_adjusted', 'thread_group_cputime_adjusted'], f'samplers: {called}')
# 0x16 is unreachable from anywhere (dead code): neither before nor after a return, not listed;
# a range ends one byte past its last instruction's start when nothing follows it (an interrupted
# address is an instruction's start)
want = [[0xffffffff8100000f, 0xffffffff81000016], [0xffffffff81000045, 0xffffffff8100004d]]
check(ranges == want, f'done ranges: {[[hex(a), hex(b)] for a, b in ranges]}')
check(not any(a <= 0xffffffff81000020 < b for a, b in ranges), 'the shared tail counts as before')
check(not any(a <= 0xffffffff81000040 < b for a, b in ranges), 'the call instruction counts as before')

# a back edge from after the call to the entry: the call's return block is still done, the
# blocks the entry reaches again are not
LOOP = GETRUSAGE.replace('ffffffff8100004c:\tjmp    ffffffff81000020 <getrusage+0x20>',
                         'ffffffff8100004c:\tjmp    ffffffff81000001 <getrusage+0x1>')
called, ranges = rs.sites(rs.parse(listing(LOOP), 'getrusage'), 'getrusage')
check(ranges == want, f'loop back to the entry: {[[hex(a), hex(b)] for a, b in ranges]}')

# an indirect jump (a jump table): its paths cannot be followed, the function is left out
IND = GETRUSAGE.replace('ffffffff81000008:\tjne    ffffffff81000020 <getrusage+0x20>',
                        'ffffffff81000008:\tjmp    *%rax')
check(rs.sites(rs.parse(listing(IND), 'getrusage'), 'getrusage') is None, 'indirect jump: None')

# no sampler call: nothing done
NONE = GETRUSAGE.replace('<thread_group_cputime_adjusted>', '<other>').replace('<task_cputime_adjusted>', '<other>')
called, ranges = rs.sites(rs.parse(listing(NONE), 'getrusage'), 'getrusage')
check(called == [] and ranges == [], f'no sampler: {called} {ranges}')

finish()
