// RunRecorder (see store_recorder.hpp): one committed transaction per failure, summaries at the end.
#include "engine/store_recorder.hpp"

#include <cstdio>

namespace gpuemu::engine {

Expected<RunRecorder> RunRecorder::start(store::Store& store, const store::RunInfo& info, bool announce) {
  const auto run = TRY(store.begin_run(info));
  return RunRecorder(store, run, announce);
}

Expected<void> RunRecorder::on_case(const result::CaseRecord& record) {
  if (record.verdict.passed()) return after_store_ ? after_store_() : Expected<void>{};
  TRY(store_->record_failure(run_, record));
  ++stored_;
  if (announce_) {
    std::fprintf(stderr, "stored failure %llu of %s\n", static_cast<unsigned long long>(record.seed),
                 record.op.c_str());
  }
  return after_store_ ? after_store_() : Expected<void>{};
}

Expected<void> RunRecorder::finish(const result::RunResult& result) {
  for (const auto& op : result.ops) TRY(store_->record_op_summary(run_, op));
  return store_->finish_run(run_, result);
}

}  // namespace gpuemu::engine
