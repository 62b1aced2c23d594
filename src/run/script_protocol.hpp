// The JSON+base64 script protocol of docs/script-protocol.md: encoding a case for a script's
// stdin and decoding its stdout (one tensor, or {"outputs": {name: tensor}}).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tensor/tensor.hpp"
#include "util/error.hpp"

namespace gpuemu::run {

using Tensors = tensor::NamedTensors;

// {"inputs": {name: {"shape", "strides", "dtype", "data"}}, "kwargs": {...}, "dtype": "float16"}
// as one line + '\n'; "dtype" is the case dtype (scripts may ignore it). Input order follows
// `order` (names not in `order` come after, sorted).
std::string encode_request(const Tensors& inputs, const std::vector<std::string>& order,
                           const nlohmann::json& kwargs, tensor::DType case_dtype);

// Parses a script's stdout. A single tensor is named "out". `what` names the script in errors
// (ErrorKind::parse), e.g. "reference examples/refs/softmax_ref.py".
Expected<Tensors> decode_response(std::string_view stdout_text, const std::string& what);

nlohmann::json tensor_to_json(const tensor::Tensor& t);  // with base64 data
Expected<tensor::Tensor> tensor_from_json(const nlohmann::json& j, const std::string& what);

}  // namespace gpuemu::run
