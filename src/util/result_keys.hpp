// The names of result.json's error-statistic and tolerance fields (docs/result-json.md), spelled
// once: the engine writes them, the reports, the daemon, history and attestations read them.
#pragma once

#include <array>

namespace gpuemu::util::result_keys {

inline constexpr const char* kMaxAbs = "max_abs";
inline constexpr const char* kMaxRel = "max_rel";
inline constexpr const char* kMaxUlp = "max_ulp";
inline constexpr const char* kToleranceUsed = "tolerance_used";  // worst fraction of the tolerance used
inline constexpr const char* kAtol = "atol";
inline constexpr const char* kRtol = "rtol";

// The error statistics of a case or an (op, dtype) entry, in the order reports print them.
inline constexpr std::array<const char*, 4> kErrorStats = {kMaxAbs, kMaxRel, kMaxUlp, kToleranceUsed};
// The tolerance a case was judged with.
inline constexpr std::array<const char*, 2> kTolerance = {kAtol, kRtol};
// Both, as result.json lists them.
inline constexpr std::array<const char*, 6> kErrorStatsAndTolerance = {kMaxAbs,        kMaxRel, kMaxUlp,
                                                                       kToleranceUsed, kAtol,   kRtol};

}  // namespace gpuemu::util::result_keys
