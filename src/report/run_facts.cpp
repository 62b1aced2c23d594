// Phrases for "runtime" and "timing" (run_facts.hpp). An interpreter run always says so in
// words, so a green interpreter run is never read as a GPU run.
#include "report/run_facts.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpuemu::report {
namespace {

std::string text_of(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_of(const nlohmann::json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0.0;
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

std::string timing_phrase(const nlohmann::json& timing) {
  if (!timing.is_object() || !timing.contains("wall_secs")) return "";
  const double wall = number_of(timing, "wall_secs");
  const double op = number_of(timing, "op_secs");
  const double reference = number_of(timing, "reference_secs");
  const double gpuemu = number_of(timing, "gpuemu_secs");
  return fmt::format("{} = op {}{} + reference {}{} + gpuemu {}{}", format_duration(wall),
                     format_duration(op), percent(op, wall), format_duration(reference),
                     percent(reference, wall), format_duration(gpuemu), percent(gpuemu, wall));
}

nlohmann::json add_timing(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_object()) return b;
  if (!b.is_object()) return a;
  const double wall = number_of(a, "wall_secs") + number_of(b, "wall_secs");
  const double op = number_of(a, "op_secs") + number_of(b, "op_secs");
  const double reference = number_of(a, "reference_secs") + number_of(b, "reference_secs");
  const double gpuemu = std::max(0.0, wall - op - reference);
  return {{"wall_secs", wall},
          {"op_secs", op},
          {"reference_secs", reference},
          {"gpuemu_secs", gpuemu},
          {"gpuemu_share", wall > 0 ? gpuemu / wall : 0.0}};
}

}  // namespace gpuemu::report
