// What a request handler sees and returns (docs/protocol.md): the decoded request, the reply it
// builds, the error kinds of error replies, and readers for typed header fields.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::daemon {

inline constexpr int kProtocolVersion = 1;

// The "kind" of an error reply. The names are on the wire: never rename.
enum class WireError {
  bad_message,
  protocol_mismatch,
  bad_request,
  not_found,
  config,
  io,
  parse,
  environment,
  shutting_down,
  internal,
  busy,
};
std::string_view wire_error_name(WireError kind);
std::optional<WireError> parse_wire_error(std::string_view name);

// Why a request failed. Converts from the engine's Error, so TRY works on engine calls inside handlers.
struct RequestError {
  WireError kind = WireError::internal;
  std::string message;
  RequestError(WireError kind, std::string message) : kind(kind), message(std::move(message)) {}
  RequestError(const Error& error);  // NOLINT(google-explicit-constructor): TRY relies on it
};

template <class T>
using Result = std::expected<T, RequestError>;

inline std::unexpected<RequestError> reject(WireError kind, std::string message) {
  return std::unexpected<RequestError>(RequestError(kind, std::move(message)));
}

// A decoded message: its JSON header and its tensors by name.
struct Message {
  nlohmann::json header;
  tensor::NamedTensors tensors;
};

// A reply under construction; "ok", "type", "protocol_version" and "id" are added by the dispatcher.
struct Reply {
  nlohmann::json header = nlohmann::json::object();
  std::vector<std::pair<std::string, tensor::Tensor>> tensors;  // in wire order
};

// The names optional_choice accepts, as its errors list them; the dtypes are tensor::all_dtype_names().
extern const std::string kDtypeChoices;
inline constexpr std::string_view kLayoutChoices = "contiguous, transposed, strided or channels_last";
inline constexpr std::string_view kValuesChoices = "regular, boundary, adversarial or mixed";

// Typed readers of header fields. Errors are bad_request and name the field and the request.
class Fields {
 public:
  Fields(const nlohmann::json& header, std::string request) : header_(header), request_(std::move(request)) {}

  Result<std::string> string(std::string_view key) const;
  Result<std::optional<std::string>> optional_string(std::string_view key) const;
  // Seeds are decimal strings; a JSON number is refused so precision loss above 2^53 shows at once.
  Result<std::uint64_t> seed(std::string_view key) const;
  Result<std::optional<std::uint64_t>> optional_seed(std::string_view key) const;
  Result<std::optional<std::int64_t>> optional_int(std::string_view key, std::int64_t min,
                                                   std::int64_t max) const;
  Result<bool> flag(std::string_view key, bool fallback) const;
  Result<std::optional<std::vector<std::string>>> optional_strings(std::string_view key) const;
  // An object field (e.g. kwargs); nullopt when absent or null.
  Result<std::optional<nlohmann::json>> optional_object(std::string_view key) const;
  // A field that names one of a fixed set (a dtype, a layout, a value distribution): `parse` maps a
  // name to std::optional<T>; absent is nullopt, and a name it does not know is a bad_request
  // "REQUEST request: KEY 'NAME' is not CHOICES".
  template <class Parse>
  auto optional_choice(std::string_view key, Parse parse, std::string_view choices) const
      -> Result<std::invoke_result_t<Parse, std::string_view>> {
    const auto name = TRY(optional_string(key));
    if (!name) return std::invoke_result_t<Parse, std::string_view>();
    if (auto value = parse(*name)) return value;
    return std::unexpected(unknown_choice(key, *name, choices));
  }
  // A list of such names; an unknown one is "REQUEST request: 'NAME' in \"KEY\" is not CHOICES".
  template <class Parse>
  auto optional_choices(std::string_view key, Parse parse, std::string_view choices) const -> Result<
      std::optional<std::vector<typename std::invoke_result_t<Parse, std::string_view>::value_type>>> {
    std::optional<std::vector<typename std::invoke_result_t<Parse, std::string_view>::value_type>> out;
    const auto names = TRY(optional_strings(key));
    if (!names) return out;
    out.emplace();
    for (const auto& name : *names) {
      auto value = parse(name);
      if (!value) return std::unexpected(unknown_choice(key, name, choices, true));
      out->push_back(*value);
    }
    return out;
  }
  const nlohmann::json& header() const { return header_; }
  const std::string& request() const { return request_; }

 private:
  const nlohmann::json* find(std::string_view key) const;
  RequestError bad(std::string_view key, std::string_view expected) const;
  RequestError unknown_choice(std::string_view key, std::string_view name, std::string_view choices,
                              bool in_list = false) const;
  const nlohmann::json& header_;
  std::string request_;
};

}  // namespace gpuemu::daemon
