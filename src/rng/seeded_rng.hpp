// The scalar generator that replay depends on, byte-identical with python/gpuemu/_internal/core/rng.py and the
// original gpuemu's published vectors (docs/rng.md is the normative spec; tests/vectors/ pins it).
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuemu::rng {

// One SplitMix64 step: advances `state` by the golden gamma and returns the mixed output.
std::uint64_t splitmix64(std::uint64_t& state);

// derive_seed(seed, domain) = BLAKE2b (8-byte digest) over seed's 8 little-endian bytes followed
// by the UTF-8 domain, read as a little-endian u64.
std::uint64_t derive_seed(std::uint64_t seed, std::string_view domain);

// xorshift128+ variant: state from SplitMix64(seed) and SplitMix64(seed+1); the step stores x^y.
class SeededRng {
 public:
  explicit SeededRng(std::uint64_t seed);
  std::uint64_t next_u64();
  double next_f64();  // (u >> 11) / 2^53, in [0, 1)
  float next_f32();   // (u >> 40) / 2^24, in [0, 1); Python's gen_f32
  // Uniform in [lo, hi) by Lemire's multiply-shift with rejection (unbiased). hi <= lo returns lo
  // without drawing (Python raises ValueError there instead).
  std::uint64_t gen_range(std::uint64_t lo, std::uint64_t hi);
  double normal();                                  // Box-Muller, two draws; spec in docs/rng.md
  SeededRng derive(std::string_view domain) const;  // new generator from derive_seed(seed, domain)
  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t seed_;
  std::uint64_t s0_;
  std::uint64_t s1_;
};

}  // namespace gpuemu::rng
