// Tests for result/document: the one reader and writer of result.json. Real documents (the report
// fixtures, documents made from RunResults) round-trip byte for byte; every malformed shape is refused
// with the message that names its field.
#include "result/document.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "../report/test_support.hpp"
#include "result/case_reader.hpp"

namespace gpuemu::result {
namespace {

using testing::load_fixture;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string round_trip(const nlohmann::json& document) {
  auto decoded = from_json(document);
  EXPECT_TRUE(decoded.has_value()) << decoded.error().message;
  return decoded ? to_json(*decoded).dump() : std::string();
}

CaseRecord failing_case(std::string op, std::uint64_t seed, std::uint64_t index, check::FailureKind kind) {
  CaseRecord r;
  r.op = std::move(op);
  r.seed = seed;
  r.index = index;
  r.params = {tensor::DType::float16, tensor::Layout::transposed, rng::ValueDistribution::boundary};
  r.dims = {{"M", 65}, {"N", 3}};
  r.shapes = {{"x", {65, 3}}, {"bias", {3}}, {"scalar", {}}};
  r.tolerance = {1e-3, 2.5e-3};
  r.verdict.kind = kind;
  r.verdict.message = "out[3, 1] differs";
  r.verdict.stats = {.max_abs = kInf,
                     .max_rel = kNaN,
                     .max_ulp = -kInf,
                     .mismatches = 7,
                     .elements = 195,
                     .mismatch_fraction = 0.03,
                     .tolerance_used = 1.0 / 3.0,
                     .worst = {{"out", {3, 1}, kNaN, 0.5, kInf, -kInf}, {"aux", {}, 0.1, 0.2, 0.1, 0.5}}};
  r.stderr_tail = "Traceback\n  boom\n";
  return r;
}

// A run with everything optional present: an implementation, non-finite statistics, a cut case, an
// op not run, runtimes and timings.
RunResult sample_run() {
  RunResult run;
  run.command = "ci";
  run.master_seed = 18446744073709551615ull;
  run.config_digest = "ab12";
  run.project = "demo <&> \"quoted\"";
  run.partial = true;
  run.duration_secs = 2.75;
  OpResult softmax;
  softmax.op = "softmax/v2";
  softmax.spec = "softmax";
  softmax.implementation = "v2";
  softmax.source = "kernels/softmax.py:12";
  softmax.total = 4;
  softmax.passed = 2;
  softmax.failed = 1;
  softmax.errors = 1;
  softmax.dtypes.push_back({tensor::DType::float16, 4, 2, 1, 1, kInf, kNaN, 3.0, 0.25, {1e-3, 2.5e-3}});
  softmax.failures.push_back(failing_case("softmax/v2", 99, 1, check::FailureKind::mismatch));
  softmax.failures.push_back(failing_case("softmax/v2", 7, 3, check::FailureKind::op_error));
  softmax.timing = {1.5, 0.75, 0.25};
  softmax.runtime = {{"framework", "numpy"}, {"version", "2.1.0"}, {"device", "cpu"}};
  OpResult gelu;
  gelu.op = "gelu";
  gelu.source = "";
  OpResult add;
  add.op = "add";
  add.source = "add.py";
  add.total = 1;
  add.passed = 1;
  add.dtypes.push_back({tensor::DType::bfloat16, 1, 1, 0, 0, 0.0, 0.0, 0.0, 0.0, {1e-2, 1e-2}});
  add.timing = {0.125, 0.0, 0.5};  // more than wall: the share stays at 0
  run.ops = {softmax, gelu, add};
  run.cut = {{"softmax/v2", 5, 9, "op softmax.py was cut after 1.8 s"}, {"gelu", 3, 0, "cut"}};
  return run;
}

TEST(ResultDocument, ReportFixturesRoundTripByteForByte) {
  for (const char* name : {"failing.json", "passing.json"}) {
    const auto document = load_fixture(name);
    EXPECT_EQ(round_trip(document), document.dump()) << name;
  }
}

// The document of a RunResult is pinned by a golden file written by the RunResult writer before
// the typed document existed: the bytes of result.json did not change.
TEST(ResultDocument, RunResultDocumentIsUnchangedAndRoundTrips) {
  const auto written = to_json(sample_run());
  nlohmann::json golden = nlohmann::json::parse(
      testing::read_file(testing::source_dir() / "tests/unit/result/data/run_result.json"));
  golden["tool"]["version"] = GPUEMU_VERSION;
  EXPECT_EQ(written.dump(), golden.dump());
  EXPECT_EQ(round_trip(written), written.dump());
  // Seeds stay exact, non-finite numbers keep their spelling, optional fields stay absent.
  const auto decoded = from_json(written).value();
  EXPECT_EQ(decoded.seed, 18446744073709551615ull);
  EXPECT_TRUE(std::isinf(decoded.ops[2].failures[0].figures.max_abs));
  EXPECT_TRUE(std::isnan(decoded.ops[2].failures[0].worst[0].actual));
  EXPECT_EQ(decoded.ops[2].failures[1].case_index, 3u);
  EXPECT_EQ(decoded.ops[2].implementation, "v2");
  EXPECT_FALSE(decoded.ops[0].implementation.has_value());
  EXPECT_FALSE(written["ops"][0].contains("spec"));
  EXPECT_EQ(decoded.ops[1].status(), OpStatus::not_run);
  EXPECT_EQ(decoded.cut->at(0).op, "gelu");
  EXPECT_EQ(to_json(make_failure(sample_run().ops[0].failures[0])).dump(),
            case_to_json(sample_run().ops[0].failures[0]).dump());
}

// [policies] warn_threshold and skipped artifact checks: written only when there are some.
TEST(ResultDocument, WarningsRoundTripAndStayAbsentWhenNone) {
  auto run = sample_run();
  EXPECT_FALSE(to_json(make_document(run)).contains("warnings"));
  run.warnings = {"relu [float32] passed but used 93% of its tolerance",
                  "kernel 'k': artifact checks skipped"};
  const auto written = to_json(make_document(run));
  EXPECT_EQ(written["warnings"], nlohmann::json(run.warnings));
  EXPECT_EQ(round_trip(written), written.dump());
  EXPECT_EQ(from_json(written).value().warnings, run.warnings);
}

TEST(ResultDocument, CiSectionsRoundTrip) {
  auto document = to_json(sample_run());
  const nlohmann::json lint = {{"kernels",
                                {{{"name", "k"},
                                  {"file", "k.cu"},
                                  {"line", 3},
                                  {"passed", false},
                                  {"violations",
                                   {{{"check", "max_registers"},
                                     {"message", "too many"},
                                     {"file", ""},
                                     {"line", 0},
                                     {"limit", 32},
                                     {"actual", 40}}}}}}},
                               {"passed", false}};
  for (const auto& shard : {nlohmann::json("2/3"), nlohmann::json()}) {
    document["passed"] = false;
    document["ci"] = {{"quick", true},
                      {"allow_partial", false},
                      {"shard", shard},
                      {"lint", lint},
                      {"baseline",
                       {{"tag_or_source", "main@abc"},
                        {"regressions",
                         {{{"op", "add"},
                           {"dtype", "bfloat16"},
                           {"reason", "max_ulp grew from 1 to 2 (x2.0)"},
                           {"before", {{"op", "add"}, {"max_ulp", 1.0}}},
                           {"after", {{"max_ulp", "Infinity"}}}}}},
                        {"warnings", {"op 'x' is new"}}}}};
    EXPECT_EQ(round_trip(document), document.dump());
    const auto decoded = from_json(document).value();
    EXPECT_EQ(decoded.ci->shard.has_value(), shard.is_string());
    EXPECT_EQ(decoded.ci->baseline->regressions.at(0).reason, "max_ulp grew from 1 to 2 (x2.0)");
    EXPECT_FALSE(decoded.partial_allowed());
    // A ci section without a baseline or lint, as a run without either writes it.
    document["ci"] = {{"quick", false},
                      {"allow_partial", true},
                      {"shard", nullptr},
                      {"baseline", nullptr},
                      {"lint", nullptr}};
    EXPECT_EQ(round_trip(document), document.dump());
    EXPECT_TRUE(from_json(document).value().partial_allowed());
  }
}

TEST(ResultDocument, LegacyDocumentsStayReadable) {
  auto document = load_fixture("failing.json");
  ASSERT_FALSE(document["ops"][0].contains("status"));
  ASSERT_FALSE(document.contains("cut"));
  document["ops"][1]["failures"][0].erase("case");
  const auto decoded = from_json(document).value();
  EXPECT_FALSE(decoded.cut.has_value());
  EXPECT_FALSE(decoded.ops[1].failures[0].case_index.has_value());
  EXPECT_EQ(decoded.ops[0].status(), OpStatus::passed);
  EXPECT_EQ(decoded.ops[1].status(), OpStatus::failed);
  EXPECT_FALSE(decoded.ops[0].timing.has_value());
  EXPECT_EQ(to_json(decoded).dump(), document.dump());
}

struct Malformed {
  const char* what;
  void (*damage)(nlohmann::json&);
  const char* message;  // up to "; the file is not ..."
};

TEST(ResultDocument, RefusesEachMalformedShapeNamingTheField) {
  const Malformed cases[] = {
      {"seed as a number", [](nlohmann::json& d) { d["ops"][3]["failures"][0]["seed"] = 1234; },
       "out/result.json: ops[3].failures[0].seed should be a seed as a decimal string, found 1234"},
      {"unknown kind", [](nlohmann::json& d) { d["ops"][2]["failures"][1]["kind"] = "regression"; },
       "out/result.json: ops[2].failures[1].kind names an unknown failure kind \"regression\""},
      {"version", [](nlohmann::json& d) { d["schema_version"] = 2; },
       "out/result.json: schema_version is 2 but this gpuemu reads version 1"},
      {"missing statistic", [](nlohmann::json& d) { d["ops"][1]["dtypes"][0].erase("max_ulp"); },
       "out/result.json: ops[1].dtypes[0].max_ulp is missing"},
      {"lowercase nan", [](nlohmann::json& d) { d["ops"][0]["dtypes"][0]["max_abs"] = "nan"; },
       "out/result.json: ops[0].dtypes[0].max_abs should be a number or \"NaN\", \"Infinity\", "
       "\"-Infinity\", "
       "found \"nan\""},
      {"seed above 2^64", [](nlohmann::json& d) { d["seed"] = "18446744073709551616"; },
       "out/result.json: seed should be a seed as a decimal string, found \"18446744073709551616\""},
      {"status", [](nlohmann::json& d) { d["ops"][0]["status"] = "green"; },
       "out/result.json: ops[0].status is \"green\", not \"passed\", \"failed\" or \"not_run\""},
      {"negative count", [](nlohmann::json& d) { d["ops"][0]["total"] = -1; },
       "out/result.json: ops[0].total should be a non-negative integer, found -1"},
      {"failure not an object", [](nlohmann::json& d) { d["ops"][1]["failures"][2] = 3; },
       "out/result.json: ops[1].failures[2] should be an object"},
      {"worst element", [](nlohmann::json& d) { d["ops"][3]["failures"][1]["worst"][0]["actual"] = true; },
       "out/result.json: ops[3].failures[1].worst[0].actual should be a number or \"NaN\", \"Infinity\", "
       "\"-Infinity\", found true"},
      {"missing tool version", [](nlohmann::json& d) { d["tool"].erase("version"); },
       "out/result.json: tool.version is missing"},
      {"ci quick", [](nlohmann::json& d) { d["ci"]["quick"] = "no"; },
       "out/result.json: ci.quick should be true or false, found \"no\""},
      {"shard", [](nlohmann::json& d) { d["ci"]["shard"] = 2; },
       "out/result.json: ci.shard should be a string, found 2"},
      {"regression", [](nlohmann::json& d) { d["ci"]["baseline"]["regressions"][0].erase("reason"); },
       "out/result.json: ci.baseline.regressions[0].reason is missing"},
      {"lint",
       [](nlohmann::json& d) {
         d["ci"]["lint"] = {{"kernels", {{{"name", "k"}}}}, {"passed", true}};
       },
       "out/result.json: ci.lint.kernels[0].file is missing"},
      {"cut",
       [](nlohmann::json& d) {
         d["cut"] = {{{"op", "x"}, {"seed", "1"}, {"message", "m"}}};
       },
       "out/result.json: cut[0].case is missing"},
      {"not an object", [](nlohmann::json& d) { d = nlohmann::json::array(); },
       "out/result.json: (document) should be a JSON object"},
      // Fields the reader decodes into typed values are checked too.
      {"shape of text",
       [](nlohmann::json& d) {
         d["ops"][1]["failures"][0]["shapes"]["x"] = {4, "n"};
       },
       "out/result.json: ops[1].failures[0].shapes.x[1] should be an integer, found \"n\""},
      {"dim of text", [](nlohmann::json& d) { d["ops"][1]["failures"][0]["dims"]["N"] = "65"; },
       "out/result.json: ops[1].failures[0].dims.N should be an integer, found \"65\""},
      {"warning", [](nlohmann::json& d) { d["ci"]["baseline"]["warnings"][0] = 1; },
       "out/result.json: ci.baseline.warnings[0] should be a string, found 1"},
      {"run warning",
       [](nlohmann::json& d) {
         d["warnings"] = {"near [float32] passed", false};
       },
       "out/result.json: warnings[1] should be a string, found false"},
      {"run warnings", [](nlohmann::json& d) { d["warnings"] = "near"; },
       "out/result.json: warnings should be an array, found \"near\""},
      {"timing",
       [](nlohmann::json& d) {
         d["timing"] = {{"wall_secs", "long"}};
       },
       "out/result.json: timing.wall_secs should be a number or \"NaN\", \"Infinity\", \"-Infinity\", found "
       "\"long\""},
  };
  for (const auto& c : cases) {
    auto document = load_fixture("failing.json");
    c.damage(document);
    auto decoded = from_json(document, "out/result.json");
    ASSERT_FALSE(decoded.has_value()) << c.what;
    EXPECT_EQ(decoded.error().kind, ErrorKind::parse);
    EXPECT_EQ(
        decoded.error().message,
        std::string(c.message) +
            "; the file is not a gpuemu result.json version 1 (regenerate it with this gpuemu, or use the "
            "gpuemu that wrote it)")
        << c.what;
  }
}

// `reproduce` prints a case record through the same reader; there a passing case has kind "none".
TEST(ResultDocument, CaseRecordsDecodeIncludingPassingOnes) {
  auto record = failing_case("softmax/v2", 99, 1, check::FailureKind::mismatch);
  const auto written = case_to_json(record);
  EXPECT_EQ(to_json(case_from_json(written, "record").value()).dump(), written.dump());
  record.verdict.kind = check::FailureKind::none;
  EXPECT_EQ(case_from_json(case_to_json(record), "record").value().kind, "none");
  auto damaged = written;
  damaged["seed"] = 99;
  EXPECT_TRUE(case_from_json(damaged, "record")
                  .error()
                  .message.starts_with("record: seed should be a seed as a decimal string, found 99"));
  // In result.json a failure never passed.
  auto document = to_json(sample_run());
  document["ops"][2]["failures"][0]["kind"] = "none";
  EXPECT_TRUE(from_json(document).error().message.starts_with(
      "result.json: ops[2].failures[0].kind names an unknown failure kind \"none\""));
}

TEST(ResultDocument, DecodesNonFiniteNumbersAndReadsAnythingElseAsNaN) {
  EXPECT_TRUE(std::isnan(decode_number("NaN")));
  EXPECT_EQ(decode_number("Infinity"), kInf);
  EXPECT_EQ(decode_number("-Infinity"), -kInf);
  EXPECT_EQ(decode_number(0.25), 0.25);
  EXPECT_EQ(decode_number(3), 3.0);
  EXPECT_TRUE(std::isnan(decode_number(nullptr)));
  EXPECT_TRUE(std::isnan(decode_number("inf")));
}

TEST(ResultDocument, LoadNamesTheFile) {
  testing::TempDir dir;
  auto missing = load_document(dir / "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::io);
  testing::write_file(dir / "cut.json", R"({"schema_version": 1, "ops": [)");
  EXPECT_EQ(load_document(dir / "cut.json").error().message,
            (dir / "cut.json").string() +
                ": not valid JSON (truncated or not a result.json); regenerate it with `gpuemu ci run`");
  testing::write_file(dir / "ok.json", load_fixture("failing.json").dump());
  EXPECT_EQ(load_document(dir / "ok.json").value().project, "demo-kernels <&>");
}

}  // namespace
}  // namespace gpuemu::result
