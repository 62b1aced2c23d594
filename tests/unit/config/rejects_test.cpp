// Every kind of bad value is rejected as a config error with a position and a caret, never a
// crash or a silent default: one row per mistake, checking the first line of the message.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/loader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

namespace fs = std::filesystem;

struct Row {
  std::string text;
  std::string first_line;  // after "path:line:col: error: "
};

class Rejects : public ::testing::TestWithParam<Row> {};

TEST_P(Rejects, WithAPositionedConfigError) {
  const Row& row = GetParam();
  auto c = load_config_text(row.text, kPath);
  ASSERT_FALSE(c) << "accepted:\n" << row.text;
  EXPECT_EQ(c.error().kind, ErrorKind::config);
  const std::string& m = c.error().message;
  ASSERT_EQ(m.rfind(kPath + ":", 0), 0u) << m;
  const std::size_t marker = m.find(": error: ");
  ASSERT_NE(marker, std::string::npos) << m;
  const std::size_t eol = m.find('\n', marker);
  EXPECT_EQ(m.substr(marker + 9, eol - marker - 9), row.first_line) << m;
  // Line 2 is the source line, line 3 the caret under the column.
  const std::size_t caret_line = m.find('\n', eol + 1);
  ASSERT_NE(caret_line, std::string::npos) << m;
  EXPECT_NE(m.find('^', caret_line), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(
    Config, Rejects,
    ::testing::Values(
        Row{"project = 3\n", "wrong type for 'project': expected a table, got an integer"},
        Row{kHead + "[project]\n",
            "TOML syntax: Error while parsing table header: cannot redefine existing table 'project'"},
        Row{"[project]\nname = 3\n", "wrong type for 'name': expected a string, got an integer"},
        Row{"[project]\nname = \"\"\n", "'name' must not be empty"},
        Row{kHead + "[project.x]\n", "unknown key 'x' in [project]"},
        Row{"[project]\nname = \"p\"\nframework = \"torch\"\n", "unknown framework 'torch'"},
        Row{"[project]\nname = \"p\"\nnumpy_bfloat16 = \"bf16\"\n", "unknown numpy_bfloat16 'bf16'"},
        Row{kHead + "[validation]\ndtypes = []\n", "'dtypes' must not be empty"},
        Row{kHead + "[validation]\ndtypes = [\"float32\", \"f32\"]\n", "'f32' is listed twice in 'dtypes'"},
        Row{kHead + "[validation]\ncheck_nan = 1\n",
            "wrong type for 'check_nan': expected a boolean (true or false), got an integer"},
        Row{kHead + "[validation]\nseed = 1.5\n",
            "wrong type for 'seed': expected an integer or a decimal string, got a float"},
        Row{kHead + "[validation]\nseed = \"12x\"\n",
            "'seed' string \"12x\" is not a decimal number from 0 to 18446744073709551615"},
        Row{kHead + "[validation]\ntimeout = 0\n", "'timeout' must be greater than 0"},
        Row{kHead + "[validation]\ntimeout = inf\n", "'timeout' must be a finite number"},
        // Values that would overflow a clock duration or a plan are refused at load (issue 20).
        Row{kHead + "[validation]\ntimeout = 1e300\n", "'timeout' is too large: 1e+300 seconds"},
        Row{kHead + "[validation]\ntimeout = 86400.5\n", "'timeout' is too large: 86400.5 seconds"},
        Row{kOp + "timeout = 1e19\n", "'timeout' is too large: 1e+19 seconds"},
        Row{kHead + "[validation]\nfuzz_iterations = 1000001\n", "'fuzz_iterations' is too large: 1000001"},
        Row{kHead + "[validation]\ntest_cases = 2147483647\n", "'test_cases' is too large: 2147483647"},
        Row{kHead + "[ci]\nquick_iterations = 99999999\n", "'quick_iterations' is too large: 99999999"},
        Row{kHead + "[validation]\npython = \"\"\n", "'python' must not be empty"},
        Row{kHead + "[validation]\npython_path = [\"nope\"]\n",
            "python_path directory not found: 'nope' (looked for " + (kProject / "nope").string() + ")"},
        Row{kHead + "[validation]\ntest_cases = 0\n", "'test_cases' must be at least 1, got 0"},
        Row{kHead + "[validation]\nworker_max_cases = 99999999999\n",
            "'worker_max_cases' is too large: 99999999999"},
        Row{kHead + "[validation]\ntolerances = 3\n",
            "wrong type for 'tolerances': expected a table, got an integer"},
        Row{kHead + "[validation.tolerances]\nfloat16 = 3\n",
            "wrong type for 'float16': expected a table { atol = ..., rtol = ... }, got an integer"},
        Row{kHead + "[validation.tolerances]\nfloat16 = { atol = -1 }\n", "'atol' must not be negative"},
        Row{kHead + "[validation.tolerances]\nfloat16 = { atl = 1 }\n",
            "unknown key 'atl' in [validation.tolerances] float16"},
        Row{kHead + "[validation.tolerances]\nfloat16 = { atol = nan }\n", "'atol' must be a finite number"},
        Row{kHead + "[validation.tolerances]\nfloat16 = {}\nfp16 = {}\n",
            "tolerance for float16 is given twice in [validation.tolerances]"},
        Row{"ops = 3\n" + kHead,
            "wrong type for 'ops': expected an array of tables ([[ops]]), got an integer"},
        Row{"ops = [1]\n" + kHead,
            "wrong type for 'ops': expected an array of tables ([[ops]]), got an integer"},
        Row{kHead + "[[ops]]\nreference = \"x\"\n", "[[ops]] has no 'name'"},
        Row{kOp + "module = \"kernels/matmul_op.py\"\n",
            "'module' must be a dotted Python module or \"package.module:function\", got "
            "'kernels/matmul_op.py'"},
        Row{kHead + "[[ops]]\nname = \"mm\"\nreference = \"a.b:c\"\nmodule = \"kernels/mm.py\"\n",
            "'module' must be a dotted Python module or \"package.module:function\", got 'kernels/mm.py'"},
        Row{kHead + "[[ops]]\nname = \"flash-attn\"\nreference = \"a.b:c\"\nmodule = \"pkg.ops\"\n",
            "op name 'flash-attn' is not a Python identifier, so it cannot name the function in 'pkg.ops'"},
        Row{kHead + "[[ops]]\nname = \"mm\"\nreference = \"pkg.mod:fn:x\"\n",
            "script not found: 'pkg.mod:fn:x' (looked for " + (kProject / "pkg.mod:fn:x").string() + ")"},
        Row{kHead + "[[ops]]\nname = \"mm\"\nreference = \"scripts\"\n",
            "script is not a regular file: 'scripts' (looked for " + (kProject / "scripts").string() + ")"},
        Row{kHead + "[[ops]]\nname = \"mm\"\nreference = \"\"\n", "'reference' must not be empty"},
        Row{kOp + "layouts = []\n", "'layouts' must not be empty"},
        Row{kOp + "timeout = -1\n", "'timeout' must be greater than 0"},
        Row{kOp + "kwargs = 3\n", "wrong type for 'kwargs': expected a table, got an integer"},
        Row{kOp + "input_names = []\n", "'input_names' must not be empty"},
        Row{kOp + "input_names = [\"a\", \"a\"]\n", "input 'a' is listed twice in 'input_names'"},
        Row{kOp + "input_names = [\"a\", \"c\"]\n[ops.schema]\ninputs = { a = [2] }\n",
            "input 'c' has no shape in [ops.schema] inputs"},
        Row{kOp + "[ops.schema]\ndims = { M = [1, 2] }\n", "[ops.schema] has no 'inputs'"},
        Row{kOp + "[ops.schema]\ninputs = { a = [2] }\nouput = [2]\n", "unknown key 'ouput' in [ops.schema]"},
        Row{kOp + "[ops.schema]\ndims = { M = 3 }\ninputs = { a = [\"M\"] }\n",
            "wrong type for dim 'M': expected a range [min, max] or a table { candidates = [...] }, got an "
            "integer"},
        Row{kOp + "[ops.schema]\ndims = { M = [1] }\ninputs = { a = [\"M\"] }\n",
            "dim 'M' must be a range [min, max] of two integers"},
        Row{kOp + "[ops.schema]\ndims = { M = [8, 2] }\ninputs = { a = [\"M\"] }\n",
            "bad range [8, 2] for dim 'M': need 0 <= min <= max"},
        Row{kOp + "[ops.schema]\ndims = { M = { candidates = [] } }\ninputs = { a = [\"M\"] }\n",
            "dim 'M' needs a non-empty candidates list"},
        Row{kOp + "[ops.schema]\ndims = { M = { candidate = [1] } }\ninputs = { a = [\"M\"] }\n",
            "unknown key 'candidate' in dim 'M'"},
        Row{kOp + "[ops.schema]\ninputs = { a = 3 }\n",
            "wrong type for 'a': expected an array of dim names or positive integers, got an integer"},
        Row{kOp + "[ops.schema]\ninputs = { a = [0] }\n",
            "a size in the shape of input 'a' must be a positive integer, got 0"},
        Row{kOp + "[ops.schema]\ninputs = { a = [true] }\n",
            "wrong type for 'a': expected an array of dim names or positive integers, got a boolean"},
        Row{kOp + "[ops.schema]\ninputs = { a = [2] }\noutput = [\"Q\"]\n",
            "dim 'Q' is used by the output but not declared in [ops.schema] dims"},
        Row{kOp + "[ops.schema]\ninputs = { a = [2] }\n[ops.inputs.a]\nshape = [2]\n",
            "input 'a' has its shape in [ops.schema] inputs"},
        Row{kOp + "[ops.inputs.x]\nshape = [\"M\"]\n", "dim names in 'shape' need an [ops.schema]"},
        Row{kOp + "[ops.inputs.x]\ndomain = [1]\n",
            "wrong type for 'domain': expected [lo, hi] or \"any\", got an array"},
        Row{kOp + "[ops.inputs.x]\ndomain = [2, 1]\n", "bad domain [2, 1]: need finite lo <= hi"},
        Row{kOp + "[ops.inputs.x]\ndomain = \"all\"\n", "unknown domain 'all'"},
        Row{kOp + "[ops.inputs.x]\ndtype = \"int65\"\n", "unknown dtype 'int65'"},
        Row{kOp + "[ops.inputs.x]\nrange = [0, 1]\n", "unknown key 'range' in [ops.inputs.x]"},
        Row{kOp + "inputs = { x = 3 }\n", "wrong type for input 'x': expected a table, got an integer"},
        Row{kHead + "[[kernels]]\nsource = \"kernels/matmul.ptx\"\n", "[[kernels]] has no 'name'"},
        Row{kHead + "[[kernels]]\nname = \"k\"\n", "[[kernels]] 'k' has no 'source'"},
        Row{kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\narch = \"ampere\"\n",
            "unknown arch 'ampere'"},
        Row{kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n[[kernels]]\nname = \"k\"\n"
                    "source = \"kernels/matmul.ptx\"\n",
            "duplicate kernel name 'k'"},
        Row{kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n[kernels.artifact_checks]\n"
                    "max_registers = 0\n",
            "'max_registers' must be at least 1, got 0"},
        Row{kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n[kernels.artifact_checks]\n"
                    "forbidden_instructions = [\"\"]\n",
            "instruction patterns must not be empty"},
        Row{kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n[kernels.artifact_checks]\n"
                    "max_regs = 3\n",
            "unknown key 'max_regs' in [kernels.artifact_checks]"},
        Row{kHead + "[policies]\nmax_error_growth = 1\n", "'max_error_growth' must be greater than 1"},
        Row{kHead + "[policies]\nwarn_threshold = -0.1\n",
            "'warn_threshold' must be between 0 and 1, got -0.1"},
        Row{kHead + "[policies.artifact_thresholds]\nregisters = \"x\"\n",
            "wrong type for 'registers': expected a number, got a string"},
        Row{kHead + "[policies.artifact_thresholds]\nregisters = -1\n", "'registers' must not be negative"},
        Row{kHead + "[ci]\nquick_dtypes = [\"fp8\"]\n", "unknown dtype 'fp8'"},
        Row{kHead + "[ci]\nthorough_timeout = 0\n", "'thorough_timeout' must be at least 1, got 0"},
        Row{"[project\n", "TOML syntax: Error while parsing table header: expected ']', saw '\\n'"}));

}  // namespace
}  // namespace gpuemu::config
