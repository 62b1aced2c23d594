// SplitMix64, derive_seed (BLAKE2b-8 via libb2) and the xorshift128+ variant of the original
// gpuemu, exactly as docs/rng.md section 1-2 specify.
#include "rng/seeded_rng.hpp"

#include <blake2.h>

#include <array>
#include <cmath>
#include <numbers>
#include <vector>

#include "rng/counter.hpp"

namespace gpuemu::rng {

std::uint64_t splitmix64(std::uint64_t& state) {
  state += kGoldenGamma;
  return mix64(state);
}

std::uint64_t derive_seed(std::uint64_t seed, std::string_view domain) {
  std::vector<std::uint8_t> message(8 + domain.size());
  for (int i = 0; i < 8; ++i) {
    message[i] = static_cast<std::uint8_t>(seed >> (8 * i));
  }
  for (std::size_t i = 0; i < domain.size(); ++i) {
    message[8 + i] = static_cast<std::uint8_t>(domain[i]);
  }
  std::array<std::uint8_t, 8> digest{};
  // blake2b only fails for bad lengths or null pointers, which cannot happen here.
  blake2b(digest.data(), message.data(), nullptr, digest.size(), message.size(), 0);
  std::uint64_t out = 0;
  for (int i = 7; i >= 0; --i) {
    out = (out << 8) | digest[i];
  }
  return out;
}

SeededRng::SeededRng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t a = seed;
  std::uint64_t b = seed + 1;
  s0_ = splitmix64(a);
  s1_ = splitmix64(b);
}

std::uint64_t SeededRng::next_u64() {
  std::uint64_t x = s0_;
  const std::uint64_t y = s1_;
  s0_ = y;
  x ^= x << 23;
  x ^= x >> 17;
  x ^= y ^ (y >> 26);
  s1_ = x ^ y;  // the original stores x^y, not the textbook x: the published vectors depend on it
  return x + y;
}

double SeededRng::next_f64() {
  return static_cast<double>(next_u64() >> 11) * 0x1p-53;
}

float SeededRng::next_f32() {
  return static_cast<float>(next_u64() >> 40) * 0x1p-24f;
}

std::uint64_t SeededRng::gen_range(std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo) {
    return lo;
  }
  const std::uint64_t span = hi - lo;
  __extension__ using u128 = unsigned __int128;
  u128 product = static_cast<u128>(next_u64()) * span;
  if (static_cast<std::uint64_t>(product) < span) {
    const std::uint64_t threshold = (0 - span) % span;  // 2^64 mod span
    while (static_cast<std::uint64_t>(product) < threshold) {
      product = static_cast<u128>(next_u64()) * span;
    }
  }
  return lo + static_cast<std::uint64_t>(product >> 64);
}

double SeededRng::normal() {
  // std::log and std::cos are glibc's log and cos, as are Python's math.log and math.cos, so the
  // two languages agree bit for bit on the same machine (docs/rng.md says where this could break).
  const double u1 = next_f64();
  const double u2 = next_f64();
  return std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

SeededRng SeededRng::derive(std::string_view domain) const {
  return SeededRng(derive_seed(seed_, domain));
}

}  // namespace gpuemu::rng
