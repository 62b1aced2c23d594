// Writes and queries on a real SQLite file: every field of runs, results and failures round-trips
// (u64 seeds above 2^63, NaN/Inf statistics, snapshot bytes), newest-first order and filters.
#include "store/store.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace gpuemu::store {
namespace {

using testing::kBigSeed;
using testing::same_double;
using testing::sample_record;
using testing::TempDir;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = Store::open(dir_.path() / "gpuemu.db");
    ASSERT_TRUE(opened) << opened.error().message;
    store_.emplace(std::move(*opened));
    store_->set_clock([this] { return now_; });
  }

  RunId begin(std::uint64_t master_seed = 1, std::string command = "fuzz") {
    auto run = store_->begin_run({std::move(command), master_seed, "sha256:abc", "proj"});
    EXPECT_TRUE(run) << run.error().message;
    return run.value_or(0);
  }

  TempDir dir_;
  std::optional<Store> store_;
  Millis now_ = 1'700'000'000'000;
};

void expect_same_record(const result::CaseRecord& got, const result::CaseRecord& want) {
  EXPECT_EQ(got.op, want.op);
  EXPECT_EQ(got.seed, want.seed);
  EXPECT_EQ(got.params.dtype, want.params.dtype);
  EXPECT_EQ(got.params.layout, want.params.layout);
  EXPECT_EQ(got.params.distribution, want.params.distribution);
  EXPECT_EQ(got.dims, want.dims);
  EXPECT_EQ(got.shapes, want.shapes);
  EXPECT_EQ(got.tolerance, want.tolerance);
  EXPECT_EQ(got.verdict.kind, want.verdict.kind);
  EXPECT_EQ(got.verdict.message, want.verdict.message);
  EXPECT_EQ(got.stderr_tail, want.stderr_tail);
  const auto& g = got.verdict.stats;
  const auto& w = want.verdict.stats;
  EXPECT_TRUE(same_double(g.max_abs, w.max_abs)) << g.max_abs;
  EXPECT_TRUE(same_double(g.max_rel, w.max_rel)) << g.max_rel;
  EXPECT_TRUE(same_double(g.max_ulp, w.max_ulp)) << g.max_ulp;
  EXPECT_EQ(g.mismatches, w.mismatches);
  EXPECT_EQ(g.elements, w.elements);
  EXPECT_EQ(g.mismatch_fraction, w.mismatch_fraction);
  EXPECT_TRUE(same_double(g.tolerance_used, w.tolerance_used));
  ASSERT_EQ(g.worst.size(), w.worst.size());
  for (std::size_t i = 0; i < w.worst.size(); ++i) {
    EXPECT_EQ(g.worst[i].output, w.worst[i].output);
    EXPECT_EQ(g.worst[i].index, w.worst[i].index);
    EXPECT_TRUE(same_double(g.worst[i].actual, w.worst[i].actual)) << i;
    EXPECT_TRUE(same_double(g.worst[i].expected, w.worst[i].expected)) << i;
    EXPECT_TRUE(same_double(g.worst[i].abs_err, w.worst[i].abs_err)) << i;
    EXPECT_TRUE(same_double(g.worst[i].rel_err, w.worst[i].rel_err)) << i;
  }
}

TEST_F(StoreTest, FailureRoundTripsEveryField) {
  const RunId run = begin(~0ull);
  const auto record = sample_record();
  auto id = store_->record_failure(run, record);
  ASSERT_TRUE(id) << id.error().message;

  auto found = store_->find_failure(kBigSeed);
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  const StoredFailure& f = **found;
  EXPECT_EQ(f.id, *id);
  EXPECT_EQ(f.run_id, run);
  EXPECT_EQ(f.config_digest, "sha256:abc");
  EXPECT_EQ(f.master_seed, ~0ull);
  EXPECT_EQ(f.minimized_from, std::nullopt);
  EXPECT_EQ(f.created_at, now_);
  EXPECT_TRUE(f.has_snapshot);
  expect_same_record(f.record, record);
  ASSERT_NE(f.record.inputs, nullptr);
  testing::expect_same_tensors(*f.record.inputs, *record.inputs);
  // The seed is stored as exact decimal text, so the sqlite3 shell shows the same number.
  EXPECT_EQ(testing::raw_query_text(store_->file(), "SELECT seed FROM failures"), "18446744073709551557");
}

