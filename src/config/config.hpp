// The gpuemu.toml model after merging the three files (project, user, daemon) and resolving
// paths against the file that named them. Parsing and diagnostics live in config/loader.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "check/compare.hpp"
#include "check/tolerance.hpp"
#include "config/vocabulary.hpp"
#include "rng/values.hpp"
#include "tensor/dtype.hpp"
#include "tensor/tensor.hpp"

namespace gpuemu::config {

namespace fs = std::filesystem;

// Shape of an input of an op that has no [ops.schema] and declares no `shape` (docs/configuration.md).
inline const std::vector<std::int64_t> kDefaultInputShape = {4, 64};

// A diagnostic (docs/configuration.md, "Diagnostics") at a place remembered from load time, for
// checks that run after loading (e.g. a callable that does not import): config error, exit 2.
std::string diagnostic_at(const SourceLocation& where, std::string_view message, std::string_view hint = {});

// A dimension in a schema: a [min, max] range or a list of candidates.
struct DimSpec {
  std::string name;
  std::int64_t min = 1;
  std::int64_t max = 1;
  std::vector<std::int64_t> candidates;  // non-empty means candidates, not a range
  // [ops.schema] tiles: the block sizes a kernel cuts this dim into; the corner cases put the dim at
  // each tile's boundary and its neighbours (fuzz/corners.hpp). Empty: none declared.
  std::vector<std::int64_t> tiles;
};

// A dimension reference in an input's shape: a schema dim name or a literal size.
using DimRef = std::variant<std::string, std::int64_t>;

struct OpSchema {
  std::vector<DimSpec> dims;                                        // in file order
  std::vector<std::pair<std::string, std::vector<DimRef>>> inputs;  // in file order
  std::vector<DimRef> output;                                       // optional declared output shape
};

// After loading, OpConfig::inputs has one InputSpec per name in input_names. For ops without a
// schema `shape` is filled in (declared, else kDefaultInputShape); with a schema it stays empty.
struct InputSpec {
  std::string name;
  rng::Domain domain;                  // default [-1, 1]
  std::optional<tensor::DType> dtype;  // fixed dtype, e.g. int64 indices
  std::vector<DimRef> shape;           // for ops without a schema; empty = default shape
  bool shape_defaulted = false;        // `shape` is kDefaultInputShape: none was declared
};

// One @triton.autotune config an op is tested at (docs/configuration.md, "Autotuned kernels"):
// engine::expand_autotune_variants makes one op per config, named "OF[CONFIG]" from this
// (engine::variant_name), whose op worker pins CONFIG.
struct AutotuneVariant {
  std::string of;      // the name of the op it is a variant of: "softmax", "softmax/v2"
  std::string config;  // "BLOCK=64,num_warps=4"; with several autotuned kernels "k1:label;k2:label"
};

// One [[ops]] table, or one implementation of it (docs/configuration.md, "One op, many
// implementations"): an op with `implementations = [...]` becomes one OpConfig per entry, named
// "<op>/<implementation>", sharing everything else the op declares.
struct OpConfig {
  std::string name;            // unique: "softmax", or "softmax/v2_tail_bug" for an implementation
  std::string spec;            // the [[ops]] name ("softmax"); equals `name` without implementations
  std::string implementation;  // "v2_tail_bug", or "" for an op without implementations
  std::optional<AutotuneVariant> autotune;  // set on an autotune variant: its name is rendered from it
  std::string extends;         // the op this one inherits from, or ""
  std::string module;          // informational dotted module path (seed docs)
  Runnable reference;
  Runnable op_script;                    // the kernel under test
  std::vector<std::string> input_names;  // order of inputs; derived from schema when absent
  ExecutionMode execution_mode = ExecutionMode::script_based;
  std::vector<tensor::DType> dtypes;                         // defaults to [validation].dtypes
  std::map<tensor::DType, check::ToleranceSpec> tolerances;  // overrides only
  std::vector<check::Invariant> invariants;
  std::optional<OpSchema> schema;
  std::map<std::string, InputSpec> inputs;
  std::vector<tensor::Layout> layouts = {tensor::Layout::contiguous};
  nlohmann::json kwargs = nlohmann::json::object();  // [ops.kwargs], passed to both scripts
  std::optional<double> timeout_secs;                // per-case; defaults to [validation].timeout
  std::string source;                                // "kernels/softmax.cu:42" or a path, for reports
  bool persistent = false;  // scripts of this op opt in to warm mode (also on the Runnables)
  // What the op's callable receives: its own `framework`, else a written [project] framework,
  // else numpy (docs/configuration.md, "Frameworks"). The reference gets reference_framework.
  Framework framework = Framework::numpy;
  bool framework_written = false;  // this op (or the op it extends) wrote `framework`
  Framework reference_framework = Framework::numpy;
  InterpretMode triton_interpret = InterpretMode::automatic;  // defaults to [validation]'s
  InterpretMode pallas_interpret = InterpretMode::automatic;  // defaults to [validation]'s
  // torch.cuda device queries in the op's own Python answer as one CPU device under the Triton
  // interpreter, instead of failing as interpreter_unsupported (docs/frameworks.md).
  bool interpreter_cuda_shim = false;
  // The Triton sanitizer in the op's worker when its kernels run under the interpreter
  // (docs/frameworks.md, "The sanitizer"); defaults to [validation]'s.
  bool sanitize = true;
  // Under the Triton interpreter, a call of the op that launches no @triton.jit kernel fails as
  // kernel_not_launched; false accepts it with a note (docs/frameworks.md, "Launches").
  bool require_launch = true;
  SourceLocation location;  // of the [[ops]] table
};

struct ArtifactChecks {
  std::int64_t max_registers = 128;
  std::int64_t max_spills = 0;
  std::int64_t max_local_memory_bytes = 0;
  std::vector<std::string> forbidden_instructions;
  std::vector<std::string> required_instructions;
};

struct KernelConfig {
  std::string name;
  fs::path source;        // absolute
  std::string reference;  // as written: a script path or module:function (informational for lint)
  std::string arch = "sm_80";
  ArtifactChecks artifact_checks;
  SourceLocation location;
};

struct ProjectConfig {
  std::string name;
  std::string version = "0.0.0";
  std::string framework = "pytorch";  // the seed's default; applies to ops only when written
  bool framework_written = false;     // some config file set [project] framework
  // Absent means ml_dtypes, the default; `gpuemu init` writes it out so a config says
  // which form its numpy code expects (docs/configuration.md, "numpy and bfloat16").
  NumpyBfloat16 numpy_bfloat16 = NumpyBfloat16::ml_dtypes;
};

struct ValidationConfig {
  std::vector<tensor::DType> dtypes = {tensor::DType::float32};
  bool check_nan = true;
  bool check_inf = true;
  std::uint64_t seed = 0;  // 0 = a random master seed per run (printed so it can be replayed)
  std::map<tensor::DType, check::ToleranceSpec> tolerances;  // overrides of the built-in defaults
  double timeout = 60.0;                                     // seconds per script invocation
  std::string python = "python3";     // interpreter for scripts and workers; GPUEMU_PYTHON overrides
  std::vector<fs::path> python_path;  // extra sys.path entries for module:function callables
  int test_cases = 4;                 // cases per (op, dtype) for `gpuemu test`
  int fuzz_iterations = 100;          // default --iterations for `gpuemu fuzz`
  int worker_max_cases = 1000;        // warm workers are recycled after this many cases
  // One case's tensors as full views (a zero stride counts as the whole view): 64 Mi elements,
  // 1 GiB. Checked before anything is allocated (config/case_limits.hpp).
  std::int64_t max_case_elements = std::int64_t{1} << 26;
  std::int64_t max_case_bytes = std::int64_t{1} << 30;
  InterpretMode triton_interpret = InterpretMode::automatic;  // the ops' default
  InterpretMode pallas_interpret = InterpretMode::automatic;  // the ops' default
  bool sanitize = true;                                       // the ops' default
};

struct PolicyConfig {
  bool fail_on_regression = true;
  double warn_threshold = 0.8;
  // A passing (op, dtype) regresses on error growth only when its max_abs grew by more than
  // max_error_growth AND its share of the tolerance grew by more than regression_margin (of the
  // whole budget): seed-to-seed noise of a correct kernel moves the ratio a lot, the budget share little.
  double max_error_growth = 2.0;
  double regression_margin = 0.5;
  std::map<std::string, double> artifact_thresholds;  // metric -> allowed growth (lint issue)
};

struct CiConfig {
  std::vector<tensor::DType> quick_dtypes = {tensor::DType::float32};
  int thorough_timeout = 300;
  int parallel_jobs = 1;
  int quick_iterations = 20;
  int fuzz_iterations = 100;
};

struct Config {
  ProjectConfig project;
  ValidationConfig validation;
  std::vector<OpConfig> ops;
  std::vector<KernelConfig> kernels;
  PolicyConfig policies;
  CiConfig ci;

  fs::path project_file;  // absolute path of the gpuemu.toml that was loaded
  fs::path root;          // its directory: the project root for relative paths in reports
  std::string digest;     // hex SHA-256 of the merged, normalised config (replay checks it)

  const OpConfig* find_op(std::string_view name) const;
  // Tolerance for an op at a dtype: op override, else [validation.tolerances], else the default.
  check::ToleranceSpec tolerance_for(const OpConfig& op, tensor::DType dtype) const;
};

}  // namespace gpuemu::config
