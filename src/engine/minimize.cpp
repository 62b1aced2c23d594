// The minimizer (see minimize.hpp). Dims shrink by slicing the failing inputs (so the values that
// triggered the bug are kept): per dim, a bisection finds the smallest failing size (assuming that
// failing is monotone in the size), then the tile edges below it (powers of two and their
// neighbours) are tried, since tail bugs fail at 33 but not at 32. Values shrink by zeroing chunks,
// then by snapping them to powers of two and small integers. Every candidate costs one run of op
// and reference out of max_iters; when that runs out, the best case so far is the result.
#include "engine/minimize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include "rng/seeded_rng.hpp"

namespace gpuemu::engine {
namespace {

using tensor::Tensor;

// Where one schema dim appears: (input, axis) pairs.
using DimUses = std::vector<std::pair<std::string, std::size_t>>;

// The sizes a dim may take below its current size, ascending: its candidates, or its range from
// max(min, 1). A range is not materialised (it may be millions long).
class SizeLadder {
 public:
  SizeLadder(const config::DimSpec& dim, std::int64_t current) {
    if (!dim.candidates.empty()) {
      std::set<std::int64_t> below;
      for (auto c : dim.candidates) {
        if (c >= 1 && c < current) below.insert(c);
      }
      list_.assign(below.begin(), below.end());
      count_ = static_cast<std::int64_t>(list_.size());
    } else {
      low_ = std::max<std::int64_t>(dim.min, 1);
      count_ = std::max<std::int64_t>(0, current - low_);
    }
  }
  std::int64_t count() const { return count_; }
  std::int64_t at(std::int64_t i) const {
    return list_.empty() ? low_ + i : list_[static_cast<std::size_t>(i)];
  }
  bool contains(std::int64_t size) const {
    if (!list_.empty()) return std::binary_search(list_.begin(), list_.end(), size);
    return size >= low_ && size < low_ + count_;
  }

 private:
  std::vector<std::int64_t> list_;
  std::int64_t low_ = 1;
  std::int64_t count_ = 0;
};

// Tile edges below `limit`, ascending: each power of two and its neighbours.
std::vector<std::int64_t> tile_edges_below(std::int64_t limit) {
  std::set<std::int64_t> edges;
  for (std::int64_t p = 1; p <= limit && p > 0; p *= 2) {
    for (std::int64_t v : {p - 1, p, p + 1}) {
      if (v >= 1 && v < limit) edges.insert(v);
    }
  }
  return {edges.begin(), edges.end()};
}

// Snaps a value to the nearest power of two (keeping the sign), or leaves 0 alone.
double power_of_two(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  return std::copysign(std::exp2(std::round(std::log2(std::fabs(v)))), v);
}

// What happened to one candidate.
enum class Tried { accepted, rejected, out_of_budget };

class Minimizer {
 public:
  Minimizer(OpSession& session, const fuzz::Case& original, const MinimizeOptions& options)
      : session_(session),
        options_(options),
        best_(original),
        minimized_seed_(rng::derive_seed(original.seed, "minimized")) {
    for (auto& [name, t] : best_.inputs) contiguous_[name] = t.contiguous();
  }

  Expected<MinimizeResult> run() {
    MinimizeResult result;
    ++attempts_;
    result.original = TRY(session_.run_case(best_));
    kind_ = result.original.verdict.kind;
    best_record_ = result.original;
    if (result.original.verdict.passed()) {
      return fail(ErrorKind::usage,
                  "case " + std::to_string(best_.seed) +
                      " passes now, so there is nothing to minimize; was the kernel fixed?");
    }
    // The inputs are the truth about the dims (a snapshot may predate a config change, a
    // client's case may carry none): record what they say.
    if (const auto& schema = session_.op().schema) {
      for (const auto& dim : schema->dims) {
        DimUses uses;
        if (const auto size = current_size(dim.name, uses)) best_.dims[dim.name] = *size;
      }
    }
    if (options_.strategy != MinimizeStrategy::values) {
      phase_ = MinimizePhase::dims;
      TRY(shrink_dims());
    }
    if (!out_of_budget_ && options_.strategy != MinimizeStrategy::dims) {
      phase_ = MinimizePhase::values;
      TRY(shrink_values());
    }
    result.minimized = best_record_;
    result.minimized_case = best_;
    result.steps = steps_;
    result.attempts = attempts_;
    if (out_of_budget_) result.out_of_budget_in = phase_;
    return result;
  }

