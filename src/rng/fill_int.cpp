// The integer and bool fill: uniform integers by multiply-shift, boundary candidates and the
// integer adversarial patterns, each element alone from counter-based streams (docs/rng.md 4.6).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "rng/counter.hpp"
#include "rng/seeded_rng.hpp"
#include "rng/value_plan.hpp"

namespace gpuemu::rng {
namespace {

using tensor::DType;

class IntFill {
 public:
  IntFill(const ValuePlan& plan, std::uint64_t seed, const ResolvedDomain& d, std::uint64_t row_len)
      : plan_(plan), ilo_(d.ilo), ihi_(d.ihi), row_len_(row_len) {
    a_ = derive_seed(seed, "values/a");
    b_ = derive_seed(seed, "values/b");
    row_ = derive_seed(seed, "values/row");
    // ihi - ilo + 1 in wrapping u64 arithmetic: 0 means 2^64 (the whole int64 range), as mulhi reads it.
    count_ = static_cast<std::uint64_t>(ihi_) - static_cast<std::uint64_t>(ilo_) + 1;
    zero_ = std::min(std::max<std::int64_t>(0, ilo_), ihi_);
    spike_ = ihi_ != zero_ ? ihi_ : ilo_;
    for (std::uint64_t u : plan.int_pool) {
      pool_.push_back(uniform(u));
    }
    if (plan.distribution == ValueDistribution::boundary) {
      build_boundary();
    }
  }

  std::int64_t value(std::uint64_t i) const {
    switch (plan_.distribution) {
      case ValueDistribution::regular:
        return uniform(counter_u64(a_, i));
      case ValueDistribution::boundary:
        return candidates_[mulhi(counter_u64(a_, i), candidates_.size())];
      default:
        break;
    }
    switch (plan_.int_pattern) {
      case IntPattern::extremes: {
        const std::uint64_t pick = mulhi(counter_u64(b_, i), 4);
        return pick == 0 ? ilo_ : pick == 1 ? ihi_ : uniform(counter_u64(a_, i));
      }
      case IntPattern::ties:
        return pool_[mulhi(counter_u64(a_, i), pool_.size())];
      case IntPattern::zero_rows:
        return (row_u64(i) >> 63) == 1 ? zero_ : uniform(counter_u64(a_, i));
      case IntPattern::one_hot:
        return i % row_len_ == mulhi(row_u64(i), row_len_) ? spike_ : zero_;
    }
    return zero_;
  }

 private:
  std::int64_t uniform(std::uint64_t u) const {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(ilo_) + mulhi(u, count_));
  }

  std::uint64_t row_u64(std::uint64_t i) const { return counter_u64(row_, i / row_len_); }

  void build_boundary() {
    // The spec's list is ilo, ilo+1, ihi-1, ihi, -1, 0, 1, +-2^k (k = 1..62), kept if inside the
    // range; ilo+1 and ihi-1 are outside (and could overflow) exactly when ilo == ihi.
    std::vector<std::int64_t> all = {ilo_};
    if (ilo_ < ihi_) {
      all.insert(all.end(), {ilo_ + 1, ihi_ - 1});
    }
    all.insert(all.end(), {ihi_, -1, 0, 1});
    for (int k = 1; k <= 62; ++k) {
      const std::int64_t p = std::int64_t{1} << k;
      all.insert(all.end(), {p, -p});
    }
    for (std::int64_t v : all) {
      if (ilo_ <= v && v <= ihi_) {
        candidates_.push_back(v);
      }
    }
  }

  const ValuePlan& plan_;
  std::int64_t ilo_, ihi_;
  std::uint64_t row_len_;
  std::uint64_t a_ = 0, b_ = 0, row_ = 0, count_ = 0;
  std::int64_t zero_ = 0, spike_ = 0;
  std::vector<std::int64_t> pool_;
  std::vector<std::int64_t> candidates_;
};

template <class T>
void store_all(const IntFill& fill, std::uint64_t numel, std::byte* out) {
  for (std::uint64_t i = 0; i < numel; ++i) {
    const auto v = static_cast<T>(fill.value(i));
    std::memcpy(out + i * sizeof(T), &v, sizeof(T));
  }
}

}  // namespace

void fill_int(const ValuePlan& plan, std::uint64_t seed, DType dtype, const ResolvedDomain& domain,
              std::uint64_t numel, std::uint64_t row_len, std::byte* out) {
  if (dtype == DType::bool_) {
    const std::uint64_t a = derive_seed(seed, "values/a");
    for (std::uint64_t i = 0; i < numel; ++i) {
      out[i] = static_cast<std::byte>(counter_u64(a, i) >> 63);
    }
    return;
  }
  const IntFill fill(plan, seed, domain, row_len);
  switch (dtype) {
    case DType::int8:
      store_all<std::int8_t>(fill, numel, out);
      break;
    case DType::int16:
      store_all<std::int16_t>(fill, numel, out);
      break;
    case DType::int32:
      store_all<std::int32_t>(fill, numel, out);
      break;
    case DType::uint8:
      store_all<std::uint8_t>(fill, numel, out);
      break;
    default:
      store_all<std::int64_t>(fill, numel, out);
      break;
  }
}

}  // namespace gpuemu::rng