TEST_F(StoreTest, FailureWithoutInputsHasNoSnapshot) {
  const RunId run = begin();
  auto record = sample_record(5);
  record.inputs = nullptr;
  ASSERT_TRUE(store_->record_failure(run, record));
  auto found = store_->find_failure(5);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_FALSE((*found)->has_snapshot);
  EXPECT_EQ((*found)->record.inputs, nullptr);
}

TEST_F(StoreTest, EveryFailureKindReadsBack) {
  // A kind the engine records (up to the last one, e.g. the sanitizer's out_of_bounds) must be one
  // `reproduce` can read again; the store refuses only numbers above check::kLastFailureKind.
  const RunId run = begin();
  for (int k = 1; k <= static_cast<int>(check::kLastFailureKind); ++k) {
    auto record = sample_record(100 + static_cast<std::uint64_t>(k));
    record.verdict.kind = static_cast<check::FailureKind>(k);
    ASSERT_TRUE(store_->record_failure(run, record));
    auto found = store_->find_failure(100 + static_cast<std::uint64_t>(k));
    ASSERT_TRUE(found && found->has_value()) << k << (found ? "" : found.error().message);
    EXPECT_EQ((*found)->record.verdict.kind, record.verdict.kind);
  }
}

TEST_F(StoreTest, RunLifecycleAndSummariesRoundTrip) {
  const RunId run = begin(kBigSeed, "test");
  auto runs = store_->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].finished_at, std::nullopt);  // what a killed run looks like
  EXPECT_EQ((*runs)[0].passed, std::nullopt);

  result::OpResult op;
  op.op = "softmax";
  op.source = "gpuemu.toml:12";
  op.total = 10;
  op.passed = 8;
  op.failed = 1;
  op.errors = 1;
  result::DtypeSummary d;
  d.dtype = tensor::DType::bfloat16;
  d.total = 10;
  d.passed = 8;
  d.failed = 1;
  d.errors = 1;
  d.max_abs = std::numeric_limits<double>::infinity();
  d.max_rel = std::numeric_limits<double>::quiet_NaN();
  d.max_ulp = 3;
  d.tolerance_used = 0.75;
  d.tolerance = {1e-2, 1e-2};
  op.dtypes = {d};
  ASSERT_TRUE(store_->record_op_summary(run, op));
  op.dtypes[0].max_ulp = 4;  // recording again replaces the row
  ASSERT_TRUE(store_->record_op_summary(run, op));
  ASSERT_TRUE(store_->record_failure(run, sample_record(1, "softmax")));

  result::RunResult result;
  result.command = "test";
  result.duration_secs = 2.5;
  result.partial = true;
  result.ops = {op};
  now_ += 2500;
  ASSERT_TRUE(store_->finish_run(run, result));

  runs = store_->list_runs();
  ASSERT_TRUE(runs);
  const StoredRun& r = runs->at(0);
  EXPECT_EQ(r.id, run);
  EXPECT_EQ(r.info.command, "test");
  EXPECT_EQ(r.info.master_seed, kBigSeed);
  EXPECT_EQ(r.info.config_digest, "sha256:abc");
  EXPECT_EQ(r.info.project, "proj");
  EXPECT_EQ(r.started_at, now_ - 2500);
  EXPECT_EQ(r.finished_at, now_);
  EXPECT_EQ(r.duration_secs, 2.5);
  EXPECT_TRUE(r.partial);
  EXPECT_EQ(r.passed, false);
  EXPECT_EQ(r.failures, 1);

  auto results = store_->list_results();
  ASSERT_TRUE(results);
  ASSERT_EQ(results->size(), 1u);
  const StoredResult& x = results->at(0);
  EXPECT_EQ(x.run_id, run);
  EXPECT_EQ(x.command, "test");
  EXPECT_EQ(x.op, "softmax");
  EXPECT_EQ(x.source, "gpuemu.toml:12");
  EXPECT_EQ(x.summary.dtype, tensor::DType::bfloat16);
  EXPECT_EQ(x.summary.total, 10);
  EXPECT_EQ(x.summary.passed, 8);
  EXPECT_EQ(x.summary.failed, 1);
  EXPECT_EQ(x.summary.errors, 1);
  EXPECT_TRUE(std::isinf(x.summary.max_abs));
  EXPECT_TRUE(std::isnan(x.summary.max_rel));
  EXPECT_EQ(x.summary.max_ulp, 4);
  EXPECT_EQ(x.summary.tolerance_used, 0.75);
  EXPECT_EQ(x.summary.tolerance, (check::ToleranceSpec{1e-2, 1e-2}));
}

