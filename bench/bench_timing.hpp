// Timing helpers of the C++ benchmarks (bench_compare, bench_fill): a min/median statistic, its
// JSON form for bench/run.py, and a barrier that keeps the compiler from dropping timed work.
#pragma once

#include <fmt/format.h>

#include <algorithm>
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

}  // namespace gpuemu::bench
