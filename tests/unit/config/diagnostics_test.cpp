// Whole-message tests for config diagnostics, which must let a person act without opening the file:
// position, the quoted line, the caret and the hint, for each kind of mistake made in gpuemu.toml.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/diagnostic.hpp"
#include "config/loader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

namespace fs = std::filesystem;

TEST(ConfigDiagnostics, UnknownKeyWithSuggestion) {
  EXPECT_EQ(error_of(kHead + "[validation]\ndtyeps = [\"float32\"]\n"),
            kPath +
                ":4:1: error: unknown key 'dtyeps' in [validation]\n"
                "dtyeps = [\"float32\"]\n"
                "^\n"
                "hint: did you mean 'dtypes'?");
}

TEST(ConfigDiagnostics, UnknownKeyListsTheAllowedOnes) {
  EXPECT_EQ(
      error_of(kHead + "[ci]\n  budget = 3\n"),
      kPath +
          ":4:3: error: unknown key 'budget' in [ci]\n"
          "  budget = 3\n"
          "  ^\n"
          "hint: allowed keys are 'quick_dtypes', 'thorough_timeout', 'parallel_jobs', 'quick_iterations' "
          "or 'fuzz_iterations'");
}

TEST(ConfigDiagnostics, UnknownKeyInAnOp) {
  EXPECT_EQ(error_of(kHead + "[[ops]]\nname = \"relu\"\nrefrence = \"scripts/matmul_ref.py\"\n"),
            kPath +
                ":5:1: error: unknown key 'refrence' in [[ops]] 'relu'\n"
                "refrence = \"scripts/matmul_ref.py\"\n"
                "^\n"
                "hint: did you mean 'reference'?");
}

TEST(ConfigDiagnostics, UnknownTopLevelSection) {
  EXPECT_EQ(error_of(kHead + "[valdation]\nseed = 1\n"),
            kPath +
                ":3:2: error: unknown key 'valdation' in the top level\n"
                "[valdation]\n"
                " ^\n"
                "hint: did you mean 'validation'?");
}

TEST(ConfigDiagnostics, WrongTypeNamesBothTypes) {
  EXPECT_EQ(error_of(kHead + "[validation]\ndtypes = 3\n"),
            kPath +
                ":4:10: error: wrong type for 'dtypes': expected an array of strings, got an integer\n"
                "dtypes = 3\n"
                "         ^");
  EXPECT_EQ(error_of(kHead + "[validation]\ndtypes = [\"float32\", 16]\n"),
            kPath +
                ":4:22: error: wrong type for 'dtypes': expected an array of strings, got an integer\n"
                "dtypes = [\"float32\", 16]\n"
                "                     ^");
  EXPECT_EQ(error_of(kHead + "[ci]\nparallel_jobs = \"4\"\n"),
            kPath +
                ":4:17: error: wrong type for 'parallel_jobs': expected an integer, got a string\n"
                "parallel_jobs = \"4\"\n"
                "                ^");
}

TEST(ConfigDiagnostics, UnknownDtype) {
  EXPECT_EQ(error_of(kHead + "[validation]\ndtypes = [\"float32\", \"flaot16\"]\n"),
            kPath +
                ":4:22: error: unknown dtype 'flaot16'\n"
                "dtypes = [\"float32\", \"flaot16\"]\n"
                "                     ^\n"
                "hint: did you mean 'float16'?");
}

TEST(ConfigDiagnostics, UnknownDtypeInTolerances) {
  EXPECT_EQ(error_of(kHead + "[validation.tolerances]\nbfloat61 = { atol = 1e-2, rtol = 1e-2 }\n"),
            kPath +
                ":4:1: error: unknown dtype 'bfloat61' in [validation.tolerances]\n"
                "bfloat61 = { atol = 1e-2, rtol = 1e-2 }\n"
                "^\n"
                "hint: did you mean 'bfloat16'?");
}

TEST(ConfigDiagnostics, UnknownInvariant) {
  EXPECT_EQ(error_of(kOp + "invariants = [\"shape_preserved\", \"normalised\"]\n"),
            kPath +
                ":7:34: error: unknown invariant 'normalised'\n"
                "invariants = [\"shape_preserved\", \"normalised\"]\n"
                "                                 ^\n"
                "hint: did you mean 'normalized'?");
}

