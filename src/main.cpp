// The gpuemu binary: everything lives in the core libraries; main only hands over to the CLI
// (after telling malloc how gpuemu uses memory).
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif

#include "cli/cli.hpp"

namespace {

// Every case allocates its tensors (up to tens of MiB each), frees them, and the next case asks
// for the same sizes again. glibc's defaults hand such blocks back to the kernel on free (mmap'd
// blocks, and a heap top over 128 KiB), so each case paid for zeroed pages to be faulted in anew:
// about half of the gpuemu process's CPU time in a run of small ops, and 83% fewer faults with
// this (docs/performance.md, (i)). Keeping freed memory costs at most the largest case's
// footprint, which the run needed anyway.
void keep_freed_memory_for_reuse() {
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)  // glibc; other C libraries keep theirs
  mallopt(M_MMAP_THRESHOLD, 32 << 20);                      // glibc's ceiling for this setting
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  return gpuemu::cli::run(argc, argv);
}
