// Canonical JSON of a Config for the digest: fixed key names, sorted object keys (nlohmann's
// default map), enums by name, and paths relative to Config::root.
#include "config/config_json.hpp"

#include "config/key_table.hpp"
#include "util/hash.hpp"

namespace gpuemu::config {

using nlohmann::json;

std::string root_relative(const fs::path& path, const fs::path& root) {
  if (path.empty()) return "";
  const fs::path rel = path.lexically_relative(root);
  return (rel.empty() ? path : rel).generic_string();
}

json dtypes_json(const std::vector<tensor::DType>& dtypes) {
  json out = json::array();
  for (auto d : dtypes) out.push_back(tensor::dtype_name(d));
  return out;
}

json tolerances_json(const std::map<tensor::DType, check::ToleranceSpec>& tolerances) {
  json out = json::object();
  for (const auto& [dtype, tol] : tolerances) {
    out[std::string(tensor::dtype_name(dtype))] = {{"atol", tol.atol}, {"rtol", tol.rtol}};
  }
  return out;
}

namespace {

json runnable_json(const Runnable& r, const fs::path& root) {
  switch (r.kind) {
    case Runnable::Kind::none:
      return nullptr;
    case Runnable::Kind::script:
      return {{"kind", "script"}, {"path", root_relative(r.script, root)}, {"persistent", r.persistent}};
    case Runnable::Kind::callable:
      return {{"kind", "callable"}, {"module", r.module}, {"function", r.function}};
  }
  return nullptr;
}

json shape_json(const std::vector<DimRef>& shape) {
  json out = json::array();
  for (const DimRef& d : shape) {
    if (const auto* name = std::get_if<std::string>(&d)) {
      out.push_back(*name);
    } else {
      out.push_back(std::get<std::int64_t>(d));
    }
  }
  return out;
}

json schema_json(const OpSchema& schema) {
  json dims = json::array();
  for (const DimSpec& d : schema.dims) {
    json dim = {{"name", d.name}};
    if (d.candidates.empty()) {
      dim["range"] = {d.min, d.max};
    } else {
      dim["candidates"] = d.candidates;
    }
    if (!d.tiles.empty()) dim["tiles"] = d.tiles;  // only when declared: digests stay
    dims.push_back(dim);
  }
  json inputs = json::array();
  for (const auto& [name, shape] : schema.inputs) inputs.push_back({name, shape_json(shape)});
  return {{"dims", dims}, {"inputs", inputs}, {"output", shape_json(schema.output)}};
}

json op_json(const OpConfig& op, const fs::path& root) {
  json invariants = json::array();
  for (auto inv : op.invariants) invariants.push_back(check::invariant_name(inv));
  json layouts = json::array();
  for (auto l : op.layouts) layouts.push_back(tensor::layout_name(l));
  json inputs = json::object();
  for (const auto& [name, in] : op.inputs) {
    json domain = in.domain.any ? json("any") : json::array({in.domain.lo, in.domain.hi});
    inputs[name] = {{"domain", domain},
                    {"dtype", in.dtype ? json(tensor::dtype_name(*in.dtype)) : json(nullptr)},
                    {"shape", shape_json(in.shape)}};
  }
  json out = {{"name", op.name},
              {"module", op.module},
              {"reference", runnable_json(op.reference, root)},
              {"op_script", runnable_json(op.op_script, root)},
              {"input_names", op.input_names},
              {"execution_mode", execution_mode_name(op.execution_mode)},
              {"dtypes", dtypes_json(op.dtypes)},
              {"tolerances", tolerances_json(op.tolerances)},
              {"invariants", invariants},
              {"schema", op.schema ? schema_json(*op.schema) : json(nullptr)},
              {"inputs", inputs},
              {"layouts", layouts},
              {"kwargs", op.kwargs},
              {"timeout", op.timeout_secs ? json(*op.timeout_secs) : json(nullptr)},
              {"source", op.source},
              {"persistent", op.persistent},
              {"framework", std::string(framework_name(op.framework))},
              {"reference_framework", std::string(framework_name(op.reference_framework))},
              {"triton_interpret", std::string(interpret_mode_name(op.triton_interpret))},
              {"pallas_interpret", std::string(interpret_mode_name(op.pallas_interpret))}};
  if (op.interpreter_cuda_shim) out["interpreter_cuda_shim"] = true;  // only when set: digests stay
  if (!op.sanitize) out["sanitize"] = false;                          // only when off: digests stay
  if (!op.require_launch) out["require_launch"] = false;              // only when off: digests stay
  // Only ops written with `implementations` carry these, so the digest of a config in the one-op-
  // per-table form stays what it was before implementations existed.
  if (!op.implementation.empty()) {
    out["spec"] = op.spec;
    out["implementation"] = op.implementation;
  }
  return out;
}

json kernel_json(const KernelConfig& k, const fs::path& root) {
  const ArtifactChecks& c = k.artifact_checks;
  return {{"name", k.name},
          {"source", root_relative(k.source, root)},
          {"reference", k.reference},
          {"arch", k.arch},
          {"artifact_checks",
           {{"max_registers", c.max_registers},
            {"max_spills", c.max_spills},
            {"max_local_memory_bytes", c.max_local_memory_bytes},
            {"forbidden_instructions", c.forbidden_instructions},
            {"required_instructions", c.required_instructions}}}};
}

}  // namespace

json to_json(const Config& config) {
  const fs::path& root = config.root;
  json ops = json::array();
  for (const OpConfig& op : config.ops) ops.push_back(op_json(op, root));
  json kernels = json::array();
  for (const KernelConfig& k : config.kernels) kernels.push_back(kernel_json(k, root));
  json out = {{"ops", ops}, {"kernels", kernels}};
  // [project], [validation], [policies] and [ci]: each key the table writes into the digest.
  for (const std::string_view section : {"project", "validation", "policies", "ci"}) {
    json& values = out[std::string(section)] = json::object();
    for (const KeyRow& row : kKeyTable) {
      if (row.section == section && row.digest != nullptr) values[std::string(row.key)] = row.digest(config);
    }
  }
  return out;
}

std::string config_digest(const Config& config) {
  return util::sha256_hex(to_json(config).dump());
}

}  // namespace gpuemu::config
