// The gpuemu binary: everything lives in the core libraries; main only hands over to the CLI
// (after telling malloc how gpuemu uses memory).
#include <malloc.h>

#include "cli/cli.hpp"

namespace {

// Every case allocates its tensors (up to tens of MiB each), frees them, and the next case asks
// for the same sizes again. glibc's defaults hand such blocks back to the kernel on free (mmap'd
// blocks, and a heap top over 128 KiB), so each case paid for zeroed pages to be faulted in anew:
// about a third of gpuemu's own time in a run of small ops (docs/performance.md, (i)). Keeping
// freed memory for reuse costs at most the largest case's footprint, which the run needed anyway.
void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's ceiling for this setting
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  return gpuemu::cli::run(argc, argv);
}