TEST_F(StoreTest, ListsAreNewestFirstAndFiltered) {
  now_ = 500;
  const RunId run = begin();
  for (std::uint64_t i = 0; i < 6; ++i) {
    now_ = 1000 + static_cast<Millis>(i) * 100;
    ASSERT_TRUE(store_->record_failure(run, sample_record(i, i % 2 ? "odd" : "even")));
  }
  auto all = store_->list_failures({.limit = 0});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(all->at(i).record.seed, 5 - i);
    EXPECT_EQ(all->at(i).record.inputs, nullptr);  // lists do not load snapshots
    EXPECT_TRUE(all->at(i).has_snapshot);
  }
  auto odd = store_->list_failures({.op = "odd", .limit = 2});
  ASSERT_TRUE(odd);
  ASSERT_EQ(odd->size(), 2u);
  EXPECT_EQ(odd->at(0).record.seed, 5u);
  EXPECT_EQ(odd->at(1).record.seed, 3u);
  auto recent = store_->list_failures({.since = 1300});
  ASSERT_TRUE(recent);
  ASSERT_EQ(recent->size(), 3u);
  EXPECT_EQ(recent->back().record.seed, 3u);

  // Runs: filtered by the ops they touched and their start time.
  now_ = 5000;
  const RunId later = begin(2);
  ASSERT_TRUE(store_->record_failure(later, sample_record(99, "other")));
  auto runs = store_->list_runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ(runs->at(0).id, later);
  auto other_runs = store_->list_runs({.op = "other"});
  ASSERT_TRUE(other_runs);
  ASSERT_EQ(other_runs->size(), 1u);
  EXPECT_EQ(other_runs->at(0).id, later);
  auto since_runs = store_->list_runs({.since = 4000});
  ASSERT_TRUE(since_runs);
  ASSERT_EQ(since_runs->size(), 1u);
  auto one = store_->list_runs({.limit = 1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
}

TEST_F(StoreTest, FindFailureTakesTheNewestWithThatSeedAndOp) {
  const RunId run = begin();
  auto first = sample_record(42, "a");
  first.verdict.message = "first";
  auto second = sample_record(42, "a");
  second.verdict.message = "second";
  auto other_op = sample_record(42, "b");
  ASSERT_TRUE(store_->record_failure(run, first));
  ASSERT_TRUE(store_->record_failure(run, second));
  ASSERT_TRUE(store_->record_failure(run, other_op));

  auto newest = store_->find_failure(42, "a");
  ASSERT_TRUE(newest && newest->has_value());
  EXPECT_EQ((*newest)->record.verdict.message, "second");
  auto any = store_->find_failure(42);
  ASSERT_TRUE(any && any->has_value());
  EXPECT_EQ((*any)->record.op, "b");
  auto none = store_->find_failure(43);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
}

TEST_F(StoreTest, MinimizedCasesLinkToTheirOriginal) {
  const RunId run = begin();
  auto original = store_->record_failure(run, sample_record(7));
  ASSERT_TRUE(original);
  auto small = sample_record(7);
  small.shapes = {{"a", {1, 1}}};
  small.dims = {{"M", 1}};
  tensor::NamedTensors inputs;
  inputs["a"] = testing::random_tensor(tensor::DType::float16, {1, 1}, {1, 1}, 2, 11);
  small.inputs = std::make_shared<const tensor::NamedTensors>(inputs);
  auto minimized = store_->record_minimized(*original, small);
  ASSERT_TRUE(minimized) << minimized.error().message;

  auto found = store_->get_failure(*minimized);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_EQ((*found)->minimized_from, *original);
  EXPECT_EQ((*found)->run_id, run);
  EXPECT_EQ((*found)->config_digest, "sha256:abc");
  EXPECT_EQ((*found)->record.shapes, small.shapes);
  testing::expect_same_tensors(*(*found)->record.inputs, inputs);
  // The newest failure with seed 7 is now the minimized one.
  EXPECT_EQ((*store_->find_failure(7))->id, *minimized);
  auto linked = store_->list_minimized(*original);
  ASSERT_TRUE(linked);
  ASSERT_EQ(linked->size(), 1u);
  EXPECT_EQ(linked->at(0).id, *minimized);
  // Minimized cases do not count as new failures of the run.
  EXPECT_EQ(store_->list_runs()->at(0).failures, 1);

  auto missing = store_->record_minimized(*minimized + 100, small);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::usage);
  EXPECT_NE(missing.error().message.find("has no failure"), std::string::npos);
}

