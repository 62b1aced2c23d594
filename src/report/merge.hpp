// `gpuemu report merge`: joins the result.json documents of the shards of one CI run (--shard I/N)
// into the document one unsharded run would have written (docs/result-json.md, "Merging").
#pragma once

#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "result/document.hpp"
#include "util/error.hpp"

namespace gpuemu::report {

struct ShardDocument {
  std::string name;       // where it came from (a path), for error messages
  nlohmann::json result;  // a result.json document
};

// Shards must come from one run: same tool, command, master seed, config digest and project, and no
// shard twice. Ops are merged by name (an op split across shards sums its counts, keeps the worst
// statistics, and joins its failures in case order) and sorted by name; passed = every shard
// passed, partial = any shard partial, duration = the longest shard. Each shard is decoded (and so
// validated) by result::from_json; errors name the shard.
Expected<result::ResultDocument> merge_documents(std::span<const ShardDocument> shards);
// The merged document as result.json (result::to_json).
Expected<nlohmann::json> merge_results(std::span<const ShardDocument> shards);

}  // namespace gpuemu::report
