// Timing helpers of the C++ benchmarks (bench_compare, bench_fill): work timed pair by pair
// against a memcpy, a min/median statistic and its JSON form for bench/run.py, and a barrier that
// keeps the compiler from dropping timed work.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace gpuemu::bench {

// Keeps the compiler from dropping a copy whose destination is never read.
inline void clobber(void* p) {
  asm volatile("" : : "g"(p) : "memory");
}

struct Stat {
  double min = 0;
  double median = 0;
};

inline Stat stat_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2]};
}

inline std::string stat_json(const Stat& s) {
  return fmt::format("{{\"min\": {:.6g}, \"median\": {:.6g}}}", s.min, s.median);
}

// Nanoseconds a run of `work` and of `copy` took, sample by sample, and their ratio copy / work.
struct Paired {
  std::vector<double> work_ns;
  std::vector<double> copy_ns;
  std::vector<double> ratios;
};

// Times `repeats` runs of `work`, then as many of `copy`, per sample (their mean is the sample), so
// the machine's drift hits both; at least `min_pairs` samples, then more until `budget_ns` of
// timed work or `max_pairs`.
template <class Work, class Copy>
Paired time_pairs(Work work, Copy copy, int repeats, double budget_ns, std::size_t min_pairs,
                  std::size_t max_pairs) {
  using Clock = std::chrono::steady_clock;
  Paired p;
  double spent = 0;
  while (p.work_ns.size() < min_pairs || (spent < budget_ns && p.work_ns.size() < max_pairs)) {
    const auto t0 = Clock::now();
    for (int i = 0; i < repeats; ++i) work();
    const auto t1 = Clock::now();
    for (int i = 0; i < repeats; ++i) copy();
    const auto t2 = Clock::now();
    const double w = std::chrono::duration<double, std::nano>(t1 - t0).count() / repeats;
    const double m = std::chrono::duration<double, std::nano>(t2 - t1).count() / repeats;
    p.work_ns.push_back(w);
    p.copy_ns.push_back(m);
    p.ratios.push_back(m / w);
    spent += (w + m) * repeats;
  }
  return p;
}

}  // namespace gpuemu::bench
