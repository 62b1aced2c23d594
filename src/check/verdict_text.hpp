// How verdict messages spell values and element positions, shared by the comparison and the
// invariant checks so every message reads the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/dtype.hpp"

namespace gpuemu::check {

// The value as its dtype would print it: shortest round-trip text for float32/float64, enough
// digits to tell fp16/bf16 neighbours apart, integers without a fraction; "nan", "inf", "-inf".
std::string format_value(double value, tensor::DType dtype);
// "out[3, 65]"; a rank-0 tensor is just its name.
std::string format_element(const std::string& output, const std::vector<std::int64_t>& index);
// A short number for errors and tolerances: "0.0196", "1e-05".
std::string format_short(double value);
// A percentage with two significant digits below 10% ("0.29"), fewer digits above ("12.5", "100").
std::string format_percent(double fraction);

}  // namespace gpuemu::check
