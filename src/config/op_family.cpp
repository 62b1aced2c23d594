// [[ops]] as a whole: unique names, `extends` resolved in dependency order (unknown names get
// "did you mean", cycles are named), then each op's `implementations` expanded into results.
#include <map>

#include "config/case_limits.hpp"
#include "config/sections.hpp"
#include "util/suggest.hpp"

namespace gpuemu::config {

namespace {

// Reads every op once, parents before children, remembering which ones are being read so a
// cycle is reported where it closes.
class FamilyResolver {
 public:
  FamilyResolver(const Diagnostics& diag, const ValidationConfig& validation,
                 const std::vector<const toml::table*>& tables, const std::vector<std::string>& names)
      : diag_(diag),
        validation_(validation),
        tables_(tables),
        names_(names),
        specs_(tables.size()),
        state_(tables.size(), State::unread) {
    for (std::size_t i = 0; i < names.size(); ++i) index_[names[i]] = i;
  }

  Expected<const OpSpec*> resolve(std::size_t i) {
    if (state_[i] == State::read) return &*specs_[i];
    const TableReader r(diag_, *tables_[i], "ops", "[[ops]] '" + names_[i] + "'");
    const OpSpec* base = nullptr;
    if (const auto extends = TRY(r.string_item("extends"))) {
      const auto parent = index_.find(extends->value);
      if (parent == index_.end()) {
        const std::vector<std::string_view> known(names_.begin(), names_.end());
        std::string hint = util::did_you_mean(extends->value, known);
        if (hint.empty()) hint = "the ops in this file are " + util::quoted_list(known);
        return diag_.at(*extends->node, "op '" + names_[i] + "' extends unknown op '" + extends->value + "'",
                        hint);
      }
      if (state_[parent->second] == State::reading || parent->second == i) {
        return diag_.at(*extends->node, "'extends' makes a cycle: " + cycle_text(i, parent->second),
                        "an op cannot inherit from itself; remove 'extends' from one of them");
      }
      state_[i] = State::reading;
      chain_.push_back(i);
      base = TRY(resolve(parent->second));
      chain_.pop_back();
    }
    specs_[i] = TRY(parse_op(diag_, *tables_[i], validation_, base));
    state_[i] = State::read;
    return &*specs_[i];
  }

 private:
  enum class State { unread, reading, read };

  // "a -> b -> c -> a": the ops being read from where `parent` entered the chain, then `child`.
  std::string cycle_text(std::size_t child, std::size_t parent) const {
    if (parent == child) return names_[child] + " -> " + names_[child];
    std::string out;
    bool in_cycle = false;
    for (std::size_t k : chain_) {
      in_cycle = in_cycle || k == parent;
      if (in_cycle) out += names_[k] + " -> ";
    }
    return out + names_[child] + " -> " + names_[parent];
  }

  const Diagnostics& diag_;
  const ValidationConfig& validation_;
  const std::vector<const toml::table*>& tables_;
  const std::vector<std::string>& names_;
  std::vector<std::optional<OpSpec>> specs_;
  std::vector<State> state_;
  std::vector<std::size_t> chain_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// The checks that need the op's final, inherited settings: something to run, warm flags. In
// client_side and daemon_orchestrated mode the client runs the op, so it may have none here.
Expected<void> finish(const Diagnostics& diag, const toml::table& table, OpConfig& op) {
  if (op.op_script.empty() && op.execution_mode == ExecutionMode::script_based) {
    return diag.at(table.source(),
                   "op '" + op.name + "' has no op under test, which execution_mode '" +
                       std::string(execution_mode_name(op.execution_mode)) + "' runs",
                   "add op_script = \"kernels/" + op.name +
                       ".py\", module = \"package.module:function\" or implementations = [...]; or, when a "
                       "client runs the op, execution_mode = \"client_side\" or \"daemon_orchestrated\"");
  }
  for (Runnable* runnable : {&op.reference, &op.op_script}) {
    runnable->persistent = op.persistent && runnable->kind == Runnable::Kind::script;
  }
  return {};
}

}  // namespace

Expected<std::vector<OpConfig>> parse_ops(const Diagnostics& diag, const toml::table& root,
                                          const ValidationConfig& validation) {
  const auto tables = TRY(array_of_tables(diag, root, "ops"));
  std::vector<std::string> names;
  std::map<std::string, const toml::table*> seen;
  for (const toml::table* table : tables) {
    const std::string name =
        TRY(TableReader(diag, *table, "ops", "[[ops]]").required_string("name", "\"matmul\"")).value;
    if (const auto it = seen.find(name); it != seen.end()) {
      return diag.at(*table->get("name"), "duplicate op name '" + name + "'",
                     "op names must be unique; the first is at " + diag.position(it->second->source()));
    }
    seen[name] = table;
    names.push_back(name);
  }

  FamilyResolver resolver(diag, validation, tables, names);
  std::vector<OpConfig> ops;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const OpSpec& spec = *TRY(resolver.resolve(i));
    // Before any case is generated: a schema such as dims [1000000000000] or 2^24 x 2^24 would
    // otherwise end in an allocation failure at the first case.
    if (auto over = over_limits(largest_case(spec.op), CaseLimits::of(validation),
                                "op '" + spec.op.name + "' at its largest (every dim at its maximum)")) {
      const toml::node* schema = tables[i]->get("schema");
      return diag.at(schema != nullptr ? schema->source() : tables[i]->source(), *over,
                     "lower the sizes in its [ops.schema] (or shape), or raise the limit in [validation]");
    }
    if (spec.implementations.empty()) {
      OpConfig op = spec.op;
      op.implementation.clear();
      TRY(finish(diag, *tables[i], op));
      ops.push_back(std::move(op));
      continue;
    }
    for (const ImplementationEntry& entry : spec.implementations) {
      OpConfig op = spec.op;
      op.name = spec.op.name + "/" + entry.name;
      op.implementation = entry.name;
      op.op_script = entry.runnable;
      op.source = entry.source;
      TRY(finish(diag, *tables[i], op));
      ops.push_back(std::move(op));
    }
  }
  return ops;
}

}  // namespace gpuemu::config
