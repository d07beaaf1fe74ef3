// Included by every libFuzzer target: keeps glibc's heap from going back to the kernel between
// executions. Each input allocates and frees its trace, program and results; with glibc's
// defaults the freed top of the heap was trimmed (brk) and the next input faulted it back in:
// 9-12% of fuzz_native's, fuzz_perfvtime's and fuzz_tracemut's CPU time on the plain build
// (perf record, docs/fuzzing.md). ASan's allocator ignores mallopt.
#pragma once
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kacct::fuzz {

inline const bool heap_kept = [] {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // blocks up to 32 MB from the heap, not mmap/munmap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // never shrink the heap under 1 GB of free top
#endif
  return true;
}();

}  // namespace kacct::fuzz
