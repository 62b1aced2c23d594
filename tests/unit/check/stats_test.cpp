// The chunked, vectorised statistics must equal a plain element-by-element oracle written from
// the definitions, for every dtype and layout, across chunk boundaries and with rare failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "check/compare.hpp"
#include "tensor/half.hpp"

namespace gpuemu::check {
namespace {

using tensor::DType;
using tensor::Tensor;

struct Oracle {
  ErrorStats stats;
  std::int64_t nonfinite = 0, unexpected = 0, finite_fail = 0;
};

double oracle_ulp(DType dtype, double x, double y) {
  switch (dtype) {
    case DType::float16:
      return tensor::ulp_distance_f16(x, y);
    case DType::bfloat16:
      return tensor::ulp_distance_bf16(x, y);
    case DType::float32:
      return tensor::ulp_distance_f32(x, y);
    case DType::float64:
      return tensor::ulp_distance_f64(x, y);
    default:
      return std::fabs(x - y);
  }
}

Oracle oracle(const Tensor& out, const Tensor& ref, const CompareOptions& o) {
  Oracle r;
  const auto a = out.to_doubles();
  const auto b = ref.to_doubles();
  std::vector<std::pair<double, std::int64_t>> ranked;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (std::isnan(y) || std::isinf(y)) {
      if (std::isnan(y) ? !o.check_nan : !o.check_inf) continue;  // agreement relaxed
      if (!(std::isnan(y) ? std::isnan(x) : x == y)) {
        ++r.nonfinite;
        ranked.push_back({INFINITY, static_cast<std::int64_t>(i)});
      }
      continue;
    }
    if (std::isnan(x) || std::isinf(x)) {  // against a finite reference: fails under every setting
      ++r.unexpected;
      ranked.push_back({INFINITY, static_cast<std::int64_t>(i)});
      continue;
    }
    const double d = std::fabs(x - y);
    const double bound = o.tolerance.atol + o.tolerance.rtol * std::fabs(y);
    const double ratio = d == 0 ? 0 : (bound == 0 ? INFINITY : d / bound);
    const double rel = d == 0 ? 0 : (y == 0 ? INFINITY : d / std::fabs(y));
    r.stats.max_abs = std::max(r.stats.max_abs, d);
    r.stats.max_rel = std::max(r.stats.max_rel, rel);
    r.stats.max_ulp = std::max(r.stats.max_ulp, oracle_ulp(out.dtype, x, y));
    r.stats.tolerance_used = std::max(r.stats.tolerance_used, ratio);
    if (d > bound) ++r.finite_fail;
    if (ratio > 0) ranked.push_back({ratio, static_cast<std::int64_t>(i)});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](auto& p, auto& q) { return p.first > q.first; });
  for (std::size_t k = 0; k < std::min<std::size_t>(5, ranked.size()); ++k) {
    ElementDiff d;
    d.index = tensor::unravel_index(out.shape, ranked[k].second);
    d.actual = a[static_cast<std::size_t>(ranked[k].second)];
    r.stats.worst.push_back(d);
  }
  if (r.nonfinite + r.unexpected > 0) r.stats.tolerance_used = INFINITY;
  r.stats.mismatches = r.nonfinite + r.unexpected + r.finite_fail;
  return r;
}

TEST(Stats, MatchOracleAcrossDtypesLayoutsAndChunks) {
  std::mt19937_64 gen(2024);
  const DType dtypes[] = {DType::float32,  DType::float64, DType::float16,
                          DType::bfloat16, DType::int32,   DType::uint8};
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int trial = 0; trial < 120; ++trial) {
    const DType dtype = dtypes[trial % 6];
    const tensor::Shape shape{1 + static_cast<std::int64_t>(gen() % 40),
                              1 + static_cast<std::int64_t>(gen() % 200)};
    const auto n = static_cast<std::size_t>(tensor::shape_numel(shape));
    std::vector<double> ref(n), out(n);
    const int mode = trial % 4;  // 0: all pass, 1: rare failures, 2: non-finite sprinkled, 3: exact zeros
    for (std::size_t i = 0; i < n; ++i) {
      // Magnitudes from 1e-8 to 1e2, so near-zero elements (where atol dominates the bound) carry
      // the largest ULP and relative errors without being anywhere near the worst ratios.
      const double scale = std::pow(10.0, static_cast<double>(gen() % 11) - 8);
      ref[i] = tensor::is_floating(dtype) ? normal(gen) * scale : static_cast<double>(gen() % 100);
      const double noise = tensor::is_floating(dtype) ? normal(gen) * 1e-6 * std::fabs(ref[i]) : 0.0;
      out[i] = ref[i] + noise;
      if (mode == 1 && gen() % 500 == 0) out[i] += 0.5 + static_cast<double>(gen() % 10);
      if (mode == 2 && gen() % 300 == 0) {
        const double specials[] = {NAN, INFINITY, -INFINITY};
        (gen() % 2 ? out[i] : ref[i]) = specials[gen() % 3];
      }
      if (mode == 3 && i % 7 == 0) out[i] = ref[i] = 0.0;
    }
    CompareOptions o;
    o.tolerance = default_tolerance(dtype);
    o.check_nan = gen() % 2 == 0;
    o.check_inf = gen() % 2 == 0;
    const Tensor ref_t = Tensor::from_doubles(trial % 3 == 0 ? DType::float64 : dtype, shape, ref);
    const Tensor out_contig = Tensor::from_doubles(dtype, shape, out);
    const Oracle expect = oracle(out_contig, ref_t, o);
    for (auto layout : {tensor::Layout::contiguous, tensor::Layout::transposed, tensor::Layout::strided}) {
      const Tensor out_t = tensor::with_layout(out_contig, layout);
      const Verdict v = compare_outputs(Outputs{{"out", out_t}}, Outputs{{"out", ref_t}}, o);
      SCOPED_TRACE(testing::Message() << "trial " << trial << " " << tensor::dtype_name(dtype) << " "
                                      << tensor::layout_name(layout));
      ASSERT_EQ(v.stats.elements, static_cast<std::int64_t>(n));
      ASSERT_EQ(v.stats.mismatches, expect.stats.mismatches);
      ASSERT_EQ(v.stats.max_abs, expect.stats.max_abs);
      ASSERT_EQ(v.stats.max_rel, expect.stats.max_rel);
      ASSERT_EQ(v.stats.max_ulp, expect.stats.max_ulp);
      ASSERT_EQ(v.stats.tolerance_used, expect.stats.tolerance_used);
      ASSERT_EQ(v.stats.worst.size(), expect.stats.worst.size());
      for (std::size_t k = 0; k < v.stats.worst.size(); ++k) {
        ASSERT_EQ(v.stats.worst[k].index, expect.stats.worst[k].index) << k;
      }
      const FailureKind want = expect.nonfinite > 0     ? FailureKind::nonfinite_mismatch
                               : expect.unexpected > 0  ? FailureKind::unexpected_nonfinite
                               : expect.finite_fail > 0 ? FailureKind::mismatch
                                                        : FailureKind::none;
      ASSERT_EQ(v.kind, want);
    }
  }
}

}  // namespace
}  // namespace gpuemu::check
