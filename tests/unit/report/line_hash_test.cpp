// primaryLocationLineHash as upload-sarif computes it: the vectors of github/codeql-action's
// src/fingerprints.test.ts (empty text, every line-ending mix, repeated lines), and the columns.
#include "report/line_hash.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"

namespace gpuemu::report {
namespace {

std::vector<std::string> all_lines(const std::string& text, int count) {
  std::vector<std::string> out;
  for (int line = 1; line <= count; ++line) out.push_back(primary_location_line_hash(text, line));
  return out;
}

TEST(LineHash, MatchesCodeqlActionVectors) {
  EXPECT_EQ(all_lines("", 1), (std::vector<std::string>{"c129715d7a2bc9a3:1"}));
  EXPECT_EQ(all_lines(" a\nb\n  \t\tc\n d", 4),
            (std::vector<std::string>{"271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1",
                                      "a23a3dc5e078b07b:1"}));
  EXPECT_EQ(all_lines(" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End", 6),
            (std::vector<std::string>{"8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1",
                                      "c6805c5e1288b612:1", "b86d3392aea1be30:1", "e6ceba753e1a442:1"}));
  const std::vector<std::string> ended{"e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1",
                                       "e20e36e16fcb0cc8:1", "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1",
                                       "c129715d7a2bc9a3:1"};
  for (const char* text : {" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
                           " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
                           " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
                           " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n"}) {
    EXPECT_EQ(all_lines(text, 7), ended) << text;
  }
  std::string lorem;
  for (int i = 0; i < 10; ++i) lorem += "Lorem ipsum dolor sit amet.\n";
  EXPECT_EQ(all_lines(lorem, 11),
            (std::vector<std::string>{"a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3",
                                      "a7f2ff13bc495cf2:4", "a7f2ff13bc495cf2:5", "a7f2ff13bc495cf2:6",
                                      "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1",
                                      "cc97dc7b1d7d8f7b:1", "c129715d7a2bc9a3:1"}));
  EXPECT_EQ(primary_location_line_hash("one line", 3), "");
}

TEST(LineHash, SourceLineFactsGiveColumnsInCodePoints) {
  testing::TempDir dir("line-hash");
  std::ofstream(dir / "k.py") << "def k(x):\n    y = \"\xc3\xa9t\xc3\xa9\"  \n\n";
  const auto facts = source_line_facts(dir / "k.py", 2);
  ASSERT_TRUE(facts);
  EXPECT_EQ(facts->start_column, 5);
  EXPECT_EQ(facts->end_column, 14);  // `y = "été"` is 9 code points from column 5
  EXPECT_EQ(facts->line_hash,
            primary_location_line_hash("def k(x):\n    y = \"\xc3\xa9t\xc3\xa9\"  \n\n", 2));
  EXPECT_FALSE(source_line_facts(dir / "k.py", 3));  // blank
  EXPECT_FALSE(source_line_facts(dir / "k.py", 9));  // past the end
  EXPECT_FALSE(source_line_facts(dir / "missing.py", 1));
}

}  // namespace
}  // namespace gpuemu::report
