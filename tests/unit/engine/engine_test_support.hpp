// Fakes for the engine tests: runners that answer from C++ functions instead of Python processes
// (ninja's FakeCommandRunner pattern, through the proc::RunnerFactory seam), a few such functions
// (a float64 cumsum reference, a blocked cumsum that drops its carry, an identity), and configs
// whose ops name them as "fake:<function>" callables.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config/loader.hpp"
#include "proc/runner.hpp"

namespace gpuemu::engine::testing {

// Answers one request as a script would: outputs, or a failure.
using FakeFn = std::function<proc::RunOutcome(const proc::RunRequest&)>;

// The fake runners of one test: a function per callable name, and a log of what ran.
class FakeRunners {
 public:
  void add(const std::string& function, FakeFn fn) { functions_[function] = std::move(fn); }

  proc::RunnerFactory factory() {
    return [this](const config::Runnable& runnable, const proc::RunnerSettings& settings) {
      auto it = functions_.find(runnable.function);
      if (it == functions_.end())
        ADD_FAILURE() << "no fake for " << runnable.spelling << " (" << settings.role << ")";
      FakeFn fn = it == functions_.end() ? FakeFn() : it->second;
      return std::make_unique<Runner>(this, runnable.function, std::move(fn));
    };
  }

  int calls() const { return calls_; }
  // Every warm_up: (the runner's function, how many runs had been asked of any runner by then).
  std::vector<std::pair<std::string, int>> warm_ups() const {
    std::lock_guard lock(mutex_);
    return warm_ups_;
  }
  // Shapes of the first input of every request, in order (under --jobs, in completion order).
  std::vector<tensor::Shape> first_input_shapes() const {
    std::lock_guard lock(mutex_);
    return shapes_;
  }
  // A hash of the first input's bytes for every request, in the same order.
  std::vector<std::size_t> first_input_hashes() const {
    std::lock_guard lock(mutex_);
    return hashes_;
  }

 private:
  class Runner final : public proc::Runner {
   public:
    Runner(FakeRunners* owner, std::string function, FakeFn fn)
        : owner_(owner), function_(std::move(function)), fn_(std::move(fn)) {}
    void warm_up() override {
      std::lock_guard lock(owner_->mutex_);
      owner_->warm_ups_.emplace_back(function_, owner_->calls_.load());
    }
    proc::RunOutcome run(const proc::RunRequest& request) override {
      ++owner_->calls_;
      {
        std::lock_guard lock(owner_->mutex_);
        if (request.inputs && !request.inputs->empty()) {
          const auto& t = request.inputs->begin()->second;
          owner_->shapes_.push_back(t.shape);
          const std::string_view bytes(reinterpret_cast<const char*>(t.data.data()), t.data.size());
          owner_->hashes_.push_back(std::hash<std::string_view>{}(bytes));
        }
      }
      if (!fn_) return {proc::RunFailure::start_failed, {}, "no fake runner", {}, {}};
      return fn_(request);
    }

   private:
    FakeRunners* owner_;
    std::string function_;
    FakeFn fn_;
  };

  std::map<std::string, FakeFn> functions_;
  std::atomic<int> calls_{0};
  std::vector<std::pair<std::string, int>> warm_ups_;
  mutable std::mutex mutex_;
  std::vector<tensor::Shape> shapes_;
  std::vector<std::size_t> hashes_;
};

inline proc::RunOutcome answer(tensor::Tensor out) {
  proc::RunOutcome outcome;
  outcome.outputs["out"] = std::move(out);
  return outcome;
}

inline const tensor::Tensor& input(const proc::RunRequest& request, const std::string& name) {
  return request.inputs->at(name);
}

// Cumsum over the last axis of input x, in float64 (the reference).
inline proc::RunOutcome cumsum_reference(const proc::RunRequest& request) {
  const auto& x = input(request, "x");
  auto values = x.to_doubles();
  const std::int64_t n = x.shape.empty() ? 1 : x.shape.back();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (static_cast<std::int64_t>(i) % n != 0) values[i] += values[i - 1];
  }
  return answer(tensor::Tensor::from_doubles(tensor::DType::float64, x.shape, values));
}

// A blocked cumsum (BLOCK = 32) that drops the carry between blocks: wrong past the first block
// unless the earlier blocks sum to zero.
inline proc::RunOutcome cumsum_no_carry(const proc::RunRequest& request) {
  const auto& x = input(request, "x");
  auto values = x.to_doubles();
  const std::int64_t n = x.shape.empty() ? 1 : x.shape.back();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t column = static_cast<std::int64_t>(i) % n;
    if (column % 32 != 0) values[i] += values[i - 1];
  }
  return answer(tensor::Tensor::from_doubles(x.dtype, x.shape, values));
}

// The correct cumsum in the input's dtype.
inline proc::RunOutcome cumsum_ok(const proc::RunRequest& request) {
  auto out = cumsum_reference(request);
  const auto& t = out.outputs["out"];
  out.outputs["out"] = tensor::Tensor::from_doubles(input(request, "x").dtype, t.shape, t.to_doubles());
  return out;
}

// A project whose ops call fakes: `ops` is the [[ops]] part, e.g. from cumsum_op().
// `dtypes` is the TOML array of [validation] dtypes.
inline config::Config fake_config(const std::string& ops, const std::string& dtypes = "[\"float32\"]") {
  const std::string text =
      "[project]\nname = \"engine-tests\"\n\n[validation]\ndtypes = " + dtypes + "\nseed = 7\n\n" + ops;
  auto config = config::load_config_text(text, std::filesystem::path(GPUEMU_SOURCE_DIR) / "gpuemu.toml");
  if (!config) {
    ADD_FAILURE() << config.error().message;
    return {};
  }
  return std::move(*config);
}

// One op over x[M, N] with the given fake op and reference and dim ranges.
inline std::string cumsum_op(const std::string& name, const std::string& op_function, const std::string& dims,
                             const std::string& extra = "") {
  return "[[ops]]\nname = \"" + name + "\"\nop_script = \"fake:" + op_function +
         "\"\nreference = \"fake:cumsum_reference\"\n" + extra + "\n[ops.schema]\ndims = { " + dims +
         " }\ninputs = { x = [\"M\", \"N\"] }\n";
}

}  // namespace gpuemu::engine::testing
