// The table of every gpuemu.toml key (key_table.hpp). To add a key: a row here, its read in the
// section's parser (the file each group names), a line in docs/configuration.md, and the key set in
// tests/fixtures/config/every_key/gpuemu.toml; tests/unit/config/key_table_test.cpp checks the rest.
#include "config/key_table.hpp"

#include <array>

#include <fmt/format.h>

#include "config/config_json.hpp"

namespace gpuemu::config {
namespace {

using nlohmann::json;

const std::array kRows = {
    // The top-level tables (loader.cpp).
    KeyRow{"", "project", "table", "", "name, version, framework of the project"},
    KeyRow{"", "validation", "table", "", "defaults of every op and the run"},
    KeyRow{"", "ops", "array of tables", "", "one table per op spec"},
    KeyRow{"", "kernels", "array of tables", "", "compiled kernels for the artifact lint"},
    KeyRow{"", "policies", "table", "", "regression and warning policy"},
    KeyRow{"", "ci", "table", "", "settings of gpuemu ci run"},

    // [project] (parse_globals.cpp)
    KeyRow{"project", "name", "string", "", "project name, used in reports",
           [](const Config& c) -> json { return c.project.name; }},
    KeyRow{"project", "version", "string", "\"0.0.0\"", "informational",
           [](const Config& c) -> json { return c.project.version; }},
    KeyRow{"project", "framework", "string", "\"pytorch\"",
           "the tensors every op's callable receives, when written",
           [](const Config& c) -> json { return c.project.framework; }},
    KeyRow{
        "project", "numpy_bfloat16", "string", "\"ml_dtypes\"",
        "how a numpy callable receives bfloat16: ml_dtypes or float32",
        [](const Config& c) -> json { return std::string(numpy_bfloat16_name(c.project.numpy_bfloat16)); }},

    // [validation] (parse_globals.cpp)
    KeyRow{"validation", "dtypes", "array of strings", "[\"float32\"]", "dtypes each op is tested at",
           [](const Config& c) -> json { return dtypes_json(c.validation.dtypes); }},
    KeyRow{"validation", "check_nan", "bool", "true", "a NaN reference needs a NaN output",
           [](const Config& c) -> json { return c.validation.check_nan; }},
    KeyRow{"validation", "check_inf", "bool", "true", "an infinite reference needs the same infinity",
           [](const Config& c) -> json { return c.validation.check_inf; }},
    KeyRow{"validation", "seed", "integer ≥ 0, or decimal string", "0",
           "master seed; 0: a random one per run",
           [](const Config& c) -> json { return std::to_string(c.validation.seed); }},
    KeyRow{"validation", "tolerances", "table", "", "per-dtype { atol, rtol }",
           [](const Config& c) -> json { return tolerances_json(c.validation.tolerances); }},
    KeyRow{"validation", "timeout", "number in (0, 86400]", "60", "seconds per case",
           [](const Config& c) -> json { return c.validation.timeout; }},
    KeyRow{"validation", "python", "string", "\"python3\"", "interpreter for scripts and workers",
           // A path was resolved against its file; a bare name stays a name.
           [](const Config& c) -> json {
             return fs::path(c.validation.python).is_absolute() ? root_relative(c.validation.python, c.root)
                                                                : c.validation.python;
           }},
    KeyRow{"validation", "python_path", "array of strings", "[]", "directories added to sys.path",
           [](const Config& c) -> json {
             json out = json::array();
             for (const fs::path& p : c.validation.python_path) out.push_back(root_relative(p, c.root));
             return out;
           }},
    KeyRow{"validation", "test_cases", "integer 1 – 1,000,000", "4", "cases per (op, dtype) for gpuemu test",
           [](const Config& c) -> json { return c.validation.test_cases; }},
    KeyRow{"validation", "fuzz_iterations", "integer 1 – 1,000,000", "100",
           "default --iterations of gpuemu fuzz",
           [](const Config& c) -> json { return c.validation.fuzz_iterations; }},
    KeyRow{"validation", "worker_max_cases", "integer ≥ 1", "1000", "cases before a warm worker is restarted",
           [](const Config& c) -> json { return c.validation.worker_max_cases; }},
    KeyRow{"validation", "max_case_elements", "integer ≥ 1", "67108864", "the most elements of one case",
           [](const Config& c) -> json { return c.validation.max_case_elements; }},
    KeyRow{"validation", "max_case_bytes", "integer ≥ 1", "1073741824", "the most bytes of one case",
           [](const Config& c) -> json { return c.validation.max_case_bytes; }},
    KeyRow{"validation", "triton_interpret", "string", "\"auto\"",
           "the ops' default for the Triton interpreter: auto, always, never",
           [](const Config& c) -> json {
             return std::string(interpret_mode_name(c.validation.triton_interpret));
           }},
    KeyRow{"validation", "pallas_interpret", "string", "\"auto\"",
           "the ops' default for Pallas interpret=: auto, always, never",
           [](const Config& c) -> json {
             return std::string(interpret_mode_name(c.validation.pallas_interpret));
           }},
    // Not in the digest: it came after digests were stored, and it changes checks, not results.
    KeyRow{"validation", "sanitize", "bool", "true", "the ops' default for the Triton sanitizer"},

    // [validation.tolerances.DTYPE], also [ops.tolerances.DTYPE] (value_parsers.cpp)
    KeyRow{"validation.tolerances.DTYPE", "atol", "number ≥ 0", "", "absolute tolerance"},
    KeyRow{"validation.tolerances.DTYPE", "rtol", "number ≥ 0", "", "relative tolerance"},

    // [[ops]] (parse_ops.cpp); the digest writes each op whole (config_json.cpp).
    KeyRow{"ops", "name", "string", "", "unique op name"},
    KeyRow{"ops", "extends", "string", "", "the op this one inherits from"},
    KeyRow{"ops", "implementations", "array", "", "the kernels of this op spec"},
    KeyRow{"ops", "module", "string", "", "the op under test as a Python callable"},
    KeyRow{"ops", "reference", "string", "", "the high-precision reference"},
    KeyRow{"ops", "op_script", "string", "", "the op under test"},
    KeyRow{"ops", "input_names", "array of strings", "", "order of the inputs"},
    KeyRow{"ops", "execution_mode", "string", "\"script_based\"", "who runs the op and makes the inputs"},
    KeyRow{"ops", "dtypes", "array of strings", "", "dtypes this op is tested at"},
    KeyRow{"ops", "tolerances", "table", "", "per-dtype { atol, rtol } overrides"},
    KeyRow{"ops", "invariants", "array of strings", "[]", "extra checks on the output"},
    KeyRow{"ops", "persistent", "bool", "false", "scripts of this op opt in to warm mode"},
    KeyRow{"ops", "timeout", "number in (0, 86400]", "", "seconds per case for this op"},
    KeyRow{"ops", "source", "string", "", "where the kernel lives, for reports"},
    KeyRow{"ops", "layouts", "array of strings", "[\"contiguous\"]", "memory layouts the op accepts"},
    KeyRow{"ops", "kwargs", "table", "{}", "passed as JSON kwargs to op and reference"},
    KeyRow{"ops", "schema", "table", "", "symbolic shapes"},
    KeyRow{"ops", "inputs", "table of tables", "", "per-input settings"},
    KeyRow{"ops", "framework", "string", "", "the tensors this op's callable receives"},
    KeyRow{"ops", "reference_framework", "string", "\"numpy\"", "the tensors the reference receives"},
    KeyRow{"ops", "triton_interpret", "string", "", "the Triton interpreter for this op"},
    KeyRow{"ops", "pallas_interpret", "string", "", "Pallas interpret= for this op"},
    KeyRow{"ops", "interpreter_cuda_shim", "bool", "false",
           "torch.cuda device queries answer as one CPU device under the interpreter"},
    KeyRow{"ops", "sanitize", "bool", "", "the Triton sanitizer in this op's worker"},
    KeyRow{"ops", "require_launch", "bool", "true",
           "under the Triton interpreter, a call that launches no @triton.jit kernel fails "
           "(kernel_not_launched)"},

    // One table of an op's `implementations` (parse_ops.cpp)
    KeyRow{"ops.implementations", "name", "string", "", "the implementation's name in results"},
    KeyRow{"ops.implementations", "op_script", "string", "", "what runs"},
    KeyRow{"ops.implementations", "source", "string", "", "where this implementation lives"},

    // [ops.schema] and its dims (parse_inputs.cpp)
    KeyRow{"ops.schema", "dims", "table", "", "NAME = [min, max] or { candidates = [...] }"},
    KeyRow{"ops.schema", "tiles", "table", "",
           "NAME = size or [sizes]: the dim's tile sizes; corner cases put it at each boundary ± 1"},
    KeyRow{"ops.schema", "inputs", "table", "", "NAME = [dim, ...] for each input"},
    KeyRow{"ops.schema", "output", "array", "", "the declared output shape"},
    KeyRow{"ops.schema.dims.NAME", "candidates", "array of positive integers", "",
           "the sizes a dim picks from"},

    // [ops.inputs.NAME] (parse_inputs.cpp)
    KeyRow{"ops.inputs.NAME", "domain", "[lo, hi] or \"any\"", "[-1, 1]", "values the kernel must support"},
    KeyRow{"ops.inputs.NAME", "dtype", "string", "", "a fixed dtype for this input"},
    KeyRow{"ops.inputs.NAME", "shape", "array of positive integers", "[4, 64]",
           "the shape, for ops without a schema"},

    // [[kernels]] (parse_kernels.cpp)
    KeyRow{"kernels", "name", "string", "", "unique kernel name"},
    KeyRow{"kernels", "source", "string", "", "a .ptx, .cu or .cubin file"},
    KeyRow{"kernels", "reference", "string", "\"\"",
           "informational: a script that exists, or module:function"},
    KeyRow{"kernels", "arch", "string", "\"sm_80\"", "target for ptxas"},
    KeyRow{"kernels", "artifact_checks", "table", "", "limits the lint enforces"},
    KeyRow{"kernels.artifact_checks", "max_registers", "integer ≥ 1", "128", "registers per thread"},
    KeyRow{"kernels.artifact_checks", "max_spills", "integer ≥ 0", "0", "spill stores plus loads"},
    KeyRow{"kernels.artifact_checks", "max_local_memory_bytes", "integer ≥ 0", "0", "local (stack) memory"},
    KeyRow{"kernels.artifact_checks", "forbidden_instructions", "array of strings", "[]",
           "instruction patterns that must not appear"},
    KeyRow{"kernels.artifact_checks", "required_instructions", "array of strings", "[]",
           "instruction patterns that must appear"},

    // [policies] (parse_globals.cpp)
    KeyRow{"policies", "fail_on_regression", "bool", "true", "a regression makes the run exit 1",
           [](const Config& c) -> json { return c.policies.fail_on_regression; }},
    KeyRow{"policies", "warn_threshold", "number in [0, 1]", "0.8", "warn above this share of the tolerance",
           [](const Config& c) -> json { return c.policies.warn_threshold; }},
    KeyRow{"policies", "max_error_growth", "number > 1", "2.0", "max error growth factor of a regression",
           [](const Config& c) -> json { return c.policies.max_error_growth; }},
    KeyRow{"policies", "regression_margin", "number in (0, 1]", "0.5",
           "tolerance share growth of a regression",
           [](const Config& c) -> json { return c.policies.regression_margin; }},
    KeyRow{"policies", "artifact_thresholds", "table of numbers ≥ 0", "{}",
           "kernel metric -> allowed growth factor",
           [](const Config& c) -> json { return c.policies.artifact_thresholds; }},

    // [ci] (parse_globals.cpp)
    KeyRow{"ci", "quick_dtypes", "array of strings", "[\"float32\"]", "dtypes of gpuemu ci run --quick",
           [](const Config& c) -> json { return dtypes_json(c.ci.quick_dtypes); }},
    KeyRow{"ci", "thorough_timeout", "integer ≥ 1", "300", "seconds a ci run or test run may take",
           [](const Config& c) -> json { return c.ci.thorough_timeout; }},
    KeyRow{"ci", "parallel_jobs", "integer ≥ 1", "1", "ops validated in parallel",
           [](const Config& c) -> json { return c.ci.parallel_jobs; }},
    KeyRow{"ci", "quick_iterations", "integer 1 – 1,000,000", "20", "fuzz iterations per op in quick mode",
           [](const Config& c) -> json { return c.ci.quick_iterations; }},
    KeyRow{"ci", "fuzz_iterations", "integer 1 – 1,000,000", "100", "fuzz iterations per op in a full CI run",
           [](const Config& c) -> json { return c.ci.fuzz_iterations; }},
};

// A TOML default as a Python literal: the defaults are numbers, strings, arrays of those and {}.
std::string python_literal(std::string_view toml) {
  if (toml.empty()) return "None";
  if (toml == "true") return "True";
  if (toml == "false") return "False";
  return std::string(toml);
}

}  // namespace

const std::span<const KeyRow> kKeyTable = kRows;

std::vector<std::string_view> keys_of(std::string_view section) {
  std::vector<std::string_view> keys;
  for (const KeyRow& row : kKeyTable) {
    if (row.section == section) keys.push_back(row.key);
  }
  return keys;
}

std::string python_keys_module() {
  std::string out =
      "# Generated from src/config/key_table.cpp by scripts/gen-config-keys.sh: edit the table, not this "
      "file.\n"
      "\"\"\"Every gpuemu.toml key as (section, key): its default as Python reads it (None: no literal "
      "default).\"\"\"\n"
      "\n"
      "DEFAULTS = {\n";
  for (const KeyRow& row : kKeyTable) {
    out +=
        fmt::format("    (\"{}\", \"{}\"): {},\n", row.section, row.key, python_literal(row.default_value));
  }
  out += "}\n";
  return out;
}

}  // namespace gpuemu::config