TEST_F(StoreTest, WritesToAnUnknownRunAreRefused) {
  auto failure = store_->record_failure(12345, sample_record());
  ASSERT_FALSE(failure);
  EXPECT_EQ(failure.error().kind, ErrorKind::usage);
  EXPECT_NE(failure.error().message.find("has no run 12345"), std::string::npos);
  EXPECT_FALSE(store_->finish_run(12345, result::RunResult{}));
  EXPECT_FALSE(store_->record_op_summary(12345, result::OpResult{}));
  EXPECT_TRUE(store_->list_failures()->empty());
}

TEST_F(StoreTest, RecordRunWritesEverythingAtOnce) {
  result::RunResult result;
  result.command = "ci";
  result.master_seed = kBigSeed;
  result.config_digest = "sha256:def";
  result.project = "p";
  result::OpResult op;
  op.op = "matmul";
  op.failed = 2;
  op.dtypes = {result::DtypeSummary{}, result::DtypeSummary{.dtype = tensor::DType::float16}};
  op.failures = {sample_record(1), sample_record(2)};
  result.ops = {op};
  auto run = store_->record_run(result);
  ASSERT_TRUE(run) << run.error().message;
  auto runs = store_->list_runs();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->at(0).failures, 2);
  EXPECT_EQ(runs->at(0).passed, false);
  EXPECT_TRUE(runs->at(0).finished_at.has_value());
  EXPECT_EQ(store_->list_results()->size(), 2u);
  EXPECT_EQ((*store_->find_failure(2))->config_digest, "sha256:def");
}

TEST_F(StoreTest, BaselinesAreStoredReplacedListedAndDeleted) {
  const nlohmann::json doc = {{"version", 1}, {"seed", "18446744073709551557"}, {"max_abs", "NaN"}};
  now_ = 100;
  ASSERT_TRUE(store_->store_baseline("main", doc));
  now_ = 200;
  ASSERT_TRUE(store_->store_baseline("pr-7", {{"version", 1}}));
  now_ = 300;
  ASSERT_TRUE(store_->store_baseline("main", {{"version", 2}}));

  auto main = store_->get_baseline("main");
  ASSERT_TRUE(main && main->has_value());
  EXPECT_EQ((*main)->document, (nlohmann::json{{"version", 2}}));
  EXPECT_EQ((*main)->created_at, 300);
  auto list = store_->list_baselines();
  ASSERT_TRUE(list);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at(0).tag, "main");
  EXPECT_EQ(list->at(1).tag, "pr-7");
  EXPECT_EQ(*store_->delete_baseline("pr-7"), true);
  EXPECT_EQ(*store_->delete_baseline("pr-7"), false);
  EXPECT_FALSE(store_->get_baseline("pr-7")->has_value());
  EXPECT_FALSE(store_->store_baseline("", doc));

  ASSERT_TRUE(store_->store_baseline("exact", doc));
  EXPECT_EQ((*store_->get_baseline("exact"))->document, doc);
}

