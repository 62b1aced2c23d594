// The CUDA tools lint uses when present (nvcc, ptxas, cuobjdump, nvdisasm), how they are found,
// how they are run (with timeouts), and the parsers of what they print.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace gpuemu::artifact {

namespace fs = std::filesystem;

// Where each tool was found; unset = not available. Found, in order: $GPUEMU_NVCC,
// $GPUEMU_PTXAS, $GPUEMU_CUOBJDUMP, $GPUEMU_NVDISASM (the value "none" hides the tool), PATH,
// $CUDA_HOME/bin, /usr/local/cuda/bin, then the pip wheels' site-packages/nvidia/*/bin.
struct Toolchain {
  std::optional<fs::path> nvcc, ptxas, cuobjdump, nvdisasm;

  // Errors (environment) only when a GPUEMU_* variable names a file that is not executable.
  static Expected<Toolchain> discover();
  nlohmann::json to_json() const;
};

// "python3 -m pip install nvidia-cuda-nvcc (or set GPUEMU_PTXAS)" for "ptxas".
std::string install_hint(std::string_view tool);

// What ptxas -v says about one function.
struct PtxasFunctionInfo {
  std::optional<std::int64_t> registers, stack_frame, spill_stores, spill_loads, shared, constant, barriers,
      lmem;
};
std::map<std::string, PtxasFunctionInfo> parse_ptxas_info(std::string_view text);

// One function of a cubin's SASS (cuobjdump -sass -res-usage, or nvdisasm -c).
struct SassFunction {
  std::string name;
  std::vector<std::string> opcodes;  // "LDG.E", "BAR.SYNC.DEFER_BLOCKING"; alignment padding removed
  std::optional<std::int64_t> registers, stack, shared, local, constant;
};
std::map<std::string, SassFunction> parse_sass(std::string_view text);

// Why `source` cannot be built into an artifact on this machine (a .cu file without nvcc), naming
// the missing tool and how to get it; nullopt when it can. `ci run` skips such a kernel with a warning.
std::optional<std::string> missing_tool_for(const Toolchain& tools, const fs::path& source);

// PTX text from a .cu file: nvcc -ptx -arch=ARCH -lineinfo. Errors name the file and the fix.
Expected<std::string> compile_cu(const Toolchain& tools, const fs::path& cu, std::string_view arch);

// ptxas -v on a PTX file for `arch` ("compute_80" is assembled for sm_80), writing `cubin`.
// Returns ptxas's report (its stdout and stderr).
Expected<std::string> assemble_ptx(const Toolchain& tools, const fs::path& ptx, std::string_view arch,
                                   const fs::path& cubin);

// SASS and resource usage of a cubin, from cuobjdump (preferred) or nvdisasm.
Expected<std::string> disassemble(const Toolchain& tools, const fs::path& cubin);

// A fresh private temporary directory, removed with the object.
class TempDir {
 public:
  static Expected<TempDir> create();
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(fs::path path) : path_(std::move(path)) {}
  fs::path path_;
};

}  // namespace gpuemu::artifact
