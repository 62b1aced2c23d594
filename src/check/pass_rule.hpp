// The pass rule of an output element against its reference, the one definition every copy cites:
// vectorised kernels, float-lane pre-checks and Python's mirror keep their own forms for speed.
#pragma once

#include <array>
#include <cmath>
#include <string_view>

namespace gpuemu::check {

// An element passes when |got - ref| <= atol + rtol * |ref|, evaluated in double with no fused
// multiply-add (check/CMakeLists.txt). A NaN on either side never passes here: what a NaN or
// infinite reference asks of the output (check_nan, check_inf) is decided before this rule applies.
// docs/configuration.md ([validation.tolerances]) states the same rule for users.
//
// The bound of the rule, atol + rtol * |ref|: what the precise pass and the screens also divide by
// for an element's share of its tolerance (the ratio).
inline double tolerance_bound(double ref, double atol, double rtol) {
  return atol + rtol * std::fabs(ref);
}

// The scalar comparisons call it (check/element_stats.cpp, the portable kernels of
// check/simd/element_kernels.hpp, the `symmetric` invariant); inlined, it compiles to the code the
// rule written out would (bench/run.sh --only b measures it).
inline bool within_tolerance(double got, double ref, double atol, double rtol) {
  return std::fabs(got - ref) <= tolerance_bound(ref, atol, rtol);
}

// Every file that writes the rule out instead of calling within_tolerance, because it runs in SIMD
// lanes, in float with error margins or in Python. Each cites "check::within_tolerance" where it
// applies the rule; tests/unit/check/pass_rule_test.cpp fails on a copy that does not, and on a file
// of src/ or python/gpuemu/ that writes the rule without being listed here.
inline constexpr std::array<std::string_view, 7> kPassRuleCopies = {
    "src/check/simd/wide_screen_avx512.hpp",      // the screen in AVX-512 double lanes
    "src/check/simd/wide_screen_avx2.hpp",        // the screen in AVX2 double lanes
    "src/check/simd/float_precheck.hpp",          // float-lane pre-checks: the bound rounded down and up
    "src/check/simd/half_precheck_avx2.hpp",      // the 16-bit pre-check with AVX2/F16C
    "src/check/simd/narrow_precheck_avx512.hpp",  // the float-lane pre-check's coefficients
    "src/check/simd/narrow_precheck_avx2.hpp",    // the same pre-check on 8 lanes
    "python/gpuemu/_internal/core/compare.py",    // the Python client's inline comparison
};

}  // namespace gpuemu::check
