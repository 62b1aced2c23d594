// The backends behind BaselineStore, one file each; open_store (baseline_store.cpp) picks one from its
// scheme table. Each factory checks its URL and says what is wrong with it.
#pragma once

#include <memory>
#include <string>

#include "remote/baseline_store.hpp"

namespace gpuemu::remote {

// file:///dir (TAG.json inside), file:///dir/name.json, or a plain path.
Expected<std::unique_ptr<BaselineStore>> make_file_store(const std::string& url, const StoreOptions& options);
// http(s)://host/dir, .../name.json, a {tag} template or a presigned URL.
Expected<std::unique_ptr<BaselineStore>> make_http_store(const std::string& url, const StoreOptions& options);
// s3://bucket/prefix: objects PREFIX/TAG.json, signed with SigV4 by libcurl.
Expected<std::unique_ptr<BaselineStore>> make_s3_store(const std::string& url, const StoreOptions& options);
// gh-artifact://NAME: the newest artifact NAME from the default branch, read-only.
Expected<std::unique_ptr<BaselineStore>> make_gh_artifact_store(const std::string& url,
                                                                const StoreOptions& options);

// The warning for a missing document, shared by every backend: "no baseline at LOCATION: WHY".
void warn_missing(const StoreOptions& options, const std::string& location, const std::string& why);

// What a GET answer means for a store: the body on 200; nullopt and a warning on 404/410, on
// 5xx/429 after the retries and when the server was never reached; an error otherwise, with
// `auth_hint` (how to fix credentials) on 401/403. `location` is already redacted.
Expected<std::optional<std::string>> interpret_get(const HttpResponse& response, const std::string& location,
                                                   const StoreOptions& options, std::string_view auth_hint);
// A PUT answer: any 2xx is success; everything else is an error naming the location.
Expected<void> interpret_put(const HttpResponse& response, const std::string& location,
                             std::string_view auth_hint);

}  // namespace gpuemu::remote
