// The failure kinds as reports present them: the table of check/failure_kinds.hpp, under the names
// the report writers use.
#pragma once

#include "check/failure_kinds.hpp"

namespace gpuemu::report {

using check::compares_values;
using check::failure_kinds;
using check::FailureKindInfo;
using check::Tier;

}  // namespace gpuemu::report
