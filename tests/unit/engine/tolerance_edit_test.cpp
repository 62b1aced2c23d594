// engine::edit_tolerances_text (calibrate --write): replaces or adds one line per dtype in the
// right op's [ops.tolerances], and leaves every other byte of the file as it was.
#include <gtest/gtest.h>

#include "engine/calibrate.hpp"

namespace gpuemu::engine {
namespace {

CalibrationRow row(tensor::DType dtype, double atol, double rtol) {
  CalibrationRow r;
  r.dtype = dtype;
  r.fitted = {atol, rtol};
  return r;
}

const std::string kTwoOps =
    "# the project\n"
    "[project]\n"
    "name = \"p\"  # trailing comment\n"
    "\n"
    "[[ops]]\n"
    "name = \"a\"\n"
    "reference = \"fake:ref\"\n"
    "\n"
    "[ops.tolerances]\n"
    "float32 = { atol = 1e-5, rtol = 1e-5 }  # keep me? no: this line is replaced\n"
    "float16 = { atol = 1e-2, rtol = 1e-2 }\n"
    "\n"
    "[[ops]]\n"
    "name = 'b'\n"
    "reference = \"fake:ref\"\n"
    "\n"
    "[ops.schema]\n"
    "dims = { N = [1, 8] }\n";

TEST(ToleranceEdit, ReplacesTheLineOfTheDtypeInTheRightOp) {
  const auto out = edit_tolerances_text(kTwoOps, "a", {row(tensor::DType::float32, 2.5e-6, 3e-5)});
  ASSERT_TRUE(out) << out.error().message;
  std::string expected = kTwoOps;
  expected.replace(
      expected.find("float32 = { atol = 1e-5"),
      std::string("float32 = { atol = 1e-5, rtol = 1e-5 }  # keep me? no: this line is replaced").size(),
      "float32 = { atol = 2.5e-06, rtol = 3e-05 }");
  EXPECT_EQ(*out, expected);
}

TEST(ToleranceEdit, AddsMissingDtypesBesideTheOthers) {
  const auto out = edit_tolerances_text(kTwoOps, "a", {row(tensor::DType::bfloat16, 0.01, 0.02)});
  ASSERT_TRUE(out) << out.error().message;
  std::string expected = kTwoOps;
  const std::string f16 = "float16 = { atol = 1e-2, rtol = 1e-2 }\n";
  expected.insert(expected.find(f16) + f16.size(), "bfloat16 = { atol = 0.01, rtol = 0.02 }\n");
  EXPECT_EQ(*out, expected);
}

TEST(ToleranceEdit, AddsATablePastTheOpsLastTable) {
  const auto out = edit_tolerances_text(kTwoOps, "b", {row(tensor::DType::float32, 1e-6, 2e-6)});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, kTwoOps + "\n[ops.tolerances]\nfloat32 = { atol = 1e-06, rtol = 2e-06 }\n");
}

TEST(ToleranceEdit, KeepsAFileWithoutAFinalNewlineThatWay) {
  std::string text = kTwoOps;
  text.pop_back();
  const auto out = edit_tolerances_text(text, "a", {row(tensor::DType::float16, 0.001, 0.002)});
  ASSERT_TRUE(out);
  EXPECT_NE(out->back(), '\n');
  EXPECT_NE(out->find("float16 = { atol = 0.001, rtol = 0.002 }"), std::string::npos);
}

TEST(ToleranceEdit, AnUnknownOpIsAConfigErrorNamingIt) {
  const auto out = edit_tolerances_text(kTwoOps, "c", {row(tensor::DType::float32, 1e-6, 1e-6)});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().kind, ErrorKind::config);
  EXPECT_EQ(out.error().message, "no [[ops]] table named 'c' in the config file; cannot write tolerances");
}

}  // namespace
}  // namespace gpuemu::engine