 private:
  // Runs a candidate; adopts it when it fails with the original kind. Out of budget, runs nothing.
  Expected<Tried> try_candidate(fuzz::Case candidate, std::map<std::string, Tensor> contiguous) {
    if (attempts_ >= options_.max_iters) {
      out_of_budget_ = true;
      return Tried::out_of_budget;
    }
    ++attempts_;
    for (auto& [name, t] : contiguous) {
      candidate.inputs[name] = candidate.params.layout == tensor::Layout::contiguous
                                   ? t
                                   : tensor::with_layout(t, candidate.params.layout);
    }
    candidate.seed = minimized_seed_;  // an id for the store; replay uses the snapshot
    auto record = TRY(session_.run_case(candidate));
    const bool same_failure = record.verdict.kind == kind_;
    if (same_failure) {
      best_ = std::move(candidate);
      contiguous_ = std::move(contiguous);
      best_record_ = std::move(record);
      ++steps_;
    }
    if (options_.on_progress) options_.on_progress(attempts_, best_);
    return same_failure ? Tried::accepted : Tried::rejected;
  }

  // Where `dim` appears in the inputs, and its current size read from them. nullopt when the
  // inputs disagree with the schema (a snapshot stored under another config, or a client's
  // inputs): slicing such a dim would cut the wrong axes, so it is left alone.
  std::optional<std::int64_t> current_size(const std::string& dim, DimUses& uses) const {
    std::optional<std::int64_t> size;
    for (const auto& [input, refs] : session_.op().schema->inputs) {
      const auto it = contiguous_.find(input);
      if (it == contiguous_.end()) continue;
      const auto& shape = it->second.shape;
      for (std::size_t axis = 0; axis < refs.size(); ++axis) {
        const auto* name = std::get_if<std::string>(&refs[axis]);
        if (!name || *name != dim) continue;
        if (refs.size() != shape.size()) return std::nullopt;
        if (size && *size != shape[axis]) return std::nullopt;
        size = shape[axis];
        uses.emplace_back(input, axis);
      }
    }
    if (!size || *size < 1) return std::nullopt;
    return size;
  }

  // Slices every use of `dim` down to `size` (the leading or the trailing block) and tries it.
  Expected<Tried> try_size(const std::string& dim, const DimUses& uses, std::int64_t size, bool trailing) {
    fuzz::Case candidate = best_;
    candidate.dims[dim] = size;
    std::map<std::string, Tensor> sliced = contiguous_;
    std::map<std::string, std::vector<std::size_t>> axes;  // an input may use the dim twice (a[N, N])
    for (const auto& [input, axis] : uses) axes[input].push_back(axis);
    for (const auto& [input, input_axes] : axes) {
      const Tensor& whole = contiguous_.at(input);
      tensor::Shape sizes = whole.shape;
      tensor::Shape offsets(sizes.size(), 0);
      for (auto axis : input_axes) {
        sizes[axis] = size;
        if (trailing) offsets[axis] = whole.shape[axis] - size;
      }
      sliced[input] = sub_block(whole, offsets, sizes);
    }
    return try_candidate(std::move(candidate), std::move(sliced));
  }

  // Does `size` fail (leading block first, then, with `both_ends`, trailing: the elements that
  // fail may sit at either end, a tail tile is at the end)? Adopts the first that does.
  Expected<Tried> fails_at(const std::string& dim, std::int64_t size, bool both_ends = true) {
    DimUses uses;
    const auto current = current_size(dim, uses);
    if (!current || size >= *current) return Tried::rejected;
    for (bool trailing : {false, true}) {
      if (trailing && !both_ends) break;
      const Tried tried = TRY(try_size(dim, uses, size, trailing));
      if (tried != Tried::rejected) return tried;
    }
    return Tried::rejected;
  }

