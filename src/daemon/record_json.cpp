// JSON forms shared by the handlers (record_json.hpp).
#include "daemon/record_json.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "config/runnable.hpp"

namespace gpuemu::daemon {

nlohmann::json record_json(const result::CaseRecord& record, store::Millis at, std::int64_t duration_ms,
                           bool stored, std::optional<store::FailureId> failure_id) {
  nlohmann::json doc = result::case_to_json(record);
  doc["passed"] = record.verdict.passed();
  doc["timestamp"] = util::iso_time(at);
  doc["duration_ms"] = duration_ms;
  doc["stored"] = stored;
  if (failure_id) doc["failure_id"] = *failure_id;
  return doc;
}

nlohmann::json stored_failure_json(const store::StoredFailure& failure,
                                   const std::string& minimized_from_seed) {
  nlohmann::json doc = record_json(failure.record, failure.created_at, 0, true, failure.id);
  doc["run_id"] = failure.run_id ? nlohmann::json(*failure.run_id) : nlohmann::json();
  doc["minimized_from"] =
      minimized_from_seed.empty() ? nlohmann::json() : nlohmann::json(minimized_from_seed);
  doc["has_snapshot"] = failure.has_snapshot || failure.record.inputs != nullptr;
  return doc;
}

void add_tensors(Reply& reply, const tensor::NamedTensors& inputs, const std::vector<std::string>& order,
                 std::string_view prefix) {
  std::vector<std::string> names;
  for (const auto& name : order) {
    if (inputs.contains(name) && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  }
  for (const auto& [name, t] : inputs) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const auto& name : names) reply.tensors.emplace_back(std::string(prefix) + name, inputs.at(name));
}

Result<config::Runnable> runnable_field(const std::string& spelling, const config::Config& config,
                                        std::string_view field) {
  config::Runnable r;
  r.spelling = spelling;
  if (config::is_callable_spelling(spelling)) {
    const auto colon = spelling.find(':');
    r.kind = config::Runnable::Kind::callable;
    r.module = spelling.substr(0, colon);
    r.function = spelling.substr(colon + 1);
    return r;
  }
  std::filesystem::path path = spelling;
  if (path.is_relative()) path = config.root / path;
  if (!std::filesystem::is_regular_file(path)) {
    return reject(WireError::bad_request,
                  fmt::format("{} '{}' is neither module:function nor an existing script "
                              "(looked at {})",
                              field, spelling, path.string()));
  }
  r.kind = config::Runnable::Kind::script;
  r.script = std::filesystem::absolute(path);
  return r;
}

tensor::NamedTensors take_tensors(Message& message, std::string_view prefix) {
  tensor::NamedTensors out;
  for (auto it = message.tensors.begin(); it != message.tensors.end();) {
    if (it->first.starts_with(prefix) && it->first.size() > prefix.size()) {
      auto node = message.tensors.extract(it++);
      out.emplace(node.key().substr(prefix.size()), std::move(node.mapped()));
    } else {
      ++it;
    }
  }
  return out;
}

Result<config::CaseLimits> request_limits(const config::Config& config, const Fields& fields) {
  auto limits = config::CaseLimits::of(config.validation);
  const auto elements = TRY(fields.optional_int("max_case_elements", 1, limits.max_elements));
  const auto bytes = TRY(fields.optional_int("max_case_bytes", 1, limits.max_bytes));
  if (elements) limits.max_elements = *elements;
  if (bytes) limits.max_bytes = *bytes;
  return limits;
}

Result<void> check_case_size(const config::CaseSize& size, const config::CaseLimits& limits,
                             const std::string& what) {
  if (auto over = config::over_limits(size, limits, what)) return reject(WireError::bad_request, *over);
  return {};
}

config::CaseSize size_of(std::initializer_list<const tensor::NamedTensors*> tensors) {
  config::CaseSize size;
  for (const auto* named : tensors) {
    for (const auto& [name, t] : *named) size.add(t.shape, tensor::dtype_size(t.dtype));
  }
  return size;
}

}  // namespace gpuemu::daemon
