// The JSON+base64 script protocol of docs/script-protocol.md: encoding a case for a script's
// stdin and decoding its stdout (one tensor, or {"outputs": {name: tensor}}).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tensor/tensor.hpp"
#include "util/error.hpp"
#include "util/time_spans.hpp"

namespace gpuemu::wire {

using Tensors = tensor::NamedTensors;

// {"inputs": {name: {"shape", "strides", "dtype", "data"}}, "kwargs": {...}, "dtype": "float16"}
// as one line + '\n'; "dtype" is the case dtype (scripts may ignore it). Input order follows
// `order` (names not in `order` come after, sorted). A `framework` other than numpy is sent as
// "framework" (the tensors gpuemu.script hands the function), a non-empty `numpy_bfloat16` as
// "numpy_bfloat16" (how a numpy function gets bfloat16 cases), a `seed` as "seed" (the case seed,
// a decimal string).
std::string encode_request(const Tensors& inputs, const std::vector<std::string>& order,
                           const nlohmann::json& kwargs, tensor::DType case_dtype,
                           std::string_view framework = "numpy", std::string_view numpy_bfloat16 = {},
                           std::optional<std::uint64_t> seed = std::nullopt);

// What a reply says besides its tensors: "elapsed_ns" (time inside the function), "called_ns" and "runtime".
struct ReplyExtras {
  std::chrono::nanoseconds inside{0};
  // "called_ns": when the call began, on the steady clock; unset when the reply does not say.
  std::optional<std::chrono::steady_clock::time_point> called_at;
  nlohmann::json runtime;  // null when absent
  // "launches": {kernel: count} of the call under the Triton interpreter; unset when absent.
  std::optional<std::map<std::string, std::int64_t>> launches;
};

// Parses a script's stdout. A single tensor is named "out". `what` names the script in errors
// (ErrorKind::parse), e.g. "reference examples/refs/softmax_ref.py". With `extras`, fills them.
Expected<Tensors> decode_response(std::string_view stdout_text, const std::string& what,
                                  ReplyExtras* extras = nullptr);

// A case failure a script judged itself and wrote before exiting non-zero (gpuemu.script's
// `{"failure": KIND, "error": message}`, docs/script-protocol.md "Failures"): the kind and message,
// nullopt when stdout holds no such object.
struct FailureReply {
  std::string kind;
  std::string error;
};
std::optional<FailureReply> decode_failure_reply(std::string_view stdout_text);

// "elapsed_ns", "called_ns" and "runtime" of a reply or result frame header; absent or malformed ones are
// left at zero / null (they inform reports, never verdicts).
ReplyExtras reply_extras(const nlohmann::json& reply);

// When the call of a reply read at `replied` ran: from its "called_ns" when that lies before
// `replied`, else the `inside` time just before `replied`.
util::TimeSpan call_span(const ReplyExtras& extras, std::chrono::steady_clock::time_point replied);

// result.json's "runtime" from what a worker or script reported (a ready frame, a reply's
// "runtime"): "framework", "framework_version" (as "version"), "device", "triton", "pallas";
// null when none of them is there.
nlohmann::json runtime_of(const nlohmann::json& reported);

nlohmann::json tensor_to_json(const tensor::Tensor& t);  // with base64 data
Expected<tensor::Tensor> tensor_from_json(const nlohmann::json& j, const std::string& what);

}  // namespace gpuemu::wire