  // Shrinks one dim as far as it goes. Returns false when the budget ran out.
  Expected<bool> shrink_dim(const config::DimSpec& dim) {
    for (;;) {
      DimUses uses;
      const auto current = current_size(dim.name, uses);
      if (!current) return true;
      const SizeLadder ladder(dim, *current);
      if (ladder.count() == 0) return true;
      std::set<std::int64_t> tried;
      // Bisection over the ladder: `hi` fails (count() stands for the current size), `lo` passes.
      const Tried first = TRY(fails_at(dim.name, ladder.at(0)));
      if (first == Tried::out_of_budget) return false;
      if (first == Tried::accepted) return true;  // the smallest size there is
      tried.insert(ladder.at(0));
      std::int64_t lo = 0;
      std::int64_t hi = ladder.count();
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        const Tried t = TRY(fails_at(dim.name, ladder.at(mid)));
        if (t == Tried::out_of_budget) return false;
        tried.insert(ladder.at(mid));
        if (t == Tried::accepted) {
          hi = mid;
        } else {
          lo = mid;
        }
      }
      // Failing need not be monotone in the size (a tail bug passes at every multiple of its
      // tile): try the tile edges below the bisection's answer, smallest first, and bisect again
      // below the first that fails. Only the leading block: about 3 log2(size) edges, one run each.
      const std::int64_t found = hi == ladder.count() ? *current : ladder.at(hi);
      bool again = false;
      for (std::int64_t edge : tile_edges_below(found)) {
        if (!ladder.contains(edge) || tried.count(edge)) continue;
        const Tried t = TRY(fails_at(dim.name, edge, false));
        if (t == Tried::out_of_budget) return false;
        if (t == Tried::accepted) {
          again = true;
          break;
        }
      }
      if (!again) return true;
    }
  }

  Expected<void> shrink_dims() {
    const auto& op = session_.op();
    if (!op.schema) return {};
    // A dim is searched again only when an accepted step changed the case since its last search
    // (a smaller K may let M shrink further); the search ends when a full round changed nothing.
    std::map<std::string, int> searched_at_step;
    bool progress = true;
    while (progress) {
      progress = false;
      for (const auto& dim : op.schema->dims) {
        const auto seen = searched_at_step.find(dim.name);
        if (seen != searched_at_step.end() && seen->second == steps_) continue;
        const int before = steps_;
        if (!TRY(shrink_dim(dim))) return {};
        searched_at_step[dim.name] = steps_;
        if (steps_ != before) progress = true;
      }
    }
    return {};
  }

  // Applies `edit` to the elements [first, last) of one input and tries the result.
  template <class Edit>
  Expected<Tried> try_edit(const std::string& name, std::int64_t first, std::int64_t last, Edit edit) {
    auto edited = contiguous_;
    Tensor& t = edited.at(name);
    std::vector<double> values = t.to_doubles();
    bool changed = false;
    for (std::int64_t i = first; i < last; ++i) {
      const double v = edit(values[i]);
      if (!(v == values[i] || (std::isnan(v) && std::isnan(values[i])))) changed = true;
      values[i] = v;
    }
    if (!changed) return Tried::rejected;
    t = Tensor::from_doubles(t.dtype, t.shape, values);
    return try_candidate(best_, std::move(edited));
  }

