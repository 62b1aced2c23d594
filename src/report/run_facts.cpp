// Phrases for "runtime" and "timing" (run_facts.hpp). An interpreter run always says so in
// words, so a green interpreter run is never read as a GPU run.
#include "report/run_facts.hpp"

#include <fmt/format.h>

namespace gpuemu::report {
namespace {

std::string text_of(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string kernel_phrase(const nlohmann::json& runtime, const char* key, const char* language) {
  const std::string how = text_of(runtime, key);
  if (how == "interpreter") return fmt::format(", {}: interpreter (not a GPU run)", language);
  if (!how.empty()) return fmt::format(", {}: {}", language, how);
  return "";
}

std::string percent(double part, double whole) {
  return whole > 0 ? fmt::format(" ({:.0f}%)", 100.0 * part / whole) : "";
}

}  // namespace

std::string format_duration(double seconds) {
  if (seconds < 1.0) return fmt::format("{:.0f} ms", seconds * 1000.0);
  return fmt::format("{:.2f} s", seconds);
}

std::string runtime_phrase(const nlohmann::json& runtime) {
  if (!runtime.is_object()) return "";
  const std::string framework = text_of(runtime, "framework");
  if (framework.empty()) return "";
  std::string out = framework;
  if (const std::string version = text_of(runtime, "version"); !version.empty()) out += " " + version;
  if (const std::string device = text_of(runtime, "device"); !device.empty()) out += " on " + device;
  out += kernel_phrase(runtime, "triton", "Triton");
  out += kernel_phrase(runtime, "pallas", "Pallas");
  return out;
}

std::string timing_phrase(const std::optional<result::Timing>& timing) {
  if (!timing) return "";
  const double wall = timing->wall_secs;
  const double op = timing->op_secs;
  const double reference = timing->reference_secs;
  const double gpuemu = timing->gpuemu_secs();
  // The op and the reference run at the same time: their overlap, counted in both, is taken off once.
  const std::string overlap = timing->overlap_secs > 0
                                  ? fmt::format(" - both at once {}", format_duration(timing->overlap_secs))
                                  : "";
  return fmt::format("{} = op {}{} + reference {}{}{} + gpuemu {}{}", format_duration(wall),
                     format_duration(op), percent(op, wall), format_duration(reference),
                     percent(reference, wall), overlap, format_duration(gpuemu), percent(gpuemu, wall));
}

}  // namespace gpuemu::report
