// Writing JSON documents for people and machines: invalid UTF-8 from scripts' stderr is replaced
// instead of throwing, so one odd byte can never lose a whole result document.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gpuemu::util {

inline std::string dump_json(const nlohmann::json& document, int indent = 2) {
  return document.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuemu::util
