// Redaction of URLs and tokens before anything reaches a log line or an error message.
// Query values are all hidden: a parameter name alone never carries a secret.
#include "remote/redact.hpp"

namespace gpuemu::remote {

std::string redact_url(std::string_view url) {
  std::string out;
  const auto scheme_end = url.find("://");
  std::string_view rest = url;
  if (scheme_end != std::string_view::npos) {
    out.append(url.substr(0, scheme_end + 3));
    rest = url.substr(scheme_end + 3);
    const auto authority_end = rest.find_first_of("/?#");
    const auto at = rest.substr(0, authority_end).rfind('@');
    if (at != std::string_view::npos) {
      out.append("***@");
      rest = rest.substr(at + 1);
    }
  }
  const auto fragment = rest.find('#');
  if (fragment != std::string_view::npos) rest = rest.substr(0, fragment);
  const auto query = rest.find('?');
  if (query == std::string_view::npos) {
    out.append(rest);
    return out;
  }
  out.append(rest.substr(0, query + 1));
  std::string_view params = rest.substr(query + 1);
  bool first = true;
  while (!params.empty() || first) {
    const auto amp = params.find('&');
    const std::string_view param = params.substr(0, amp);
    if (!first) out.push_back('&');
    first = false;
    const auto eq = param.find('=');
    out.append(param.substr(0, eq));
    if (eq != std::string_view::npos) out.append("=***");
    if (amp == std::string_view::npos) break;
    params = params.substr(amp + 1);
  }
  return out;
}

std::string redact_secret(std::string text, std::string_view secret) {
  if (secret.size() < 4) return text;
  for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + 3)) {
    text.replace(pos, secret.size(), "***");
  }
  return text;
}

}  // namespace gpuemu::remote
