// Implements the JSON+base64 script protocol of docs/script-protocol.md. Requests are written
// straight into one string (no JSON DOM for the payload); replies are parsed once and validated.
#include "wire/script_protocol.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "util/base64.hpp"
#include "wire/json_skeleton.hpp"

namespace gpuemu::wire {

namespace {

using nlohmann::json;

// JSON text for a string, replacing invalid UTF-8 rather than throwing.
std::string json_string(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

void append_ints(std::string& out, const std::vector<std::int64_t>& values) {
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(values[i]);
  }
  out += ']';
}

std::size_t base64_size(std::size_t bytes) {
  return (bytes + 2) / 3 * 4;
}

// {"shape":[..],"strides":[..],"dtype":"..","data":".."} appended to `out`.
void append_tensor(std::string& out, const tensor::Tensor& t) {
  out += "{\"shape\":";
  append_ints(out, t.shape);
  out += ",\"strides\":";
  append_ints(out, t.strides.size() == t.shape.size() ? t.strides : tensor::contiguous_strides(t.shape));
  out += ",\"dtype\":\"";
  out += tensor::dtype_name(t.dtype);
  out += "\",\"data\":\"";
  out += util::base64_encode(t.data);
  out += "\"}";
}

// One line that shows the start of what a script printed, with control characters escaped.
std::string quote_start(std::string_view text) {
  constexpr std::size_t kMax = 200;
  std::string out = "'";
  for (char c : text.substr(0, kMax)) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  out += "'";
  if (text.size() > kMax) out += fmt::format(" ... ({} bytes in all)", text.size());
  return out;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\f\v";
  std::size_t first = s.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  std::size_t last = s.find_last_not_of(kSpace);
  return s.substr(first, last - first + 1);
}

Expected<std::vector<std::int64_t>> int_list(const json& j, const char* key, const std::string& what,
                                             bool non_negative) {
  if (!j.is_array()) {
    return fail(ErrorKind::parse,
                fmt::format("{}: \"{}\" must be a list of integers, got {}", what, key,
                            quote_start(j.dump(-1, ' ', false, json::error_handler_t::replace))));
  }
  std::vector<std::int64_t> out;
  out.reserve(j.size());
  for (const auto& v : j) {
    if (!v.is_number_integer() || (non_negative && v.get<std::int64_t>() < 0)) {
      return fail(ErrorKind::parse,
                  fmt::format("{}: \"{}\" must be a list of {}integers, got {}", what, key,
                              non_negative ? "non-negative " : "",
                              quote_start(j.dump(-1, ' ', false, json::error_handler_t::replace))));
    }
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

std::string key_list(const json& j) {
  std::string out;
  for (const auto& [key, value] : j.items()) {
    if (!out.empty()) out += ", ";
    out += json_string(key);
  }
  return "[" + out + "]";
}

}  // namespace

std::string encode_request(const Tensors& inputs, const std::vector<std::string>& order, const json& kwargs,
                           tensor::DType case_dtype, std::string_view framework,
                           std::string_view numpy_bfloat16, std::optional<std::uint64_t> seed) {
  std::vector<const std::pair<const std::string, tensor::Tensor>*> items;
  for (const auto& name : order) {
    auto it = inputs.find(name);
    if (it != inputs.end() && std::find(items.begin(), items.end(), &*it) == items.end())
      items.push_back(&*it);
  }
  for (const auto& entry : inputs) {  // std::map iterates sorted, as the header promises
    if (std::find(order.begin(), order.end(), entry.first) == order.end()) items.push_back(&entry);
  }

  std::size_t size = 64;
  for (const auto* item : items) size += base64_size(item->second.data.size()) + item->first.size() + 128;
  std::string out;
  out.reserve(size);
  out += "{\"inputs\":{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += ',';
    out += json_string(items[i]->first);
    out += ':';
    append_tensor(out, items[i]->second);
  }
  out += "},\"kwargs\":";
  out += kwargs.is_null() ? std::string("{}") : kwargs.dump(-1, ' ', false, json::error_handler_t::replace);
  out += ",\"dtype\":\"";
  out += tensor::dtype_name(case_dtype);
  out += '"';
  if (framework != "numpy") {
    out += ",\"framework\":";
    out += json_string(std::string(framework));
  }
  if (seed) {
    out += ",\"seed\":\"";  // a decimal string: a uint64 may not fit a JSON number's double
    out += std::to_string(*seed);
    out += '"';
  }
  if (!numpy_bfloat16.empty()) {
    out += ",\"numpy_bfloat16\":";
    out += json_string(std::string(numpy_bfloat16));
  }
  out += "}\n";
  return out;
}

ReplyExtras reply_extras(const json& reply) {
  ReplyExtras extras;
  if (!reply.is_object()) return extras;
  if (auto it = reply.find("elapsed_ns"); it != reply.end() && it->is_number_unsigned()) {
    extras.inside = std::chrono::nanoseconds(it->get<std::uint64_t>());
  }
  if (auto it = reply.find("called_ns"); it != reply.end() && it->is_number_unsigned()) {
    extras.called_at = util::monotonic_time(it->get<std::uint64_t>());
  }
  if (auto it = reply.find("runtime"); it != reply.end() && it->is_object()) extras.runtime = runtime_of(*it);
  if (auto it = reply.find("launches"); it != reply.end() && it->is_object()) {
    std::map<std::string, std::int64_t> launches;
    for (const auto& [kernel, count] : it->items()) {
      if (count.is_number_unsigned()) launches[kernel] = count.get<std::int64_t>();
    }
    extras.launches = std::move(launches);
  }
  return extras;
}

util::TimeSpan call_span(const ReplyExtras& extras, std::chrono::steady_clock::time_point replied) {
  if (extras.called_at && *extras.called_at <= replied)
    return util::span_from(*extras.called_at, extras.inside);
  return util::span_from(
      replied - std::chrono::duration_cast<std::chrono::steady_clock::duration>(extras.inside),
      extras.inside);
}

json runtime_of(const json& reported) {
  json runtime = json::object();
  for (const auto& [from, to] :
       {std::pair{"framework", "framework"}, std::pair{"framework_version", "version"},
        std::pair{"version", "version"}, std::pair{"device", "device"}, std::pair{"triton", "triton"},
        std::pair{"pallas", "pallas"}}) {
    if (auto it = reported.find(from); it != reported.end() && it->is_string()) runtime[to] = *it;
  }
  return runtime.empty() ? json() : runtime;
}

json tensor_to_json(const tensor::Tensor& t) {
  return json{
      {"shape", t.shape},
      {"strides", t.strides.size() == t.shape.size() ? t.strides : tensor::contiguous_strides(t.shape)},
      {"dtype", tensor::dtype_name(t.dtype)},
      {"data", util::base64_encode(t.data)}};
}

namespace {

// tensor_from_json, reading "data" through the skeleton's cut-out strings when there is one.
Expected<tensor::Tensor> parse_tensor(const json& j, const std::string& what, const JsonSkeleton* skeleton) {
  if (!j.is_object()) {
    return fail(ErrorKind::parse,
                fmt::format("{} is not a tensor object {{\"shape\", \"dtype\", \"data\"}}", what));
  }
  for (const char* key : {"shape", "dtype", "data"}) {
    if (!j.contains(key)) {
      return fail(ErrorKind::parse,
                  fmt::format("{} has no \"{}\" (a tensor needs \"shape\", \"dtype\" and \"data\"; "
                              "it has {})",
                              what, key, key_list(j)));
    }
  }
  tensor::Tensor t;
  t.shape = TRY(int_list(j["shape"], "shape", what, true));
  const json& dtype = j["dtype"];
  std::optional<tensor::DType> parsed =
      dtype.is_string() ? tensor::parse_dtype(dtype.get<std::string>()) : std::nullopt;
  if (!parsed) {
    std::string names;
    for (auto name : tensor::all_dtype_names()) names += (names.empty() ? "" : ", ") + std::string(name);
    return fail(ErrorKind::parse,
                fmt::format("{} has unknown dtype {}; use one of {}", what,
                            dtype.dump(-1, ' ', false, json::error_handler_t::replace), names));
  }
  t.dtype = *parsed;
  const bool has_strides = j.contains("strides") && !j["strides"].is_null();
  t.strides =
      has_strides ? TRY(int_list(j["strides"], "strides", what, false)) : tensor::contiguous_strides(t.shape);
  if (t.strides.size() != t.shape.size()) {
    return fail(ErrorKind::parse, fmt::format("{}: \"strides\" has {} entries but \"shape\" has {}", what,
                                              t.strides.size(), t.shape.size()));
  }
  const json& data = j["data"];
  std::optional<std::string_view> text =
      skeleton ? skeleton->string_value(data)
               : (data.is_string() ? std::optional<std::string_view>(data.get_ref<const std::string&>())
                                   : std::nullopt);
  if (!text) return fail(ErrorKind::parse, fmt::format("{}: \"data\" must be a base64 string", what));
  auto bytes = util::base64_decode(*text);
  if (!bytes) {
    return fail(ErrorKind::parse,
                fmt::format("{}: \"data\" is not valid base64 (standard alphabet, with padding)", what));
  }
  t.data = std::move(*bytes);
  const std::size_t expected =
      static_cast<std::size_t>(tensor::shape_numel(t.shape)) * tensor::dtype_size(t.dtype);
  // A contiguous tensor (no strides, or row-major ones) must be exactly its elements: a short or
  // long buffer means the script encoded something other than what it declared.
  if (t.strides == tensor::contiguous_strides(t.shape) && t.data.size() != expected) {
    return fail(ErrorKind::parse,
                fmt::format("{}: \"data\" holds {} bytes but shape {} of {} needs {}", what, t.data.size(),
                            tensor::shape_to_string(t.shape), tensor::dtype_name(t.dtype), expected));
  }
  TRY(tensor::validate_view(t, what));
  return t;
}

}  // namespace

Expected<tensor::Tensor> tensor_from_json(const json& j, const std::string& what) {
  return parse_tensor(j, what, nullptr);
}

std::optional<FailureReply> decode_failure_reply(std::string_view stdout_text) {
  const json reply = json::parse(trim(stdout_text), nullptr, /*allow_exceptions=*/false);
  if (!reply.is_object()) return std::nullopt;
  const auto kind = reply.find("failure");
  if (kind == reply.end() || !kind->is_string() || kind->get<std::string>().empty()) return std::nullopt;
  const auto error = reply.find("error");
  return FailureReply{kind->get<std::string>(),
                      error != reply.end() && error->is_string() ? error->get<std::string>() : std::string{}};
}

Expected<Tensors> decode_response(std::string_view stdout_text, const std::string& what,
                                  ReplyExtras* extras) {
  std::string_view text = trim(stdout_text);
  if (text.empty()) {
    return fail(ErrorKind::parse, fmt::format("{} printed nothing on stdout; it must print one JSON tensor "
                                              "or {{\"outputs\": {{name: tensor}}}}",
                                              what));
  }
  const JsonSkeleton skeleton = make_json_skeleton(text);
  json reply = json::parse(skeleton.text, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) {
    return fail(ErrorKind::parse, fmt::format("{} printed something other than one JSON reply on stdout "
                                              "(print logs to stderr): {}",
                                              what, quote_start(stdout_text)));
  }
  if (!reply.is_object()) {
    return fail(ErrorKind::parse,
                fmt::format("{} printed JSON that is not an object: {}", what, quote_start(text)));
  }
  if (extras != nullptr) *extras = reply_extras(reply);
  Tensors outputs;
  if (reply.contains("outputs")) {
    const json& named = reply["outputs"];
    if (!named.is_object() || named.empty()) {
      return fail(
          ErrorKind::parse,
          fmt::format("{}: \"outputs\" must be a non-empty object of tensors {{name: tensor}}", what));
    }
    for (auto& [name, value] : named.items()) {
      outputs[name] = TRY(parse_tensor(value, fmt::format("output '{}' of {}", name, what), &skeleton));
    }
    return outputs;
  }
  if (!reply.contains("data")) {
    return fail(ErrorKind::parse,
                fmt::format("{} printed an object with keys {}; expected one tensor "
                            "{{\"shape\", \"dtype\", \"data\"}} or {{\"outputs\": {{name: tensor}}}}",
                            what, key_list(reply)));
  }
  outputs["out"] = TRY(parse_tensor(reply, fmt::format("the output of {}", what), &skeleton));
  return outputs;
}

}  // namespace gpuemu::wire