TEST_F(StoreTest, ArtifactMetricsAttachToRunsAndBaselines) {
  const RunId run = begin();
  ArtifactMetrics m;
  m.kernel = "softmax_kernel";
  m.source = "kernels/softmax.ptx";
  m.metrics = {{"registers", 64}, {"spills", 0}};
  m.run_id = run;
  auto first = store_->record_artifact_metrics(m);
  ASSERT_TRUE(first) << first.error().message;
  m.run_id.reset();
  m.baseline_tag = "main";
  m.metrics["registers"] = 72;
  ASSERT_TRUE(store_->record_artifact_metrics(m));

  auto by_run = store_->list_artifact_metrics(run, std::nullopt);
  ASSERT_TRUE(by_run);
  ASSERT_EQ(by_run->size(), 1u);
  EXPECT_EQ(by_run->at(0).id, *first);
  EXPECT_EQ(by_run->at(0).kernel, "softmax_kernel");
  EXPECT_EQ(by_run->at(0).source, "kernels/softmax.ptx");
  EXPECT_EQ(by_run->at(0).metrics["registers"], 64);
  EXPECT_EQ(by_run->at(0).created_at, now_);
  auto by_tag = store_->list_artifact_metrics(std::nullopt, "main");
  ASSERT_TRUE(by_tag);
  ASSERT_EQ(by_tag->size(), 1u);
  EXPECT_EQ(by_tag->at(0).baseline_tag, "main");
  EXPECT_EQ(by_tag->at(0).run_id, std::nullopt);
  EXPECT_EQ(store_->list_artifact_metrics(std::nullopt, std::nullopt)->size(), 2u);
}

TEST_F(StoreTest, AnArtifactBaselineIsTheNewestRowOfEachKernelUnderItsTag) {
  const auto row = [](const std::string& kernel, int registers) {
    ArtifactMetrics m;
    m.kernel = kernel;
    m.source = "kernels/" + kernel + ".ptx";
    m.metrics = {{"registers", registers}};
    return m;
  };
  ASSERT_TRUE(store_->record_artifact_baseline("main", {row("reduce", 32), row("saxpy", 16)}));
  ASSERT_TRUE(store_->record_artifact_baseline("main", {row("reduce", 40)}));
  ASSERT_TRUE(store_->record_artifact_baseline("dev", {row("reduce", 99)}));

  auto main = store_->artifact_baseline("main");
  ASSERT_TRUE(main) << main.error().message;
  ASSERT_EQ(main->size(), 2u);
  EXPECT_EQ(main->at("reduce")["registers"], 40) << "storing a tag again makes its newest rows the baseline";
  EXPECT_EQ(main->at("saxpy")["registers"], 16);
  auto rows = store_->list_artifact_metrics(std::nullopt, "main");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->size(), 3u);
  EXPECT_EQ(rows->at(0).run_id, std::nullopt);
  EXPECT_TRUE(store_->artifact_baseline("nope")->empty());
  EXPECT_EQ(store_->record_artifact_baseline("", {row("reduce", 1)}).error().kind, ErrorKind::usage);
}

TEST_F(StoreTest, ADamagedSnapshotIsAnErrorNamingTheFailure) {
  const RunId run = begin();
  auto id = store_->record_failure(run, sample_record(3));
  ASSERT_TRUE(id);
  testing::raw_exec(store_->file(), "UPDATE snapshots SET bytes = substr(bytes, 1, 20)");
  auto found = store_->find_failure(3);
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().kind, ErrorKind::parse);
  EXPECT_NE(found.error().message.find("the input snapshot of failure " + std::to_string(*id)),
            std::string::npos)
      << found.error().message;
  // Listing still works: it does not read snapshots.
  EXPECT_EQ(store_->list_failures()->size(), 1u);
}

}  // namespace
}  // namespace gpuemu::store
