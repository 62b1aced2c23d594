// The pass rule (check/pass_rule.hpp): its edges, the comparison counting exactly the elements it
// fails, and every copy in src/ and python/gpuemu/ listed in kPassRuleCopies and citing it by name.
#include "check/pass_rule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check/compare.hpp"

namespace gpuemu::check {
namespace {

namespace fs = std::filesystem;

TEST(PassRule, TheBoundIsInclusiveAndNaNNeverPasses) {
  EXPECT_TRUE(within_tolerance(1.0, 1.0, 0, 0));
  EXPECT_TRUE(within_tolerance(1.5, 1.0, 0.25, 0.25));  // |0.5| <= 0.25 + 0.25 * 1
  EXPECT_FALSE(within_tolerance(std::nextafter(1.5, 2.0), 1.0, 0.25, 0.25));
  EXPECT_TRUE(within_tolerance(-4.0, -2.0, 0, 1));  // rtol scales with |ref|, not ref
  EXPECT_FALSE(within_tolerance(-4.0, -2.0, 0, std::nextafter(1.0, 0.0)));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(within_tolerance(nan, 1.0, 1, 1));
  EXPECT_FALSE(within_tolerance(1.0, nan, 1, 1));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(within_tolerance(inf, inf, 1, 1));  // infinities are judged by check_inf, before the rule
}

// compare_outputs (the precise pass, the screens and pre-checks this CPU picks) fails exactly the
// elements within_tolerance fails, for each output dtype against a float64 reference.
TEST(PassRule, TheComparisonCountsExactlyTheElementsTheRuleFails) {
  std::mt19937_64 engine(2026);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine); };
  for (tensor::DType dtype :
       {tensor::DType::float64, tensor::DType::float32, tensor::DType::float16, tensor::DType::bfloat16}) {
    const std::int64_t n = 5000;
    std::vector<double> ref(n);
    std::vector<double> got(n);
    for (std::int64_t i = 0; i < n; ++i) {
      ref[i] = uniform(-4.0, 4.0);
      // Most elements close to the reference, some well outside any tolerance below.
      got[i] = ref[i] + (i % 7 == 0 ? uniform(-0.5, 0.5) : uniform(-1e-3, 1e-3));
    }
    const tensor::Tensor out = tensor::Tensor::from_doubles(dtype, {n}, got);
    const std::vector<double> stored = out.to_doubles();  // what the comparison sees after rounding
    CompareOptions options;
    options.tolerance = {2e-3, 1e-2};
    std::int64_t failing = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      failing += within_tolerance(stored[i], ref[i], options.tolerance.atol, options.tolerance.rtol) ? 0 : 1;
    }
    const Verdict verdict = compare_outputs(
        {{"out", out}}, {{"out", tensor::Tensor::from_doubles(tensor::DType::float64, {n}, ref)}}, options);
    ASSERT_GT(failing, 0);
    EXPECT_EQ(verdict.stats.mismatches, failing) << tensor::dtype_name(dtype);
    EXPECT_EQ(verdict.kind, FailureKind::mismatch) << tensor::dtype_name(dtype);
  }
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The rule written as code: `atol + rtol * <operand>` (scalar) or add(atol, mul(rtol, ...)) (SIMD
// intrinsics). The rule in prose (`atol + rtol * |ref|`, in comments and messages) does not match.
bool writes_the_rule(const std::string& text) {
  static const std::regex scalar(R"([\w.]*atol\w*\s*\+\s*[\w.]*rtol\w*\s*\*\s*[\w(])");
  static const std::regex intrinsic(
      R"(_mm\d*_add_p[sd]\(\s*[\w.]*atol\w*\s*,\s*_mm\d*_mul_p[sd]\(\s*[\w.]*rtol)");
  return std::regex_search(text, scalar) || std::regex_search(text, intrinsic);
}

TEST(PassRule, EveryCopyIsListedAndCitesTheDefinition) {
  const fs::path root(GPUEMU_SOURCE_DIR);
  const std::set<std::string> listed(kPassRuleCopies.begin(), kPassRuleCopies.end());
  for (const std::string& copy : listed) {
    const std::string text = read_text(root / copy);
    ASSERT_FALSE(text.empty()) << copy << " is listed in kPassRuleCopies but missing";
    EXPECT_NE(text.find("check::within_tolerance"), std::string::npos)
        << copy << " copies the pass rule without citing check::within_tolerance";
  }
  std::vector<std::string> unlisted;
  for (const char* tree : {"src", "python/gpuemu"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / tree)) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".py") continue;
      const std::string relative = fs::relative(entry.path(), root).generic_string();
      if (relative == "src/check/pass_rule.hpp" || listed.contains(relative)) continue;
      if (writes_the_rule(read_text(entry.path()))) unlisted.push_back(relative);
    }
  }
  EXPECT_TRUE(unlisted.empty())
      << "these files write the pass rule: call check::within_tolerance, or list them "
         "in kPassRuleCopies (check/pass_rule.hpp) and cite it: "
      << ::testing::PrintToString(unlisted);
}

TEST(PassRule, TheCopyFinderFindsBothForms) {
  EXPECT_TRUE(writes_the_rule("const double bound = s.atol + s.rtol * ay;"));
  EXPECT_TRUE(writes_the_rule("bound = _mm256_add_pd(atol, _mm256_mul_pd(rtol, ay));"));
  EXPECT_FALSE(writes_the_rule("// some element outside atol + rtol * |ref|"));
}

}  // namespace
}  // namespace gpuemu::check