  Expected<void> shrink_values() {
    const auto edits = std::array<double (*)(double), 3>{
        [](double) { return 0.0; }, [](double v) { return power_of_two(v); },
        [](double v) { return std::isfinite(v) ? std::clamp(std::round(v), -4.0, 4.0) : v; }};
    // A copy, not a reference into best_: every accepted edit replaces best_.
    const std::vector<std::string> names = best_.input_order;
    for (auto edit : edits) {
      for (const auto& name : names) {
        const auto it = contiguous_.find(name);
        if (it == contiguous_.end()) continue;
        const std::int64_t n = it->second.numel();
        if (n == 0) continue;
        // Whole tensor first, then halves, quarters, ... down to 1/64th.
        for (std::int64_t chunk = n; chunk >= std::max<std::int64_t>(1, n / 64); chunk /= 2) {
          for (std::int64_t first = 0; first < n; first += chunk) {
            if (TRY(try_edit(name, first, std::min(n, first + chunk), edit)) == Tried::out_of_budget)
              return {};
          }
          if (chunk == 1) break;
        }
      }
    }
    return {};
  }

  OpSession& session_;
  const MinimizeOptions& options_;
  fuzz::Case best_;
  result::CaseRecord best_record_;
  std::map<std::string, Tensor> contiguous_;
  check::FailureKind kind_ = check::FailureKind::none;
  std::uint64_t minimized_seed_;
  MinimizePhase phase_ = MinimizePhase::dims;
  bool out_of_budget_ = false;
  int steps_ = 0;
  int attempts_ = 0;
};

}  // namespace

std::optional<MinimizeStrategy> parse_minimize_strategy(std::string_view name) {
  if (name == "dims") return MinimizeStrategy::dims;
  if (name == "values") return MinimizeStrategy::values;
  if (name == "all") return MinimizeStrategy::all;
  return std::nullopt;
}

std::string_view minimize_phase_name(MinimizePhase phase) {
  return phase == MinimizePhase::dims ? "dims" : "values";
}

nlohmann::json search_json(const MinimizeResult& result, const MinimizeOptions& options) {
  return {
      {"steps", result.steps},
      {"attempts", result.attempts},
      {"max_iters", options.max_iters},
      {"out_of_budget", result.out_of_budget_in.has_value()},
      {"stopped_in", result.out_of_budget_in ? nlohmann::json(minimize_phase_name(*result.out_of_budget_in))
                                             : nlohmann::json()}};
}

Tensor sub_block(const Tensor& contiguous, const tensor::Shape& offsets, const tensor::Shape& sizes) {
  // A block that leaves the tensor would read past its data: refuse it loudly (a bug in the caller).
  bool inside = contiguous.is_contiguous() && offsets.size() == contiguous.shape.size() &&
                sizes.size() == contiguous.shape.size();
  for (std::size_t axis = 0; inside && axis < sizes.size(); ++axis) {
    inside = offsets[axis] >= 0 && sizes[axis] >= 0 && offsets[axis] + sizes[axis] <= contiguous.shape[axis];
  }
  if (!inside) {
    throw std::out_of_range("sub_block: block at " + tensor::shape_to_string(offsets) + " of size " +
                            tensor::shape_to_string(sizes) + " is not inside a contiguous tensor of shape " +
                            tensor::shape_to_string(contiguous.shape));
  }
  Tensor out;
  out.dtype = contiguous.dtype;
  out.shape = sizes;
  out.strides = tensor::contiguous_strides(sizes);
  const std::size_t item = tensor::dtype_size(contiguous.dtype);
  const std::int64_t n = tensor::shape_numel(sizes);
  out.data.resize(static_cast<std::size_t>(n) * item);
  const auto source_strides = tensor::contiguous_strides(contiguous.shape);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto index = tensor::unravel_index(sizes, i);
    std::int64_t offset = 0;
    for (std::size_t axis = 0; axis < index.size(); ++axis) {
      offset += (index[axis] + offsets[axis]) * source_strides[axis];
    }
    std::memcpy(out.data.data() + i * item, contiguous.data.data() + offset * item, item);
  }
  return out;
}

Expected<MinimizeResult> minimize(OpSession& session, const fuzz::Case& original,
                                  const MinimizeOptions& options) {
  Minimizer minimizer(session, original, options);
  return minimizer.run();
}

}  // namespace gpuemu::engine
