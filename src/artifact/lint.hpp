// The kernel lint: builds a kernel's artifacts (PTX, ptxas report, SASS) from a .ptx, .cu or
// .cubin source, measures it, and applies the [kernels.artifact_checks] of gpuemu.toml.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "artifact/metrics.hpp"
#include "artifact/ptx.hpp"
#include "artifact/toolchain.hpp"
#include "config/config.hpp"

namespace gpuemu::artifact {

// One failed check. `file`/`line` point at the offending instruction when there is one (the
// CUDA source line through .loc when known, else the PTX line), else at the kernel.
struct Violation {
  std::string
      check;  // "max_registers", "max_spills", "max_local_memory_bytes", "forbidden_instructions", ...
  std::string message;  // says the limit, the value, where it came from and what to do
  std::optional<std::int64_t> limit, actual;
  std::string from;  // origin of the metric: "ptx", "ptxas", "sass"
  fs::path file;
  int line = 0;
};

struct KernelReport {
  std::string name;   // as configured, or the entry's name when linting a file
  std::string entry;  // the PTX/SASS function it resolved to
  fs::path source;
  std::string arch;
  fs::path file;  // where the kernel is defined (for SARIF): the PTX file or the CUDA source
  int line = 0;
  Metrics metrics;
  std::vector<Violation> violations;
  std::vector<std::string> notes;  // checks not evaluated and why, estimates used
  bool passed() const { return violations.empty(); }
};

// Everything known about one source file compiled for one arch.
struct Artifact {
  fs::path source;
  std::string arch;
  std::optional<PtxModule> ptx;                    // unset for a cubin
  std::map<std::string, PtxasFunctionInfo> ptxas;  // empty without ptxas
  std::map<std::string, SassFunction> sass;        // empty without cuobjdump/nvdisasm
  bool has_ptxas = false, has_sass = false;
  std::vector<std::string> notes;            // missing tools and what they would add
  std::vector<std::string> kernels() const;  // entry names (cubin: SASS function names)
};

class Linter {
 public:
  explicit Linter(Toolchain tools) : tools_(std::move(tools)) {}

  // Lints one [[kernels]] entry. Errors (config) for an unreadable or malformed source, a kernel
  // name the file does not define, or a malformed instruction pattern.
  Expected<KernelReport> lint_kernel(const config::KernelConfig& kernel);
  // Lints every kernel of a file (or only `only`) with default checks. An empty arch means the
  // PTX .target when it names an sm_ arch, else sm_80.
  Expected<std::vector<KernelReport>> lint_file(const fs::path& file, std::string arch,
                                                const std::optional<std::string>& only,
                                                const config::ArtifactChecks& checks = {});

  // Lints the config's [[kernels]] (only the one named `only`, if given; an unknown name is a
  // usage error with a suggestion). `arch` overrides each kernel's arch when not empty.
  Expected<std::vector<KernelReport>> lint_config(const config::Config& config,
                                                  const std::optional<std::string>& only,
                                                  const std::string& arch = "");

  const Toolchain& tools() const { return tools_; }

 private:
  Expected<const Artifact*> artifact(const fs::path& source, const std::string& arch);
  Toolchain tools_;
  std::map<std::pair<fs::path, std::string>, Artifact> cache_;
};

// Builds the artifacts of one source (see Artifact); exposed for tests.
Expected<Artifact> build_artifact(const Toolchain& tools, const fs::path& source, std::string arch);

// Measures one kernel of an artifact and applies the checks.
Expected<KernelReport> evaluate(const Artifact& artifact, const std::string& entry,
                                const config::ArtifactChecks& checks);

// The entry of `names` a configured kernel name refers to: the exact name, else the one whose
// C++ (Itanium-mangled) function name is `name`. nullopt when none or several match.
std::optional<std::string> resolve_kernel_name(std::string_view name, const std::vector<std::string>& names);

// {"name", "entry", "source", "arch", "file", "line", "metrics", "violations", "notes", "passed"};
// paths are made relative to `root` when they are inside it.
nlohmann::json report_to_json(const KernelReport& report, const fs::path& root);

}  // namespace gpuemu::artifact
