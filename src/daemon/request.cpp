// Error kinds and typed field readers of requests (request.hpp, docs/protocol.md).
#include "daemon/request.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "tensor/dtype.hpp"
#include "util/seed.hpp"

namespace gpuemu::daemon {

const std::string kDtypeChoices = fmt::format("one of {}", fmt::join(tensor::all_dtype_names(), ", "));

namespace {

constexpr std::array<std::pair<WireError, std::string_view>, 11> kWireErrors = {{
    {WireError::bad_message, "bad_message"},
    {WireError::protocol_mismatch, "protocol_mismatch"},
    {WireError::bad_request, "bad_request"},
    {WireError::not_found, "not_found"},
    {WireError::config, "config"},
    {WireError::io, "io"},
    {WireError::parse, "parse"},
    {WireError::environment, "environment"},
    {WireError::shutting_down, "shutting_down"},
    {WireError::internal, "internal"},
    {WireError::busy, "busy"},
}};

WireError from_error_kind(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return WireError::bad_request;
    case ErrorKind::config:
      return WireError::config;
    case ErrorKind::io:
      return WireError::io;
    case ErrorKind::parse:
      return WireError::parse;
    case ErrorKind::environment:
      return WireError::environment;
    case ErrorKind::internal:
      return WireError::internal;
  }
  return WireError::internal;
}

std::string_view type_name(const nlohmann::json& value) {
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number()) return "a number";
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  return "null";
}

}  // namespace

std::string_view wire_error_name(WireError kind) {
  for (const auto& [k, name] : kWireErrors) {
    if (k == kind) return name;
  }
  return "internal";
}

std::optional<WireError> parse_wire_error(std::string_view name) {
  for (const auto& [k, n] : kWireErrors) {
    if (n == name) return k;
  }
  return std::nullopt;
}

RequestError::RequestError(const Error& error) : kind(from_error_kind(error.kind)), message(error.message) {}

const nlohmann::json* Fields::find(std::string_view key) const {
  auto it = header_.find(std::string(key));
  if (it == header_.end() || it->is_null()) return nullptr;
  return &*it;
}

RequestError Fields::unknown_choice(std::string_view key, std::string_view name, std::string_view choices,
                                    bool in_list) const {
  return RequestError(WireError::bad_request,
                      in_list
                          ? fmt::format("{} request: '{}' in \"{}\" is not {}", request_, name, key, choices)
                          : fmt::format("{} request: {} '{}' is not {}", request_, key, name, choices));
}

RequestError Fields::bad(std::string_view key, std::string_view expected) const {
  const auto* value = find(key);
  return RequestError(
      WireError::bad_request,
      fmt::format("{} request: field \"{}\" must be {}{}", request_, key, expected,
                  value ? fmt::format(", got {}", type_name(*value)) : std::string(" (it is missing)")));
}

Result<std::string> Fields::string(std::string_view key) const {
  const auto* value = find(key);
  if (!value || !value->is_string()) return std::unexpected(bad(key, "a string"));
  return value->get<std::string>();
}

Result<std::optional<std::string>> Fields::optional_string(std::string_view key) const {
  if (!find(key)) return std::optional<std::string>();
  return TRY(string(key));
}

Result<std::uint64_t> Fields::seed(std::string_view key) const {
  const auto* value = find(key);
  if (!value || !value->is_string()) {
    return std::unexpected(bad(key, "a seed as a decimal string (\"0\" to \"18446744073709551615\")"));
  }
  const auto parsed = util::parse_seed(value->get_ref<const std::string&>());
  if (!parsed) {
    return reject(
        WireError::bad_request,
        fmt::format("{} request: field \"{}\" is \"{}\", not an unsigned 64-bit decimal seed (\"0\" to "
                    "\"18446744073709551615\")",
                    request_, key, value->get<std::string>()));
  }
  return *parsed;
}

Result<std::optional<std::uint64_t>> Fields::optional_seed(std::string_view key) const {
  if (!find(key)) return std::optional<std::uint64_t>();
  return TRY(seed(key));
}

Result<std::optional<std::int64_t>> Fields::optional_int(std::string_view key, std::int64_t min,
                                                         std::int64_t max) const {
  const auto* value = find(key);
  if (!value) return std::optional<std::int64_t>();
  if (!value->is_number_integer())
    return std::unexpected(bad(key, fmt::format("an integer from {} to {}", min, max)));
  // Unsigned values above INT64_MAX read as negative through get<int64_t>; check the sign first.
  if (value->is_number_unsigned() && value->get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
    return reject(WireError::bad_request,
                  fmt::format("{} request: field \"{}\" must be at most {}", request_, key, max));
  }
  const auto v = value->get<std::int64_t>();
  if (v < min || v > max) {
    return reject(
        WireError::bad_request,
        fmt::format("{} request: field \"{}\" is {}; it must be from {} to {}", request_, key, v, min, max));
  }
  return std::optional<std::int64_t>(v);
}

Result<bool> Fields::flag(std::string_view key, bool fallback) const {
  const auto* value = find(key);
  if (!value) return fallback;
  if (!value->is_boolean()) return std::unexpected(bad(key, "true or false"));
  return value->get<bool>();
}

Result<std::optional<std::vector<std::string>>> Fields::optional_strings(std::string_view key) const {
  const auto* value = find(key);
  if (!value) return std::optional<std::vector<std::string>>();
  if (!value->is_array()) return std::unexpected(bad(key, "a list of strings"));
  std::vector<std::string> out;
  for (const auto& item : *value) {
    if (!item.is_string()) return std::unexpected(bad(key, "a list of strings"));
    out.push_back(item.get<std::string>());
  }
  return std::optional(std::move(out));
}

Result<std::optional<nlohmann::json>> Fields::optional_object(std::string_view key) const {
  const auto* value = find(key);
  if (!value) return std::optional<nlohmann::json>();
  if (!value->is_object()) return std::unexpected(bad(key, "an object"));
  return std::optional(*value);
}

}  // namespace gpuemu::daemon
