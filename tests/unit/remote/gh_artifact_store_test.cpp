// Tests for backends/gh_artifact_store.cpp against tests/servers/github_api.py: choosing the
// newest unexpired artifact of the default branch, the 302 to storage without the token, the zip.
#include <gtest/gtest.h>

#include <fstream>

#include "remote/baseline_transfer.hpp"
#include "test_servers.hpp"

namespace gpuemu::remote {
namespace {

using testing::Captured;
using testing::RecordingSleeper;
using testing::TempDir;

const std::string kGitHubToken = "ghs_testTokenValue0123456789";

std::string baseline(int marker) {
  return R"({"schema_version": 1, "tag": "main", "marker": )" + std::to_string(marker) + "}";
}

// Writes a zip holding `files` (name -> content) with Python's zipfile, deflated.
std::string write_zip(const TempDir& dir, const std::string& name,
                      const std::map<std::string, std::string>& files) {
  const auto path = dir.path() / name;
  const auto spec = dir.path() / (name + ".json");
  std::ofstream(spec) << nlohmann::json(files).dump();
  const std::string command =
      "python3 -c \"import json,sys,zipfile; z=zipfile.ZipFile(sys.argv[1],'w',"
      "zipfile.ZIP_DEFLATED); [z.writestr(k,v) for k,v in json.load(open(sys.argv[2])).items()]; "
      "z.close()\" " +
      path.string() + " " + spec.string();
  EXPECT_EQ(std::system(command.c_str()), 0);
  return path.string();
}

class GhArtifacts : public ::testing::Test {
 protected:
  void SetUp() override {
    nlohmann::json artifact = {{"name", "gpuemu-baseline"}, {"expired", false}};
    auto make = [&](int id, const std::string& branch, bool expired, const std::string& created,
                    std::string zip) {
      nlohmann::json a = artifact;
      a["id"] = id;
      a["head_branch"] = branch;
      a["expired"] = expired;
      a["created_at"] = created;
      a["zip"] = std::move(zip);
      return a;
    };
    const nlohmann::json scenario = {
        {"repo", "octo/kernels"},
        {"default_branch", "main"},
        {"token", kGitHubToken},
        {"artifacts",
         {make(11, "main", false, "2024-05-01T10:00:00Z",
               write_zip(dir_, "11.zip", {{"main.json", baseline(11)}})),
          make(12, "main", false, "2024-05-03T10:00:00Z",
               write_zip(dir_, "12.zip", {{"main.json", baseline(12)}, {"README.txt", "x"}})),
          make(13, "main", true, "2024-05-04T10:00:00Z",
               write_zip(dir_, "13.zip", {{"main.json", baseline(13)}})),
          make(14, "feature", false, "2024-05-05T10:00:00Z",
               write_zip(dir_, "14.zip", {{"main.json", baseline(14)}})),
          make(15, "trunk", false, "2024-05-02T10:00:00Z",
               write_zip(dir_, "15.zip", {{"a.json", baseline(15)}, {"b.json", baseline(16)}}))}}};
    std::ofstream(dir_.path() / "scenario.json") << scenario.dump();
    server_ =
        testing::python_server("github_api.py", {"--scenario", (dir_.path() / "scenario.json").string()});
    api_port_ = server_->announcement["api_port"];
  }
  Env env(bool with_token = true) const {
    Env e{{{"GITHUB_API_URL", "http://127.0.0.1:" + std::to_string(api_port_)},
           {"GITHUB_REPOSITORY", "octo/kernels"}}};
    if (with_token) e.vars["GITHUB_TOKEN"] = kGitHubToken;
    return e;
  }
  TempDir dir_;
  std::unique_ptr<testing::Child> server_;
  int api_port_ = 0;
};

TEST_F(GhArtifacts, NewestUnexpiredArtifactOfTheDefaultBranchWithoutForwardingTheToken) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper, env())};
  const auto pulled = fetch_baseline("gh-artifact://gpuemu-baseline", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  ASSERT_TRUE(pulled->bytes) << captured.all();
  EXPECT_EQ(*pulled->bytes, baseline(12));  // 13 expired, 14 is another branch, 11 is older
  const auto stats = testing::get_stats(api_port_);
  EXPECT_EQ(stats["blob_requests"], 1) << stats.dump();
  EXPECT_EQ(stats["blob_auth_headers"], 0) << stats.dump();
  EXPECT_EQ(stats["blob_bad_signature"], 0) << stats.dump();
  EXPECT_EQ(stats["api_unauthorized"], 0) << stats.dump();
  const std::string logs = captured.all();
  EXPECT_EQ(logs.find(kGitHubToken), std::string::npos);
  EXPECT_EQ(logs.find("S3CRETSAS"), std::string::npos) << logs;
  EXPECT_NE(logs.find("/blobs/12.zip?sv=***&sig=***"), std::string::npos) << logs;
}

TEST_F(GhArtifacts, BranchFromEnvironmentAndEntryByTag) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  Env e = env();
  e.vars["GITHUB_BASE_REF"] = "trunk";
  FetchOptions fetch{testing::test_options(captured, sleeper, e)};
  fetch.tag = "b";
  const auto pulled = fetch_baseline("gh-artifact://gpuemu-baseline", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_EQ(pulled->bytes, baseline(16));
  fetch.tag = "main";  // two .json entries, neither main.json
  const auto ambiguous = fetch_baseline("gh-artifact://gpuemu-baseline", fetch);
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(ambiguous.error().message,
            "gh-artifact://gpuemu-baseline: the artifact holds 2 .json files (a.json, b.json) and none is "
            "main.json; "
            "pass --tag to pick one or upload a single baseline file");
}

TEST_F(GhArtifacts, NoSuchArtifactIsAWarning) {
  Captured captured;
  RecordingSleeper sleeper(captured);
  FetchOptions fetch{testing::test_options(captured, sleeper, env())};
  const auto pulled = fetch_baseline("gh-artifact://other-name", fetch);
  ASSERT_TRUE(pulled) << pulled.error().message;
  EXPECT_FALSE(pulled->bytes);
  EXPECT_EQ(pulled->warnings,
            std::vector<std::string>{"no baseline at gh-artifact://other-name: no unexpired "
                                     "artifact 'other-name' from branch 'main' in octo/kernels"});
}

TEST_F(GhArtifacts, MissingTokenIsAnErrorThatSaysWhatToSet) {
  FetchOptions fetch;
  fetch.store.env = env(false);
  const auto pulled = fetch_baseline("gh-artifact://gpuemu-baseline", fetch);
  ASSERT_FALSE(pulled);
  EXPECT_NE(pulled.error().message.find("refused with HTTP 401"), std::string::npos)
      << pulled.error().message;
  EXPECT_NE(pulled.error().message.find("set GITHUB_TOKEN"), std::string::npos);
}

TEST_F(GhArtifacts, PushIsRefusedWithTheWorkflowAlternative) {
  PushOptions push;
  push.store.env = env();
  const auto pushed = push_baseline("gh-artifact://gpuemu-baseline", "main", baseline(1), push);
  ASSERT_FALSE(pushed);
  EXPECT_EQ(
      pushed.error().message,
      "cannot push to gh-artifact://gpuemu-baseline: GitHub's REST API cannot create artifacts. Write the "
      "baseline to a file (gpuemu baseline export TAG FILE) and upload it in the workflow with "
      "actions/upload-artifact (name: gpuemu-baseline) on the default branch");
}

}  // namespace
}  // namespace gpuemu::remote
