// How the HTTP-based backends read answers: which statuses mean "no baseline" (a warning) and
// which are errors, with a short, printable excerpt of what the server said.
#include <fmt/format.h>

#include <cctype>

#include "remote/backends/backends.hpp"

namespace gpuemu::remote {
namespace {

// Up to 160 printable characters of a server's answer, for error messages.
std::string excerpt(const std::string& body) {
  std::string out;
  for (const unsigned char c : body.substr(0, 160))
    out.push_back(std::isprint(c) ? static_cast<char>(c) : ' ');
  return out.empty() ? std::string() : fmt::format(" (server said: \"{}\")", out);
}

std::string status_problem(const HttpResponse& response, const std::string& location, std::string_view verb,
                           std::string_view auth_hint) {
  if (response.status == 401 || response.status == 403) {
    return fmt::format("{} {} was refused with HTTP {}{}; {}", verb, location, response.status,
                       excerpt(response.body), auth_hint);
  }
  return fmt::format("{} {} failed with HTTP {}{}", verb, location, response.status, excerpt(response.body));
}

}  // namespace

Expected<std::optional<std::string>> interpret_get(const HttpResponse& response, const std::string& location,
                                                   const StoreOptions& options, std::string_view auth_hint) {
  if (!response.reached()) {
    warn_missing(
        options, location,
        fmt::format("unreachable after {} attempt(s): {}", response.attempts, response.transport_error));
    return std::optional<std::string>();
  }
  if (response.status == 404 || response.status == 410) {
    warn_missing(options, location, fmt::format("HTTP {}", response.status));
    return std::optional<std::string>();
  }
  if (response.status >= 500 || response.status == 429) {
    warn_missing(options, location,
                 fmt::format("HTTP {} after {} attempt(s)", response.status, response.attempts));
    return std::optional<std::string>();
  }
  if (response.status == 200) return std::optional<std::string>(response.body);
  return fail(ErrorKind::io, status_problem(response, location, "GET", auth_hint));
}

Expected<void> interpret_put(const HttpResponse& response, const std::string& location,
                             std::string_view auth_hint) {
  if (!response.reached()) {
    return fail(ErrorKind::io,
                fmt::format("PUT {} failed after {} attempt(s): {}; check that the store is up", location,
                            response.attempts, response.transport_error));
  }
  if (response.status >= 200 && response.status < 300) return {};
  return fail(ErrorKind::io, status_problem(response, location, "PUT", auth_hint));
}

}  // namespace gpuemu::remote
