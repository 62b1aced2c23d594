// The minimizer (see minimize.hpp). Dims shrink by slicing the failing inputs (so the values that
// triggered the bug are kept), trying the smallest candidates first; values shrink by zeroing
// chunks, then by snapping them to powers of two and small integers.
#include "engine/minimize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "rng/seeded_rng.hpp"
#include "tensor/element.hpp"

namespace gpuemu::engine {
namespace {

using tensor::Tensor;

// Dim sizes worth trying below `current`, smallest first: the range's low end, halves and
// quarters, one below, and each power of two with its neighbours (tile edges).
std::vector<std::int64_t> smaller_sizes(const config::DimSpec& dim, std::int64_t current) {
  std::set<std::int64_t> sizes;
  if (!dim.candidates.empty()) {
    for (auto c : dim.candidates) {
      if (c < current) sizes.insert(c);
    }
    return {sizes.begin(), sizes.end()};
  }
  for (std::int64_t v : {dim.min, dim.min + 1, dim.min + 2, current / 4, current / 2 - 1, current / 2,
                         current / 2 + 1, (3 * current) / 4, current - 2, current - 1}) {
    sizes.insert(v);
  }
  for (std::int64_t p = 1; p < current; p *= 2) {
    for (std::int64_t v : {p - 1, p, p + 1}) sizes.insert(v);
  }
  std::vector<std::int64_t> out;
  for (auto v : sizes) {
    if (v >= dim.min && v < current && v >= 1) out.push_back(v);
  }
  return out;
}

// Snaps a value to the nearest power of two (keeping the sign), or leaves 0 alone.
double power_of_two(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  return std::copysign(std::exp2(std::round(std::log2(std::fabs(v)))), v);
}

class Minimizer {
 public:
  Minimizer(OpSession& session, const fuzz::Case& original, const MinimizeOptions& options)
      : session_(session), options_(options), best_(original), minimized_seed_(rng::derive_seed(original.seed, "minimized")) {
    for (auto& [name, t] : best_.inputs) contiguous_[name] = t.contiguous();
  }

  Expected<MinimizeResult> run() {
    MinimizeResult result;
    result.original = TRY(session_.run_case(best_));
    kind_ = result.original.verdict.kind;
    best_record_ = result.original;
    if (result.original.verdict.passed()) {
      return fail(ErrorKind::usage, "case " + std::to_string(best_.seed) +
                                        " passes now, so there is nothing to minimize; was the kernel fixed?");
    }
    if (options_.strategy != MinimizeStrategy::values) TRY(shrink_dims());
    if (options_.strategy != MinimizeStrategy::dims) TRY(shrink_values());
    result.minimized = best_record_;
    result.minimized_case = best_;
    result.steps = steps_;
    result.attempts = attempts_;
    return result;
  }

 private:
  bool budget_left() const { return attempts_ < options_.max_iters; }

  // Runs a candidate; adopts it when it fails with the original kind.
  Expected<bool> try_candidate(fuzz::Case candidate, std::map<std::string, Tensor> contiguous) {
    ++attempts_;
    for (auto& [name, t] : contiguous) {
      candidate.inputs[name] =
          candidate.params.layout == tensor::Layout::contiguous ? t : tensor::with_layout(t, candidate.params.layout);
    }
    candidate.seed = minimized_seed_;  // an id for the store; replay uses the snapshot
    auto record = TRY(session_.run_case(candidate));
    if (options_.on_progress) options_.on_progress(attempts_, best_);
    if (record.verdict.kind != kind_) return false;
    best_ = std::move(candidate);
    contiguous_ = std::move(contiguous);
    best_record_ = std::move(record);
    ++steps_;
    return true;
  }

  Expected<void> shrink_dims() {
    const auto& op = session_.op();
    if (!op.schema) return {};
    bool progress = true;
    while (progress && budget_left()) {
      progress = false;
      for (const auto& dim : op.schema->dims) {
        const std::int64_t current = best_.dims[dim.name];
        for (std::int64_t size : smaller_sizes(dim, current)) {
          // Keep the leading block first, then the trailing one: the elements that fail may sit
          // at either end (a tail tile is at the end).
          bool accepted = false;
          for (bool trailing : {false, true}) {
            if (!budget_left()) return {};
            fuzz::Case candidate = best_;
            candidate.dims[dim.name] = size;
            std::map<std::string, Tensor> sliced;
            for (const auto& [input, refs] : op.schema->inputs) {
              auto it = contiguous_.find(input);
              if (it == contiguous_.end()) continue;
              tensor::Shape sizes = it->second.shape;
              tensor::Shape offsets(sizes.size(), 0);
              for (std::size_t axis = 0; axis < refs.size() && axis < sizes.size(); ++axis) {
                if (const auto* name = std::get_if<std::string>(&refs[axis]); name && *name == dim.name) {
                  // A snapshot stored under another config may not have this dim's size here;
                  // slicing past the axis would read outside the tensor.
                  if (sizes[axis] < size) return {};
                  if (trailing) offsets[axis] = sizes[axis] - size;
                  sizes[axis] = size;
                }
              }
              sliced[input] = sub_block(it->second, offsets, sizes);
            }
            for (const auto& [name, t] : contiguous_) {
              if (!sliced.count(name)) sliced[name] = t;
            }
            if (TRY(try_candidate(candidate, std::move(sliced)))) {
              accepted = true;
              break;
            }
          }
          if (accepted) {
            progress = true;
            break;
          }
        }
      }
    }
    return {};
  }

  // Applies `edit` to the elements [first, last) of one input and tries the result.
  template <class Edit>
  Expected<bool> try_edit(const std::string& name, std::int64_t first, std::int64_t last, Edit edit) {
    auto edited = contiguous_;
    Tensor& t = edited.at(name);
    std::vector<double> values = t.to_doubles();
    bool changed = false;
    for (std::int64_t i = first; i < last; ++i) {
      const double v = edit(values[i]);
      if (!(v == values[i] || (std::isnan(v) && std::isnan(values[i])))) changed = true;
      values[i] = v;
    }
    if (!changed) return false;
    t = Tensor::from_doubles(t.dtype, t.shape, values);
    return try_candidate(best_, std::move(edited));
  }

  Expected<void> shrink_values() {
    const auto edits = std::array<double (*)(double), 3>{
        [](double) { return 0.0; }, [](double v) { return power_of_two(v); },
        [](double v) { return std::isfinite(v) ? std::clamp(std::round(v), -4.0, 4.0) : v; }};
    // A copy: an accepted edit replaces best_ (and its input_order) while we iterate.
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
            if (!budget_left()) return {};
            TRY(try_edit(name, first, std::min(n, first + chunk), edit));
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
  CaseRecord best_record_;
  std::map<std::string, Tensor> contiguous_;
  check::FailureKind kind_ = check::FailureKind::none;
  std::uint64_t minimized_seed_;
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

Tensor sub_block(const Tensor& contiguous, const tensor::Shape& offsets, const tensor::Shape& sizes) {
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

Expected<MinimizeResult> minimize(OpSession& session, const fuzz::Case& original, const MinimizeOptions& options) {
  Minimizer minimizer(session, original, options);
  return minimizer.run();
}

}  // namespace gpuemu::engine
