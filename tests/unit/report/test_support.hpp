// Shared by the report and github unit tests: the result.json fixtures under data/, temporary
// directories, and running the real validators (xmllint, python3 jsonschema) on rendered output.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../support/temp_dir.hpp"
#include "result/document.hpp"

namespace gpuemu::testing {

inline std::filesystem::path source_dir() {
  return GPUEMU_SOURCE_DIR;
}
inline std::filesystem::path schema_path(const std::string& name) {
  return source_dir() / "tests/schemas" / name;
}

inline nlohmann::json load_fixture(const std::string& name) {
  std::ifstream in(source_dir() / "tests/unit/report/data" / name);
  return nlohmann::json::parse(in);
}

// A fixture decoded by the one reader (result::from_json); one it refuses fails the test at once.
inline result::ResultDocument decode(const nlohmann::json& document) {
  return result::from_json(document).value();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

struct CommandResult {
  int status = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult run_command(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// xmllint --schema: status 0 when `xml` is valid against the XSD.
inline CommandResult validate_xml(const std::string& xml, const std::string& xsd) {
  TempDir dir;
  write_file(dir / "report.xml", xml);
  return run_command("xmllint --noout --schema '" + schema_path(xsd).string() + "' '" +
                     (dir / "report.xml").string() + "'");
}

// python3 jsonschema with the validator the schema's $schema names (draft 4 for SARIF, 2020-12 for
// result.json): status 0 when valid, else one line per error.
inline CommandResult validate_json(const std::string& document, const std::string& schema) {
  TempDir dir;
  write_file(dir / "document.json", document);
  const char* script =
      "import json, sys, jsonschema\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "document = json.load(open(sys.argv[2]))\n"
      "cls = jsonschema.validators.validator_for(schema)\n"
      "cls.check_schema(schema)\n"
      "errors = sorted(cls(schema).iter_errors(document), key=lambda e: e.json_path)\n"
      "for e in errors: print(e.json_path, e.message[:300])\n"
      "sys.exit(1 if errors else 0)\n";
  write_file(dir / "validate.py", script);
  return run_command("python3 '" + (dir / "validate.py").string() + "' '" + schema_path(schema).string() +
                     "' '" + (dir / "document.json").string() + "'");
}

}  // namespace gpuemu::testing
