// Human-readable views (HTML, Markdown) of a signed report, rendered from the signed JSON
// itself: only what the run measured, its subjects, and the verification status.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "attest/verify.hpp"
#include "util/error.hpp"

namespace gpuemu::attest {

enum class RenderFormat { html, markdown };

// True when `document` looks like a DSSE envelope (payloadType, payload, signatures) rather
// than a plain result.json; `gpuemu report render` dispatches on this.
bool is_dsse_envelope(const nlohmann::json& document);

// Renders the statement inside `envelope`. Every string from the report is escaped for the
// format (HTML entities; Markdown punctuation), so a hostile op name cannot inject markup.
Expected<std::string> render_report(const nlohmann::json& envelope, const VerifyStatus& status,
                                    RenderFormat format);

}  // namespace gpuemu::attest
