// The case pipeline of one op (see op_session.hpp): cases made and placed ahead in input files,
// handed to RunnerPair's calls, and their answers judged by CaseJudge into a record.
#include "engine/op_session.hpp"

#include <utility>

namespace gpuemu::engine {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint64_t input_bytes(const fuzz::Case& c) {
  std::uint64_t total = 0;
  for (const auto& [name, t] : c.inputs) total += t.data.size();
  return total;
}

}  // namespace

OpSession::OpSession(const config::Config& config, const config::OpConfig& op,
                     const proc::RunnerFactory& runners)
    : op_(op), judge_(config, op), runners_(config, op, runners) {}

OpSession::~OpSession() {
  drop_started();
}

PreparedCase OpSession::prepare(std::uint64_t seed, int arena) {
  // The inputs once in an input file, which both workers map (wire/shared_file.hpp); without one,
  // each worker gets the bytes through its pipe. A contiguous case is generated straight into the file
  // (no buffer of its own to zero, fault in and copy); another layout is copied there.
  bool generated_in_file = false;
  fuzz::InputPlacer in_file;
  if (runners_.has_op()) {
    in_file = [&](const std::vector<std::size_t>& sizes) {
      auto room = input_arenas_[arena].reserve(sizes);
      generated_in_file = room.has_value();
      return room;
    };
  }
  PreparedCase prepared{seed, arena, fuzz::generate_case(op_, seed, in_file), std::nullopt};
  if (prepared.c && generated_in_file) {
    prepared.placed = prepared.c->inputs;  // views of the file already
  } else if (prepared.c && runners_.has_op()) {
    prepared.placed = input_arenas_[arena].place(prepared.c->inputs);
  }
  return prepared;
}

PreparedCase OpSession::take_prepared(std::uint64_t seed) {
  if (ahead_.valid()) {
    PreparedCase ahead = ahead_.get();
    if (ahead.seed == seed) return ahead;
  }
  return prepare(seed, 0);  // nothing is being made ahead now: every file is free
}

int OpSession::arena_besides(int a, int b) {
  int arena = 0;
  while (arena == a || arena == b) ++arena;
  return arena;
}

bool OpSession::fits_ahead(const PreparedCase& prepared, std::uint64_t ahead) const {
  return prepared.c && input_bytes(*prepared.c) * ahead <= most_bytes_made_ahead_;
}

void OpSession::make_ahead(std::uint64_t seed, int arena) {
  ahead_seed_ = seed;
  ahead_arena_ = arena;
  ahead_ = maker_.submit([this, seed, arena] { return prepare(seed, arena); });
}

OpSession::BeingMade OpSession::case_of(std::uint64_t seed, int busy) {
  if (ahead_.valid() && ahead_seed_ == seed) return {ahead_.share(), ahead_arena_};
  if (ahead_.valid()) (void)ahead_.get();  // a wrong guess: its file is free once it is made
  const int arena = arena_besides(busy);
  return {maker_.submit([this, seed, arena] { return prepare(seed, arena); }).share(), arena};
}

Expected<result::CaseRecord> OpSession::run_seed(std::uint64_t seed,
                                                 const std::vector<std::uint64_t>& upcoming, Ahead ahead) {
  const auto start = Clock::now();
  if (started_ && started_->seed != seed) drop_started();
  // Cases start ahead only where the op and the reference run at once, each on a thread of its own.
  if (started_ || (ahead == Ahead::run && runners_.parallel() && runners_.has_op()))
    return run_started(seed, ahead == Ahead::run ? upcoming : std::vector<std::uint64_t>{}, start);
  PreparedCase current = take_prepared(seed);
  if (!upcoming.empty() && fits_ahead(current, 1)) {
    // Made while this case runs, in another input file: the workers read this one meanwhile.
    make_ahead(upcoming.front(), arena_besides(current.arena));
  }
  if (!current.c) return std::unexpected(current.c.error());
  auto record = TRY(run_prepared(*current.c, current.placed));
  // The wall time includes generating the case (or waiting for it), which run_case cannot see.
  record.timing.wall_secs = seconds_since(start);
  return record;
}

OpSession::StartedCase OpSession::hand_to_workers(std::shared_future<PreparedCase> prepared,
                                                  std::uint64_t seed, int arena) {
  return StartedCase{seed, arena, prepared, runners_.start(prepared)};
}

