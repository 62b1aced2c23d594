// Counter-based streams for tensor fill: element j of a stream is computed on its own, so the
// C++ loop and numpy's whole-array arithmetic produce the same numbers (docs/rng.md section 4).
#pragma once

#include <cstdint>

namespace gpuemu::rng {

inline constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

// SplitMix64's output function.
inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Output j of SplitMix64 started from state `stream_seed`.
inline std::uint64_t counter_u64(std::uint64_t stream_seed, std::uint64_t j) {
  return mix64(stream_seed + (j + 1) * kGoldenGamma);
}

// floor(u * n / 2^64): maps u uniformly onto [0, n). n == 0 stands for 2^64 (returns u).
inline std::uint64_t mulhi(std::uint64_t u, std::uint64_t n) {
  if (n == 0) {
    return u;
  }
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(u) * n) >> 64);
}

}  // namespace gpuemu::rng
