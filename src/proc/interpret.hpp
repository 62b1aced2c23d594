// Whether an op's Triton or Pallas kernels run under their CPU interpreter (docs/frameworks.md):
// `always` and `never` as written, `auto` = the interpreter unless the framework sees a GPU.
#pragma once

#include <string>

#include "config/vocabulary.hpp"

namespace gpuemu::proc {

enum class KernelLanguage { triton, pallas };

// Resolves `mode` for `language`. For `auto` on a machine with no GPU device node (/dev/nvidia*,
// /dev/kfd, and for Pallas /dev/accel*) the answer is the interpreter at no cost; otherwise
// `python` is asked once per process whether torch (Triton) or JAX (Pallas) sees an
// accelerator, and a Python without the framework counts as no GPU.
bool runs_interpreted(config::InterpretMode mode, KernelLanguage language, const std::string& python);

}  // namespace gpuemu::proc