TEST(ConfigDiagnostics, UnknownExecutionModeAndLayout) {
  EXPECT_EQ(error_of(kOp + "execution_mode = \"client-side\"\n"),
            kPath +
                ":7:18: error: unknown execution mode 'client-side'\n"
                "execution_mode = \"client-side\"\n"
                "                 ^\n"
                "hint: did you mean 'client_side'?");
  EXPECT_EQ(error_of(kOp + "layouts = [\"colmajor\"]\n"),
            kPath +
                ":7:12: error: unknown layout 'colmajor'\n"
                "layouts = [\"colmajor\"]\n"
                "           ^\n"
                "hint: layouts are 'contiguous', 'transposed', 'strided' or 'channels_last'");
}

TEST(ConfigDiagnostics, UndeclaredDim) {
  EXPECT_EQ(error_of(kOp + "[ops.schema]\n"
                           "dims = { M = [1, 256], K = [1, 64] }\n"
                           "inputs = { a = [\"M\", \"K\"], b = [\"K\", \"N\"] }\n"),
            kPath +
                ":9:38: error: dim 'N' is used by input 'b' but not declared in [ops.schema] dims\n"
                "inputs = { a = [\"M\", \"K\"], b = [\"K\", \"N\"] }\n"
                "                                     ^\n"
                "hint: add N = [1, 128] to dims");
}

// faq.txt: shapes include size-0 dims. A range may start at 0 (an empty tensor).
TEST(ConfigDiagnostics, RangesMayStartAtZero) {
  const Config c = load_ok(kOp + "[ops.schema]\ndims = { M = [0, 8] }\ninputs = { a = [\"M\"] }\n");
  ASSERT_EQ(c.ops.size(), 1u);
  ASSERT_TRUE(c.ops[0].schema.has_value());
  EXPECT_EQ(c.ops[0].schema->dims.at(0).min, 0);
  EXPECT_EQ(c.ops[0].schema->dims.at(0).max, 8);
}

TEST(ConfigDiagnostics, BadRange) {
  EXPECT_EQ(error_of(kOp + "[ops.schema]\n"
                           "dims = { M = [-1, 256] }\n"
                           "inputs = { a = [\"M\"] }\n"),
            kPath +
                ":8:14: error: bad range [-1, 256] for dim 'M': need 0 <= min <= max\n"
                "dims = { M = [-1, 256] }\n"
                "             ^\n"
                "hint: write M = [0, 256]");
  EXPECT_EQ(error_of(kOp + "[ops.schema]\n"
                           "dims = { K = { candidates = [4, -1] } }\n"
                           "inputs = { a = [\"K\"] }\n"),
            kPath +
                ":8:33: error: a candidate of dim 'K' must be a positive integer, got -1\n"
                "dims = { K = { candidates = [4, -1] } }\n"
                "                                ^");
}

