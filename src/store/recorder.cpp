// RunRecorder (see recorder.hpp): one committed transaction per failure, summaries at the end.
#include "store/recorder.hpp"

#include <cstdio>

namespace gpuemu::store {

Expected<RunRecorder> RunRecorder::start(Store& store, const RunInfo& info, bool announce) {
  const auto run = TRY(store.begin_run(info));
  return RunRecorder(store, run, announce);
}

Expected<void> RunRecorder::on_case(const engine::CaseRecord& record) {
  if (record.verdict.passed()) return after_store_ ? after_store_() : Expected<void>{};
  TRY(store_->record_failure(run_, record));
  ++stored_;
  if (announce_) {
    std::fprintf(stderr, "stored failure %llu of %s\n", static_cast<unsigned long long>(record.seed),
                 record.op.c_str());
  }
  return after_store_ ? after_store_() : Expected<void>{};
}

Expected<void> RunRecorder::finish(const engine::RunResult& result) {
  for (const auto& op : result.ops) TRY(store_->record_op_summary(run_, op));
  return store_->finish_run(run_, result);
}

}  // namespace gpuemu::store
