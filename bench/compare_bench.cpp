// Comparison throughput against a plain memory copy of the same bytes (issue 4, bench (b)): times
// check::compare_outputs on an op output and its reference, paired run by run with std::memcpy.
//
// Usage: bench_compare [--quick] [--rows TEXT] (TEXT: only rows whose name starts with it, or is
// it with a trailing '$'; e.g. for `perf record`). Prints one JSON object per line (bench/run.py reads them):
// {"name", "elements", "bytes", "compare_ns": {"min", "median"}, "memcpy_ns": {...}, "ratio": {...}}
// where ratio = memcpy time / compare time over the same bytes (1.0 = as fast as memcpy), taken
// pair by pair so the machine's drift cancels. bytes = the op output's plus the reference's storage.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_timing.hpp"
#include "check/compare.hpp"
#include "check/element_stats.hpp"
#include "check/tolerance.hpp"
#include "tensor/dtype.hpp"
#include "tensor/tensor.hpp"
#include "util/cpu_isa.hpp"

namespace {

using gpuemu::check::CompareOptions;
using gpuemu::check::Outputs;
using gpuemu::tensor::DType;
using gpuemu::tensor::Tensor;

struct Row {
  std::string name;
  DType out_dtype;
  DType ref_dtype;
  std::int64_t elements;
  double fail_fraction;     // share of elements pushed outside the tolerance
  double ulp_fraction = 0;  // share of float32 outputs moved one ULP away (the storage differs)
};

// Softmax-like reference values in (0, 1), and the op's answer: the same values rounded to its
// dtype, so a passing case is a correct kernel's case; failing elements get a 10% error.
struct Pair {
  Outputs actual;
  Outputs reference;
  std::size_t bytes = 0;
};

Pair make_pair(const Row& row) {
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<double> value(1e-4, 1.0);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<double> ref(static_cast<std::size_t>(row.elements));
  for (double& v : ref) v = value(gen);
  std::vector<double> out = ref;
  if (row.fail_fraction > 0) {
    for (double& v : out) {
      if (coin(gen) < row.fail_fraction) v *= 1.1;
    }
  }
  if (row.ulp_fraction > 0) {
    for (double& v : out) {
      if (coin(gen) < row.ulp_fraction) v = std::nextafter(static_cast<float>(v), 2.0f);
    }
  }
  Pair p;
  const gpuemu::tensor::Shape shape = {row.elements / 64, 64};
  p.actual.emplace("out", Tensor::from_doubles(row.out_dtype, shape, out));
  p.reference.emplace("out", Tensor::from_doubles(row.ref_dtype, shape, ref));
  p.bytes = p.actual.at("out").data.size() + p.reference.at("out").data.size();
  return p;
}

using gpuemu::bench::clobber;
using gpuemu::bench::stat_json;
using gpuemu::bench::stat_of;

// Times `work` against memcpy of `bytes` bytes (two buffers, as the pair's storage), pair by pair,
// and prints the JSON line for `name`.
// `kernels`: the compiled copy of the comparison's kernels that ran (util::isa_name).
template <class Work>
void time_against_memcpy(const std::string& name, std::int64_t elements, std::span<const std::byte> a,
                         std::span<const std::byte> r, Work work, bool quick,
                         std::string_view kernels = gpuemu::util::isa_name(gpuemu::util::best_isa())) {
  std::vector<std::byte> dst_a(a.size()), dst_r(r.size());
  std::memcpy(dst_a.data(), a.data(), a.size());  // fault the destination pages in before timing
  std::memcpy(dst_r.data(), r.data(), r.size());
  // Inner repeats so one timed sample covers at least ~1 Mi elements; pairs until the budget.
  const auto inner = static_cast<int>(std::max<std::int64_t>(1, (1 << 20) / elements));
  const auto [work_ns, copy_ns, ratios] = gpuemu::bench::time_pairs(
      work,
      [&] {
        std::memcpy(dst_a.data(), a.data(), a.size());
        std::memcpy(dst_r.data(), r.data(), r.size());
        clobber(dst_a.data());
        clobber(dst_r.data());
      },
      inner, quick ? 0.1e9 : 0.4e9, quick ? 3 : 7, 2000);
  fmt::print(
      "{{\"name\": \"{}\", \"elements\": {}, \"bytes\": {}, \"pairs\": {}, \"compare_ns\": {}, "
      "\"memcpy_ns\": {}, \"ratio\": {}, \"kernels\": \"{}\"}}\n",
      name, elements, a.size() + r.size(), work_ns.size(), stat_json(stat_of(work_ns)),
      stat_json(stat_of(copy_ns)), stat_json(stat_of(ratios)), kernels);
  std::fflush(stdout);
}

CompareOptions engine_options(DType out_dtype) {
  CompareOptions options;
  options.tolerance = gpuemu::check::default_tolerance(out_dtype);
  // The engine's settings for a case: NaN/Inf checks on; the op must answer in the case dtype.
  options.expected_dtype = out_dtype;
  return options;
}

void run_row(const Row& row, bool quick) {
  const Pair pair = make_pair(row);
  const CompareOptions options = engine_options(row.out_dtype);
  const auto verdict = gpuemu::check::compare_outputs(pair.actual, pair.reference, options);
  const bool want_pass = row.fail_fraction == 0;
  if (verdict.passed() != want_pass) {
    fmt::print(stderr, "bench_compare: row {} expected {} but the comparison says {}: {}\n", row.name,
               want_pass ? "a pass" : "a failure", verdict.passed() ? "pass" : "fail", verdict.message);
    std::exit(1);
  }
  time_against_memcpy(
      row.name, row.elements, pair.actual.at("out").data, pair.reference.at("out").data,
      [&] {
        auto v = gpuemu::check::compare_outputs(pair.actual, pair.reference, options);
        clobber(&v);
      },
      quick);
}

// The element statistics alone (StatsAccumulator, the comparison's hot part) with one compiled copy
// of the kernels forced: what a CPU without AVX-512 (AVX2) or without AVX2 (baseline) gets.
void run_kernels_row(const Row& row, gpuemu::check::KernelChoice kernels, std::string_view label,
                     bool quick) {
  using gpuemu::util::Isa;
  const Isa best = gpuemu::util::best_isa();
  const Isa ran = kernels == gpuemu::check::KernelChoice::fastest ? best
                  : kernels == gpuemu::check::KernelChoice::avx2  ? std::min(best, Isa::avx2)
                                                                  : Isa::baseline;
  const Pair pair = make_pair(row);
  const gpuemu::check::ElementRules rules{gpuemu::check::default_tolerance(row.out_dtype)};
  time_against_memcpy(
      fmt::format("breakdown: {}, statistics alone, {} kernels", row.name, label), row.elements,
      pair.actual.at("out").data, pair.reference.at("out").data,
      [&] {
        gpuemu::check::StatsAccumulator stats(rules, kernels);
        stats.add_output("out", pair.actual.at("out"), pair.reference.at("out"));
        auto s = stats.finish();
        clobber(&s);
      },
      quick, gpuemu::util::isa_name(ran));
}

// Where the comparison's time goes: decoding alone (Tensor::decode_range into doubles, which the
// f16/bf16 path and every flagged chunk pay), against a memcpy of the tensor's own bytes.
void run_decode_row(DType dtype, std::int64_t elements, bool quick) {
  Row row{"", dtype, DType::float64, elements, 0};
  const Pair pair = make_pair(row);
  const Tensor& t = pair.actual.at("out");
  std::vector<double> out(static_cast<std::size_t>(elements));
  const std::span<const std::byte> none;
  time_against_memcpy(
      fmt::format("breakdown: decode_range {}, 256 Ki elements", gpuemu::tensor::dtype_name(dtype)), elements,
      t.data, none,
      [&] {
        t.decode_range(0, out);
        clobber(out.data());
      },
      quick);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string_view only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--rows" && i + 1 < argc) {
      only = argv[++i];
    } else {
      fmt::print(stderr,
                 "bench_compare: unknown argument '{}'; usage: bench_compare [--quick] [--rows TEXT]\n", arg);
      return 2;
    }
  }
  // A trailing '$' asks for the whole name.
  const auto wanted = [&](std::string_view name) {
    return only.ends_with('$') ? name == only.substr(0, only.size() - 1) : name.starts_with(only);
  };
  const std::int64_t small = 4096, mid = 1 << 18, large = std::int64_t{1} << 24;
  const std::vector<Row> rows = {
      {"f32 vs f64, 256 Ki elements (1 MiB f32)", DType::float32, DType::float64, mid, 0},
      {"f32 vs f64, 16 Mi elements (64 MiB f32)", DType::float32, DType::float64, large, 0},
      {"f32 vs f32, 256 Ki elements", DType::float32, DType::float32, mid, 0},
      // Equal storage takes a shortcut (nothing can differ); this row times the element rule itself.
      {"f32 vs f32, 256 Ki elements, half the outputs 1 ULP off", DType::float32, DType::float32, mid, 0,
       0.5},
      {"f16 vs f64, 256 Ki elements", DType::float16, DType::float64, mid, 0},
      {"bf16 vs f64, 256 Ki elements", DType::bfloat16, DType::float64, mid, 0},
      {"f32 vs f64, 256 Ki elements, 1% failing", DType::float32, DType::float64, mid, 0.01},
      // A failing kernel's case: most 16-bit blocks hold a failure, so the pre-check opens them.
      {"f16 vs f64, 256 Ki elements, 1% failing", DType::float16, DType::float64, mid, 0.01},
      {"bf16 vs f64, 256 Ki elements, 1% failing", DType::bfloat16, DType::float64, mid, 0.01},
      // A small tensor's copy runs from L1/L2 with no per-call cost: a latency row, not a throughput
      // one (docs/performance.md, benchmark (b), "What is left").
      {"breakdown: f32 vs f64, 4 Ki elements (small tensor)", DType::float32, DType::float64, small, 0},
  };
  for (const Row& row : rows) {
    if ((quick && row.elements == large) || !wanted(row.name)) continue;
    run_row(row, quick);
  }
  // A one-row case: close to the fixed cost of one compare_outputs call, whatever the tensor size.
  const Row per_call{"breakdown: f32 vs f64, 64 elements (per-call cost)", DType::float32, DType::float64, 64,
                     0};
  if (wanted(per_call.name)) run_row(per_call, quick);
  using gpuemu::check::KernelChoice;
  for (const Row& row : rows) {
    if (row.elements != mid || row.fail_fraction > 0 || row.ref_dtype != DType::float64) continue;
    for (const auto& [kernels, label] :
         {std::pair{KernelChoice::fastest, "fastest"}, std::pair{KernelChoice::avx2, "AVX2"},
          std::pair{KernelChoice::baseline, "baseline"}}) {
      if (wanted(fmt::format("breakdown: {}, statistics alone, {} kernels", row.name, label))) {
        run_kernels_row(row, kernels, label, quick);
      }
    }
  }
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16}) {
    if (wanted(fmt::format("breakdown: decode_range {}", gpuemu::tensor::dtype_name(dtype)))) {
      run_decode_row(dtype, mid, quick);
    }
  }
  return 0;
}
