// Tests of attest/statement.hpp: subjects by SHA-256, the predicate copied from result.json
// (measurements only), and messages for malformed results and missing files.
#include "attest/statement.hpp"

#include "signed_fixture.hpp"
#include "util/hash.hpp"

namespace gpuemu::attest {
namespace {

using nlohmann::json;
using testing::SignedFixture;

TEST(Statement, SubjectsAreTheOpReferenceAndToolFilesBySha256) {
  SignedFixture f;
  const json& subjects = f.statement["subject"];
  ASSERT_EQ(subjects.size(), 5u);
  std::vector<std::string> names;
  for (const json& s : subjects) {
    names.push_back(s["name"]);
    auto digest = util::sha256_file_hex(f.project / s["name"].get<std::string>());
    ASSERT_TRUE(digest);
    EXPECT_EQ(s["digest"]["sha256"], *digest);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"kernels/softmax.py", "kernels/matmul.py", "reference/softmax_ref.py",
                                      "reference/matmul_ref.py", "gpuemu"}));
  EXPECT_EQ(subjects[0]["annotations"]["gpuemu.role"], "op");
  EXPECT_EQ(subjects[2]["annotations"]["gpuemu.role"], "reference");
  EXPECT_EQ(subjects[4]["annotations"]["gpuemu.role"], "tool");
}

TEST(Statement, HasTheInTotoV1Envelope) {
  SignedFixture f;
  EXPECT_EQ(f.statement["_type"], "https://in-toto.io/Statement/v1");
  EXPECT_EQ(f.statement["predicateType"], "https://gpuemu.dev/kernel-correctness-report/v1");
  EXPECT_TRUE(check_statement(f.statement));
}

TEST(Statement, PredicateHoldsWhatWasMeasuredAndNothingElse) {
  SignedFixture f;
  const json& p = f.statement["predicate"];
  EXPECT_EQ(p["tool"], (json{{"name", "gpuemu"}, {"version", "0.1.0"}}));
  EXPECT_EQ(p["seed"], "18446744073709551557");
  EXPECT_EQ(p["config_digest"], "5f1c0d2e9a7b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5");
  EXPECT_EQ(p["timestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(p["passed"], false);
  EXPECT_EQ(p["project"], "attest-fixture");
  ASSERT_EQ(p["ops"].size(), 2u);
  const json& softmax = p["ops"][0];
  EXPECT_EQ(softmax["total"], 40);
  EXPECT_EQ(softmax["dtypes"][1]["dtype"], "float16");
  EXPECT_EQ(softmax["dtypes"][1]["max_abs"], "NaN");
  EXPECT_EQ(softmax["dtypes"][1]["atol"], 0.01);
  const json& failure = softmax["failures"][0];
  EXPECT_EQ(failure["seed"], "9007199254740993");  // beyond 2^53: kept exact as a string
  EXPECT_EQ(failure["kind"], "nan_mismatch");
  EXPECT_EQ(failure["shapes"]["x"], json::array({3, 65504}));
  EXPECT_EQ(failure["replay"], "gpuemu reproduce 9007199254740993 --op softmax");
  EXPECT_FALSE(failure.contains("stderr"));
  EXPECT_EQ(f.statement.dump().find("SECRET_TOKEN"), std::string::npos);
  EXPECT_FALSE(p.contains("duration_secs"));
}

TEST(Statement, OneReferenceForManyOpsIsOneSubject) {
  auto subjects = collect_subjects("/r", {"kernels/a.py", "kernels/b.py"},
                                   {"ref/common.py", "ref/./common.py"}, "/usr/bin/gpuemu");
  ASSERT_EQ(subjects.size(), 4u);
  EXPECT_EQ(subjects[2].name, "ref/common.py");
  EXPECT_EQ(subjects[2].path, fs::path("/r/ref/common.py"));
  EXPECT_EQ(subjects[3].path, fs::path("/usr/bin/gpuemu"));
}

TEST(Statement, MissingSubjectFileIsNamed) {
  testing::ScratchDir dir;
  auto statement = build_statement(testing::fixture_result(),
                                   {{"kernels/gone.py", dir.path() / "kernels/gone.py", SubjectRole::op}});
  ASSERT_FALSE(statement);
  EXPECT_EQ(statement.error().message, "cannot hash subject 'kernels/gone.py' at '" +
                                           (dir.path() / "kernels/gone.py").string() +
                                           "': check that the file exists (op and reference paths are "
                                           "relative to --artifacts-root)");
}

TEST(Statement, SubjectNamesMustStayInsideTheProject) {
  for (const char* name : {"/etc/passwd", "../outside.py", "kernels/../../x"}) {
    auto statement = build_statement(testing::fixture_result(), {{name, "/etc/hostname", SubjectRole::op}});
    ASSERT_FALSE(statement) << name;
    EXPECT_EQ(statement.error().message, std::string("subject name '") + name +
                                             "' must be a relative path inside the project, without '..'");
  }
}

TEST(Statement, MalformedResultsNameTheField) {
  SignedFixture f;
  auto message_for = [&](auto&& mutate) {
    json result = testing::fixture_result();
    mutate(result);
    auto statement = build_statement(result, f.subjects());
    return statement ? std::string("built") : statement.error().message;
  };
  EXPECT_EQ(message_for([](json& r) { r.erase("config_digest"); }), "result.json: config_digest is missing");
  EXPECT_EQ(message_for([](json& r) { r["seed"] = 42; }), "result.json: seed must be a string");
  EXPECT_EQ(message_for([](json& r) { r["seed"] = "-1"; }),
            "result.json: seed must be a decimal string such as \"42\"");
  EXPECT_EQ(message_for([](json& r) { r["tool"].erase("version"); }), "result.json: tool.version is missing");
  EXPECT_EQ(message_for([](json& r) { r["ops"][1]["total"] = "ten"; }),
            "result.json: ops[1].total must be an integer");
  EXPECT_EQ(
      message_for([](json& r) { r["ops"][0]["dtypes"][1]["max_ulp"] = "lots"; }),
      "result.json: ops[0].dtypes[1].max_ulp must be a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
  EXPECT_EQ(message_for([](json& r) { r["ops"][0]["failures"][0]["seed"] = "0x10"; }),
            "result.json: ops[0].failures[0].seed must be a decimal string");
  EXPECT_EQ(message_for([](json& r) { r = json::array(); }), "result.json: expected a JSON object");
}

TEST(Statement, CheckNamesTheFirstBadField) {
  SignedFixture f;
  json s = f.statement;
  s["subject"][1]["digest"]["sha256"] = "ABC";
  EXPECT_EQ(check_statement(s).error().message,
            "statement: subject[1].digest.sha256 must be 64 lowercase hex digits");
  s = f.statement;
  s["_type"] = "https://in-toto.io/Statement/v0.1";
  EXPECT_EQ(check_statement(s).error().message,
            "statement: _type is \"https://in-toto.io/Statement/v0.1\", expected "
            "\"https://in-toto.io/Statement/v1\"");
  s = f.statement;
  s["predicate"]["ops"][0].erase("dtypes");
  EXPECT_EQ(check_statement(s).error().message, "statement predicate: ops[0].dtypes is missing");
}

}  // namespace
}  // namespace gpuemu::attest
