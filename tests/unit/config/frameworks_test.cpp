// The framework and interpreter keys: which framework each op's callable receives ([project]
// framework applies only when written; an op's own key wins), the interpreter modes with their
// [validation] defaults, [project] numpy_bfloat16, and whole-message diagnostics for misspellings.
#include <gtest/gtest.h>

#include "config/loader.hpp"
#include "config_test_support.hpp"

namespace gpuemu::config {
namespace {

using namespace fixtures;

const std::string kSecondOp =
    "[[ops]]\nname = \"sm\"\nreference = \"scripts/matmul_ref.py\"\nop_script = \"kernels/matmul_op.py\"\n";

TEST(ConfigFrameworks, UnwrittenProjectFrameworkGivesOpsNumpy) {
  const Config c = load_ok(kOp);
  EXPECT_EQ(c.project.framework, "pytorch");  // the seed's default, reported as such
  EXPECT_FALSE(c.project.framework_written);
  const OpConfig& op = c.ops.at(0);
  EXPECT_EQ(op.framework, Framework::numpy);
  EXPECT_EQ(op.reference_framework, Framework::numpy);
  EXPECT_EQ(op.triton_interpret, InterpretMode::automatic);
  EXPECT_EQ(op.pallas_interpret, InterpretMode::automatic);
}

TEST(ConfigFrameworks, WrittenProjectFrameworkAppliesToOpsAndAnOpOverrides) {
  const Config c = load_ok("[project]\nname = \"p\"\nframework = \"jax\"\n" + kOp.substr(kHead.size()) +
                           "framework = \"numpy\"\n" + kSecondOp + "reference_framework = \"jax\"\n");
  EXPECT_TRUE(c.project.framework_written);
  EXPECT_EQ(c.project.framework, "jax");
  EXPECT_EQ(c.find_op("mm")->framework, Framework::numpy);
  EXPECT_EQ(c.find_op("sm")->framework, Framework::jax);
  EXPECT_EQ(c.find_op("sm")->reference_framework, Framework::jax);
  EXPECT_EQ(c.find_op("mm")->reference_framework, Framework::numpy);
}

TEST(ConfigFrameworks, InterpretModesDefaultFromValidationAndOverridePerOp) {
  const Config c =
      load_ok(kHead + "[validation]\ntriton_interpret = \"always\"\npallas_interpret = \"never\"\n" +
              kOp.substr(kHead.size()) + "triton_interpret = \"never\"\n" + kSecondOp +
              "pallas_interpret = \"auto\"\n");
  EXPECT_EQ(c.validation.triton_interpret, InterpretMode::always);
  EXPECT_EQ(c.find_op("mm")->triton_interpret, InterpretMode::never);
  EXPECT_EQ(c.find_op("mm")->pallas_interpret, InterpretMode::never);
  EXPECT_EQ(c.find_op("sm")->triton_interpret, InterpretMode::always);
  EXPECT_EQ(c.find_op("sm")->pallas_interpret, InterpretMode::automatic);
}

TEST(ConfigFrameworks, InterpreterCudaShimIsPerOpAndOffByDefault) {
  const Config c = load_ok(kOp + "interpreter_cuda_shim = true\n" + kSecondOp);
  EXPECT_TRUE(c.find_op("mm")->interpreter_cuda_shim);
  EXPECT_FALSE(c.find_op("sm")->interpreter_cuda_shim);
  EXPECT_NE(c.digest, load_ok(kOp + kSecondOp).digest);
  EXPECT_NE(error_of(kOp + "interpreter_cuda_shim = \"yes\"\n").find("interpreter_cuda_shim"),
            std::string::npos);
}

TEST(ConfigFrameworks, SanitizeIsOnUnlessValidationOrTheOpTurnsItOff) {
  EXPECT_TRUE(load_ok(kOp).find_op("mm")->sanitize);
  const Config c = load_ok(kHead + "[validation]\nsanitize = false\n" + kOp.substr(kHead.size()) +
                           "sanitize = true\n" + kSecondOp);
  EXPECT_FALSE(c.validation.sanitize);
  EXPECT_TRUE(c.find_op("mm")->sanitize);
  EXPECT_FALSE(c.find_op("sm")->sanitize);
  EXPECT_NE(load_ok(kOp).digest, load_ok(kOp + "sanitize = false\n").digest);
}

TEST(ConfigFrameworks, FrameworkChangesTheDigest) {
  const Config a = load_ok(kOp);
  const Config b = load_ok(kOp + "framework = \"pytorch\"\n");
  const Config c = load_ok(kOp + "triton_interpret = \"always\"\n");
  EXPECT_NE(a.digest, b.digest);
  EXPECT_NE(a.digest, c.digest);
}

TEST(ConfigFrameworks, NumpyBfloat16IsMlDtypesUnlessTheSwitchKeepsFloat32) {
  const Config fresh = load_ok(kOp);
  EXPECT_EQ(fresh.project.numpy_bfloat16, NumpyBfloat16::ml_dtypes);
  const Config kept =
      load_ok("[project]\nname = \"p\"\nnumpy_bfloat16 = \"float32\"\n" + kOp.substr(kHead.size()));
  EXPECT_EQ(kept.project.numpy_bfloat16, NumpyBfloat16::float32);
  EXPECT_NE(fresh.digest, kept.digest);  // the op computes on other arrays: another config
  EXPECT_EQ(load_ok("[project]\nname = \"p\"\nnumpy_bfloat16 = \"ml_dtypes\"\n").project.numpy_bfloat16,
            NumpyBfloat16::ml_dtypes);
}

TEST(ConfigFrameworks, MisspelledNumpyBfloat16Form) {
  EXPECT_EQ(error_of("[project]\nname = \"p\"\nnumpy_bfloat16 = \"ml_dtype\"\n"),
            kPath +
                ":3:18: error: unknown numpy_bfloat16 'ml_dtype'\n"
                "numpy_bfloat16 = \"ml_dtype\"\n"
                "                 ^\n"
                "hint: did you mean 'ml_dtypes'?");
}

TEST(ConfigFrameworks, MisspelledFrameworkInAnOp) {
  EXPECT_EQ(error_of(kOp + "framework = \"pytroch\"\n"), kPath +
                                                             ":7:13: error: unknown framework 'pytroch'\n"
                                                             "framework = \"pytroch\"\n"
                                                             "            ^\n"
                                                             "hint: did you mean 'pytorch'?");
}

TEST(ConfigFrameworks, UnknownFrameworkListsTheFrameworks) {
  EXPECT_EQ(error_of("[project]\nname = \"p\"\nframework = \"mxnet\"\n"),
            kPath +
                ":3:13: error: unknown framework 'mxnet'\n"
                "framework = \"mxnet\"\n"
                "            ^\n"
                "hint: frameworks are 'numpy', 'pytorch', 'jax' or 'tensorflow'");
}

TEST(ConfigFrameworks, MisspelledInterpretMode) {
  EXPECT_EQ(error_of(kOp + "triton_interpret = \"alway\"\n"),
            kPath +
                ":7:20: error: unknown triton_interpret 'alway'\n"
                "triton_interpret = \"alway\"\n"
                "                   ^\n"
                "hint: did you mean 'always'?");
  EXPECT_EQ(error_of(kHead + "[validation]\npallas_interpret = true\n"),
            kPath +
                ":4:20: error: wrong type for 'pallas_interpret': expected a string, got a boolean\n"
                "pallas_interpret = true\n"
                "                   ^");
}

TEST(ConfigFrameworks, MisspelledKeySuggestsTheFrameworkKey) {
  EXPECT_EQ(error_of(kOp + "framwork = \"jax\"\n"),
            kPath +
                ":7:1: error: unknown key 'framwork' in [[ops]] 'mm'\n"
                "framwork = \"jax\"\n"
                "^\n"
                "hint: did you mean 'framework'?");
}

TEST(ConfigFrameworks, RequireLaunchIsOnUnlessTheOpOptsOutAndOffChangesTheDigest) {
  EXPECT_TRUE(load_ok(kOp).find_op("mm")->require_launch);
  const Config c = load_ok(kOp + "require_launch = false\n" + kSecondOp);
  EXPECT_FALSE(c.find_op("mm")->require_launch);
  EXPECT_TRUE(c.find_op("sm")->require_launch);
  EXPECT_NE(load_ok(kOp).digest, load_ok(kOp + "require_launch = false\n").digest);
  EXPECT_EQ(load_ok(kOp).digest,
            load_ok(kOp + "require_launch = true\n").digest);  // the default writes nothing
}

}  // namespace
}  // namespace gpuemu::config
