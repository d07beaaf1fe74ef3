// The syscall numbers a perf trace's raw_syscalls carry for the CPU-time reads and the waits
// that reap a child, per ISA (arch/cpus.hpp's Isa; the same in 6.1 and 6.12). x86-64:
// arch/x86/entry/syscalls/syscall_64.tbl; PPC64: arch/powerpc/kernel/syscalls/syscall.tbl, its
// common/64 rows. PPC32 has none here: its clock_gettime (246) is the 32-bit time one and glibc
// reads clock_gettime64 (403), which the recorder does not decode.
#pragma once
#include <cstdint>
#include <optional>

#include "arch/cpus.hpp"

namespace kacct::arch {

struct SyscallNumbers {
  std::uint64_t read, pread64, getrusage, times, clock_gettime, wait4, waitid;
};
constexpr std::optional<SyscallNumbers> syscall_numbers(Isa isa) {
  switch (isa) {
    case Isa::X86_64: return SyscallNumbers{0, 17, 98, 100, 228, 61, 247};
    case Isa::PPC64: return SyscallNumbers{3, 179, 77, 43, 246, 114, 272};
    case Isa::PPC32: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace kacct::arch