void OpSession::drop_started() {
  if (!started_) return;
  StartedCase dropped = std::move(*started_);
  started_.reset();
  dropped.calls.abandon();
}

Expected<result::CaseRecord> OpSession::run_started(std::uint64_t seed,
                                                    const std::vector<std::uint64_t>& upcoming,
                                                    Clock::time_point start) {
  StartedCase current;
  if (started_) {
    current = std::move(*started_);
    started_.reset();
  } else {
    auto [made, arena] = case_of(seed, -1);  // no case is in flight: every file is free
    current = hand_to_workers(std::move(made), seed, arena);
  }
  const PreparedCase& prepared = current.prepared.get();
  if (!upcoming.empty() && fits_ahead(prepared, 1)) {
    // The case before this one is done with its input file: both its calls have come back. The
    // next case was usually made while the case before ran, so the op's worker need not wait for it.
    const std::uint64_t next = upcoming.front();
    auto [next_made, next_arena] = case_of(next, current.arena);
    started_ = hand_to_workers(std::move(next_made), next, next_arena);
    // The case after it, in the third file, is made while this one and the next run.
    if (upcoming.size() > 1 && fits_ahead(prepared, 2))
      make_ahead(upcoming[1], arena_besides(current.arena, next_arena));
  }
  RawOutputs raw = current.calls.wait();
  if (!prepared.c) return std::unexpected(prepared.c.error());
  TRY(fatal_if_unstartable(raw.reference));
  TRY(fatal_if_unstartable(raw.op));
  return judged(*prepared.c, std::move(raw), start);
}

Expected<OpSession::RawOutputs> OpSession::run_raw(const fuzz::Case& c) {
  drop_started();
  return runners_.run_both(c, place_now(c));
}

// A case run without run_seed goes in the input file no case made ahead is using.
std::optional<tensor::NamedTensors> OpSession::place_now(const fuzz::Case& c) {
  if (!runners_.has_op()) return std::nullopt;
  return input_arenas_[arena_besides(ahead_.valid() ? ahead_arena_ : -1)].place(c.inputs);
}

Expected<result::CaseRecord> OpSession::run_case(const fuzz::Case& c) {
  drop_started();
  return run_prepared(c, place_now(c));
}

Expected<result::CaseRecord> OpSession::run_prepared(const fuzz::Case& c,
                                                     const std::optional<tensor::NamedTensors>& placed) {
  const auto start = Clock::now();
  return judged(c, TRY(runners_.run_both(c, placed)), start);
}

result::CaseRecord OpSession::judged(const fuzz::Case& c, RawOutputs raw, Clock::time_point start) {
  result::CaseRecord record = judge_.new_record(c);
  // A case cut at the time budget has no verdict: the executor reports it apart and counts it nowhere.
  record.cut = raw.reference.failure == proc::RunFailure::cut || raw.op.failure == proc::RunFailure::cut;
  judge_.judge(record, c, raw.reference, raw.op, true);
  CaseJudge::keep_inputs_if_failed(record, c);
  record.timing.op_secs = std::chrono::duration<double>(raw.op.inside).count();
  record.timing.reference_secs = std::chrono::duration<double>(raw.reference.inside).count();
  record.timing.overlap_secs = runners_.overlap_secs(raw.op, raw.reference);
  record.runtime = std::move(raw.op.runtime);
  record.launches = std::move(raw.op.launches);
  if (!record.runtime.is_object()) record.runtime = nlohmann::json::object();
  // A script that reports nothing still ran with the framework its config names.
  if (!record.runtime.contains("framework"))
    record.runtime["framework"] = std::string(config::framework_name(op_.framework));
  record.timing.wall_secs = seconds_since(start);
  return record;
}

Expected<result::CaseRecord> OpSession::check_output(const fuzz::Case& c, tensor::NamedTensors outputs,
                                                     const nlohmann::json* kwargs) {
  drop_started();
  const auto start = Clock::now();
  result::CaseRecord record = judge_.new_record(c);
  const proc::RunOutcome ref = runners_.run_reference(c, kwargs);
  record.timing.reference_secs = std::chrono::duration<double>(ref.inside).count();
  TRY(fatal_if_unstartable(ref));
  proc::RunOutcome given;
  given.outputs = std::move(outputs);
  judge_.judge(record, c, ref, given, false);
  CaseJudge::keep_inputs_if_failed(record, c);
  record.timing.wall_secs = seconds_since(start);
  return record;
}

}  // namespace gpuemu::engine
