// Value generation against a plain memory copy of the same bytes (issue 32, bench (m)): times
// rng::fill_float for each distribution and adversarial pattern, paired run by run with std::memcpy.
//
// Usage: bench_fill [--quick]. Prints one JSON object per line (bench/run.py reads them):
// {"name", "elements", "bytes", "pairs", "fill_ns": {"min", "median"}, "memcpy_ns": {...},
// "ratio": {...}, "kernels"} where ratio = memcpy time / fill time over the tensor's bytes, taken
// pair by pair so the machine's drift cancels.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench_timing.hpp"
#include "rng/value_plan.hpp"
#include "tensor/dtype.hpp"
#include "util/cpu_isa.hpp"

namespace {

using gpuemu::bench::clobber;
using gpuemu::bench::stat_json;
using gpuemu::bench::stat_of;
using gpuemu::rng::FloatPattern;
using gpuemu::rng::RegularMode;
using gpuemu::rng::ValueDistribution;
using gpuemu::rng::ValuePlan;
using gpuemu::tensor::DType;

constexpr std::uint64_t kElements = std::uint64_t{1} << 20;  // 4 MiB of float32, rows of 1024
constexpr std::uint64_t kRowLength = 1024;

void time_row(const std::string& name, const ValuePlan& plan, bool quick) {
  const auto domain = gpuemu::rng::resolve_domain(DType::float32, gpuemu::rng::Domain{-3.0, 5.0, false});
  if (!domain) {
    fmt::print(stderr, "bench_fill: {}\n", domain.error().message);
    std::exit(1);
  }
  const std::size_t bytes = kElements * sizeof(float);
  std::vector<std::byte> out(bytes), src(bytes, std::byte{1}), dst(bytes);
  std::memcpy(dst.data(), src.data(), bytes);  // fault the pages in before timing
  gpuemu::rng::fill_float(plan, 7, DType::float32, *domain, kElements, kRowLength, out.data());
  std::uint64_t seed = 0;
  const auto [fill_ns, copy_ns, ratios] = gpuemu::bench::time_pairs(
      [&] {  // a new seed each sample: a case's tensors differ
        gpuemu::rng::fill_float(plan, ++seed, DType::float32, *domain, kElements, kRowLength, out.data());
        clobber(out.data());
      },
      [&] {
        std::memcpy(dst.data(), src.data(), bytes);
        clobber(dst.data());
      },
      1, quick ? 0.1e9 : 0.5e9, quick ? 3 : 9, 500);
  fmt::print(
      "{{\"name\": \"{}\", \"elements\": {}, \"bytes\": {}, \"pairs\": {}, \"fill_ns\": {}, \"memcpy_ns\": "
      "{}, "
      "\"ratio\": {}, \"kernels\": \"{}\"}}\n",
      name, kElements, bytes, fill_ns.size(), stat_json(stat_of(fill_ns)), stat_json(stat_of(copy_ns)),
      stat_json(stat_of(ratios)), gpuemu::util::isa_name(gpuemu::util::best_isa()));
  std::fflush(stdout);
}

// The planned adversarial plan of `pattern` (planning fills what the pattern needs, e.g. ties' pool).
ValuePlan adversarial_plan(FloatPattern pattern) {
  for (std::uint64_t seed = 0;; ++seed) {
    ValuePlan plan = gpuemu::rng::plan_values(seed, DType::float32, ValueDistribution::adversarial, false);
    if (plan.float_pattern == pattern) return plan;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--quick") {
      quick = true;
    } else {
      fmt::print(stderr, "bench_fill: unknown argument '{}'; usage: bench_fill [--quick]\n", argv[i]);
      return 2;
    }
  }
  for (const auto& [mode, label] :
       {std::pair{RegularMode::uniform, "regular/uniform"}, std::pair{RegularMode::bell, "regular/bell"}}) {
    ValuePlan plan;
    plan.mode = mode;
    time_row(label, plan, quick);
  }
  ValuePlan boundary;
  boundary.distribution = ValueDistribution::boundary;
  time_row("boundary", boundary, quick);
  for (int pattern = 0; pattern <= static_cast<int>(FloatPattern::alternating_signs); ++pattern) {
    const ValuePlan plan = adversarial_plan(static_cast<FloatPattern>(pattern));
    time_row(gpuemu::rng::describe_plan(plan, DType::float32), plan, quick);
  }
  return 0;
}