TEST(ConfigDiagnostics, SchemaTilesNameADeclaredDimAndArePositive) {
  const std::string schema = "[ops.schema]\ndims = { M = [1, 300] }\ninputs = { a = [\"M\"] }\n";
  EXPECT_EQ(load_ok(kOp + schema + "tiles = { M = [64, 128] }\n").ops.at(0).schema->dims.at(0).tiles,
            (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(load_ok(kOp + schema + "tiles = { M = 32 }\n").ops.at(0).schema->dims.at(0).tiles,
            (std::vector<std::int64_t>{32}));
  EXPECT_NE(load_ok(kOp + schema).digest, load_ok(kOp + schema + "tiles = { M = 32 }\n").digest);
  EXPECT_EQ(error_of(kOp + schema + "tiles = { N = 32 }\n"),
            kPath +
                ":10:11: error: tiles names dim 'N', which [ops.schema] dims does not declare\n"
                "tiles = { N = 32 }\n"
                "          ^\n"
                "hint: declare it in dims, or remove it from tiles");
  EXPECT_EQ(error_of(kOp + schema + "tiles = { M = [64, 0] }\n"),
            kPath +
                ":10:20: error: a tile of dim 'M' must be a positive integer, got 0\n"
                "tiles = { M = [64, 0] }\n"
                "                   ^");
}

TEST(ConfigDiagnostics, MissingScript) {
  EXPECT_EQ(error_of(kHead + "[[ops]]\nname = \"mm\"\nreference = \"scripts/missing_ref.py\"\n"),
            kPath + ":5:13: error: script not found: 'scripts/missing_ref.py' (looked for " +
                (kProject / "scripts" / "missing_ref.py").string() +
                ")\n"
                "reference = \"scripts/missing_ref.py\"\n"
                "            ^\n"
                "hint: paths are relative to " +
                kProject.string() + "; a Python callable is written \"package.module:function\"");
}

TEST(ConfigDiagnostics, MissingReferenceAndOpUnderTest) {
  EXPECT_EQ(error_of(kHead + "[[ops]]\nname = \"mm\"\nop_script = \"kernels/matmul_op.py\"\n"),
            kPath +
                ":3:1: error: op 'mm' has no 'reference'\n"
                "[[ops]]\n"
                "^\n"
                "hint: add reference = \"scripts/mm_ref.py\" (a script) or \"package.module:function\"");
  EXPECT_EQ(error_of(kHead + "[[ops]]\nname = \"mm\"\nreference = \"scripts/matmul_ref.py\"\n"),
            kPath +
                ":3:1: error: op 'mm' has no op under test, which execution_mode 'script_based' runs\n"
                "[[ops]]\n"
                "^\n"
                "hint: add op_script = \"kernels/mm.py\", module = \"package.module:function\" or "
                "implementations = [...]; or, when a client runs the op, execution_mode = \"client_side\" or "
                "\"daemon_orchestrated\"");
}

// execution-modes.txt's daemon-orchestrated op: the client runs it, so it needs no op under test.
TEST(ConfigDiagnostics, ClientRunOpsNeedNoOpUnderTest) {
  for (const char* mode : {"client_side", "daemon_orchestrated"}) {
    const Config c =
        load_ok(kHead + "[[ops]]\nname = \"my_matmul\"\nreference = \"scripts/matmul_ref.py\"\n" +
                "input_names = [\"a\", \"b\"]\nexecution_mode = \"" + mode + "\"\n");
    ASSERT_EQ(c.ops.size(), 1u);
    EXPECT_TRUE(c.ops[0].op_script.empty()) << mode;
    EXPECT_EQ(execution_mode_name(c.ops[0].execution_mode), mode);
  }
}

TEST(ConfigDiagnostics, DuplicateOpName) {
  EXPECT_EQ(
      error_of(kOp +
               "[[ops]]\nname = \"mm\"\nreference = \"pkg.refs:mm\"\nexecution_mode = \"client_side\"\n"),
      kPath +
          ":8:8: error: duplicate op name 'mm'\n"
          "name = \"mm\"\n"
          "       ^\n"
          "hint: op names must be unique; the first is at " +
          kPath + ":3:1");
}

TEST(ConfigDiagnostics, SyntaxError) {
  EXPECT_EQ(
      error_of(kHead + "[validation]\ndtypes = [\"float32\"\nseed = 1\n"),
      kPath +
          ":5:1: error: TOML syntax: Error while parsing array: expected comma or closing ']', saw 's'\n"
          "seed = 1\n"
          "^");
}

TEST(ConfigDiagnostics, SeedOutOfRange) {
  EXPECT_EQ(error_of(kHead + "[validation]\nseed = -5\n"),
            kPath +
                ":4:8: error: 'seed' must not be negative, got -5\n"
                "seed = -5\n"
                "       ^\n"
                "hint: write a non-negative integer, or a decimal string such as seed = "
                "\"18446744073709551615\" for seeds above 2^63 - 1");
  EXPECT_EQ(error_of(kHead + "[validation]\nseed = \"18446744073709551616\"\n"),
            kPath +
                ":4:8: error: 'seed' string \"18446744073709551616\" is not a decimal number from 0 to "
                "18446744073709551615\n"
                "seed = \"18446744073709551616\"\n"
                "       ^\n"
                "hint: write a non-negative integer, or a decimal string such as seed = "
                "\"18446744073709551615\" for seeds above 2^63 - 1");
}

TEST(ConfigDiagnostics, InputsMustMatchInputNames) {
  EXPECT_EQ(error_of(kOp + "input_names = [\"a\"]\n[ops.schema]\ninputs = { a = [3], b = [4] }\n"),
            kPath +
                ":9:21: error: input 'b' is in [ops.schema] inputs but not in input_names\n"
                "inputs = { a = [3], b = [4] }\n"
                "                    ^\n"
                "hint: add it to input_names or remove it here");
  EXPECT_EQ(error_of(kOp + "input_names = [\"x\", \"y\"]\n[ops.inputs.z]\ndomain = [0, 1]\n"),
            kPath +
                ":8:13: error: [ops.inputs] names unknown input 'z' of op 'mm'\n"
                "[ops.inputs.z]\n"
                "            ^\n"
                "hint: did you mean 'x'?");
}

TEST(ConfigDiagnostics, OutOfRangeNumbers) {
  EXPECT_EQ(
      error_of(kHead + "[policies]\nwarn_threshold = 1.5\n"),
      kPath +
          ":4:18: error: 'warn_threshold' must be between 0 and 1, got 1.5\n"
          "warn_threshold = 1.5\n"
          "                 ^\n"
          "hint: it is the fraction of the tolerance a passing case may use before a warning, e.g. 0.8");
  EXPECT_EQ(error_of(kHead + "[ci]\nparallel_jobs = 0\n"),
            kPath +
                ":4:17: error: 'parallel_jobs' must be at least 1, got 0\n"
                "parallel_jobs = 0\n"
                "                ^");
}

TEST(ConfigDiagnostics, MissingProjectName) {
  EXPECT_EQ(
      error_of("[validation]\nseed = 1\n"),
      kPath + ": error: no [project] table with a name\nhint: add [project] with name = \"my-project\"");
  EXPECT_EQ(error_of("[project]\nversion = \"1\"\n"), kPath +
                                                          ":1:1: error: [project] has no 'name'\n"
                                                          "[project]\n"
                                                          "^\n"
                                                          "hint: add name = \"my-project\"");
}

TEST(ConfigDiagnostics, KernelSourceMustExist) {
  EXPECT_EQ(error_of(kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/none.ptx\"\n"),
            kPath + ":5:10: error: kernel source not found: 'kernels/none.ptx' (looked for " +
                (kProject / "kernels" / "none.ptx").string() + ")\n" +
                "source = \"kernels/none.ptx\"\n"
                "         ^\n"
                "hint: paths are relative to " +
                kProject.string() + "; give a .ptx, .cu or .cubin file");
}

TEST(ConfigDiagnostics, KernelReferenceMustExist) {
  const std::string kernel = kHead + "[[kernels]]\nname = \"k\"\nsource = \"kernels/matmul.ptx\"\n";
  EXPECT_EQ(error_of(kernel + "reference = \"does_not_exist.py\"\n"),
            kPath + ":6:13: error: kernel reference not found: 'does_not_exist.py' (looked for " +
                (kProject / "does_not_exist.py").string() + ")\n" +
                "reference = \"does_not_exist.py\"\n"
                "            ^\n"
                "hint: paths are relative to " +
                kProject.string() + "; name the reference script, or a Python callable as module:function");
  EXPECT_EQ(load_ok(kernel + "reference = \"scripts/matmul_ref.py\"\n").kernels.at(0).reference,
            "scripts/matmul_ref.py");
  EXPECT_EQ(load_ok(kernel + "reference = \"my_project.refs:matmul\"\n").kernels.at(0).reference,
            "my_project.refs:matmul");
}

TEST(FormatDiagnostic, CaretFollowsTabsAndUtf8) {
  EXPECT_EQ(format_diagnostic("f.toml", 2, 3, "\tx = 1", "bad", ""), "f.toml:2:3: error: bad\n\tx = 1\n\t ^");
  // "é" is two bytes but one column.
  EXPECT_EQ(format_diagnostic("f.toml", 1, 7, "n = \"é\"x", "here", "fix it"),
            "f.toml:1:7: error: here\nn = \"é\"x\n      ^\nhint: fix it");
  EXPECT_EQ(format_diagnostic("f.toml", 0, 0, "", "no position", "h"), "f.toml: error: no position\nhint: h");
}

}  // namespace
}  // namespace gpuemu::config
