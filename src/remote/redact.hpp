// Redacted forms of secrets, so none reaches a log or a message: URLs lose their userinfo and every
// query value (presigned signatures, SAS tokens), tokens become "***".
#pragma once

#include <string>
#include <string_view>

namespace gpuemu::remote {

// "https://user:pw@host/p?X-Amz-Signature=abc&sig=def" -> "https://***@host/p?X-Amz-Signature=***&sig=***".
std::string redact_url(std::string_view url);

// Replaces every occurrence of `secret` (when it is at least 4 characters) in `text` with "***".
std::string redact_secret(std::string text, std::string_view secret);

}  // namespace gpuemu::remote
