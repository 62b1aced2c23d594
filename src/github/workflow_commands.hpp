// GitHub Actions workflow commands ("::error file=F,line=L,title=T::message") and their escaping,
// as GitHub documents them and the actions toolkit implements them (escapeData, escapeProperty).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuemu::github {

// Command data (the message after "::"): % -> %25, \r -> %0D, \n -> %0A, so one command stays on
// one log line and the runner turns the escapes back into the original text.
std::string escape_data(std::string_view text);
// A property value (file=, title=): data escaping plus : -> %3A and , -> %2C, the separators.
std::string escape_property(std::string_view text);

using Properties = std::vector<std::pair<std::string, std::string>>;
// "::name key=value,key=value::message" with every part escaped; properties with empty values
// are left out. No trailing newline.
std::string workflow_command(std::string_view name, const Properties& properties, std::string_view message);

// 128 random bits as hex, from the operating system's generator: unguessable by text printed
// while commands are stopped, so that text cannot resume them.
std::string random_token();

}  // namespace gpuemu::github
