// Reading the runner's environment (see environment.hpp); unset variables leave fields empty.
#include "github/environment.hpp"

#include <cstdlib>

namespace gpuemu::github {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Environment read_environment() {
  Environment env;
  env.actions = variable("GITHUB_ACTIONS") == "true";
  env.workspace = variable("GITHUB_WORKSPACE");
  env.step_summary = variable("GITHUB_STEP_SUMMARY");
  env.output = variable("GITHUB_OUTPUT");
  return env;
}

}  // namespace gpuemu::github
