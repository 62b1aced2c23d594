// Structural properties an op's output must have whatever the reference says (DESIGN section 4):
// checked on the op's outputs only, after they agree with the reference element by element.
#pragma once

#include <optional>
#include <string>

#include "check/compare.hpp"

namespace gpuemu::check {

// The first violation of `invariant` by output `name`, as a one-line message naming the invariant
// and the first bad index, or nullopt when it holds. `expected_shape` is what shape_preserved
// demands (see compare.cpp for which shape that is).
std::optional<std::string> find_invariant_violation(Invariant invariant, const std::string& name,
                                                    const tensor::Tensor& output,
                                                    const tensor::Shape& expected_shape,
                                                    const std::string& expected_shape_source,
                                                    const ToleranceSpec& tolerance);

}  // namespace gpuemu::check
