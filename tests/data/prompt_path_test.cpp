#include "vime/data/prompt_path.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/data/prompt_file.hpp"
#include "vime/error.hpp"

using vime::data::parse_prompt_path;
using vime::data::read_prompt_file;

namespace {

// The row numbers (0..9 stored as {"i": n}) that `suffix` selects from a 10-row file.
std::vector<int64_t> rows_selected(const std::string& suffix) {
  vime::test::TempDir dir;
  std::string text;
  for (int i = 0; i < 10; ++i) text += "{\"i\": " + std::to_string(i) + "}\n";
  auto path = dir.write("rows.jsonl", text);
  std::vector<int64_t> ids;
  for (const auto& row : read_prompt_file(path.string() + suffix).rows)
    ids.push_back(row.value.at("i").as_int());
  return ids;
}

std::vector<int64_t> range(int64_t first, int64_t last) {
  std::vector<int64_t> v;
  for (int64_t i = first; i < last; ++i) v.push_back(i);
  return v;
}

}  // namespace

// slime's test_read_file_slicing vectors.
TEST_CASE("row slices follow Python semantics (slime's vectors)", "[data]") {
  CHECK(rows_selected("@[0:3]") == range(0, 3));
  CHECK(rows_selected("@[3:]") == range(3, 10));
  CHECK(rows_selected("@[:4]") == range(0, 4));
  CHECK(rows_selected("@[-3:]") == range(7, 10));
  CHECK(rows_selected("@[:-2]") == range(0, 8));
  CHECK(rows_selected("@[1:-1]") == range(1, 9));
  CHECK(rows_selected("@[-5:-2]") == range(5, 8));
  CHECK(rows_selected("@[-100:]") == range(0, 10));
  CHECK(rows_selected("") == range(0, 10));
  CHECK(rows_selected("@[:]") == range(0, 10));
  CHECK(rows_selected("@[5:2]").empty());
  CHECK(rows_selected("@[20:]").empty());
  CHECK(rows_selected("@[-2:100]") == range(8, 10));
}

TEST_CASE("only a well-formed @[a:b] suffix is a slice", "[data]") {
  auto p = parse_prompt_path("/d/a@b.jsonl@[1:-2]");
  CHECK(p.path == "/d/a@b.jsonl");
  REQUIRE(p.slice);
  CHECK(*p.slice->start == 1);
  CHECK(*p.slice->stop == -2);
  CHECK_FALSE(parse_prompt_path("/d/x.jsonl").slice);
  CHECK_FALSE(parse_prompt_path("/d/x.jsonl@[1]").slice);
  CHECK_FALSE(parse_prompt_path("/d/x.jsonl@[a:2]").slice);
  CHECK_FALSE(parse_prompt_path("/d/x.jsonl@[1:2:3]").slice);
  CHECK(parse_prompt_path("/d/x.jsonl@[1]").path == "/d/x.jsonl@[1]");
}

TEST_CASE("malformed JSONL lines are skipped and reported with line numbers", "[data]") {
  vime::test::TempDir dir;
  auto path = dir.write("mixed.jsonl",
                        "{\"input\": \"a\"}\n"
                        "{not json\n"
                        "\n"
                        "[1, 2]\n"
                        "{\"input\": \"b\"}\n"
                        "{\"input\": \"c\"");
  auto file = read_prompt_file(path.string());
  REQUIRE(file.rows.size() == 2);
  CHECK(file.rows[0].line_number == 1);
  CHECK(file.rows[1].line_number == 5);
  REQUIRE(file.bad_lines.size() == 3);
  CHECK(file.bad_lines[0].line_number == 2);
  CHECK(file.bad_lines[1].line_number == 4);
  CHECK(file.bad_lines[1].reason == "a JSON array, not an object");
  CHECK(file.bad_lines[2].line_number == 6);
  std::string described = vime::data::describe_bad_lines(file);
  CHECK_THAT(described, Catch::Contains("skipped 3 malformed lines"));
  CHECK_THAT(described, Catch::Contains("line 2: invalid JSON"));
}

TEST_CASE("unusable prompt files give one clear error", "[data]") {
  vime::test::TempDir dir;
  auto bad = dir.write("bad.jsonl", "nope\n{\n");
  CHECK_THROWS_WITH(read_prompt_file(bad.string()), Catch::Contains("no usable row") &&
                                                        Catch::Contains("line 1") &&
                                                        Catch::Contains("bad.jsonl"));
  CHECK_THROWS_AS(read_prompt_file((dir.path() / "missing.jsonl").string()), vime::UsageError);
  CHECK_THROWS_WITH(read_prompt_file((dir.path() / "missing.jsonl").string()),
                    Catch::Contains("--prompt-data") && Catch::Contains("cannot open"));
  auto parquet = dir.write("train.parquet", "PAR1");
  CHECK_THROWS_WITH(read_prompt_file(parquet.string() + "@[0:10]"),
                    Catch::Contains("cannot read Parquet") && Catch::Contains("to_json(") &&
                        Catch::Contains("train.jsonl"));
  auto csv = dir.write("x.csv", "a,b\n");
  CHECK_THROWS_WITH(read_prompt_file(csv.string(), "--eval-prompt-data"),
                    Catch::Contains("--eval-prompt-data") && Catch::Contains("unsupported"));
  // A UTF-8 byte-order mark (editors on Windows) and CRLF line ends are accepted.
  auto bom = dir.write("bom.jsonl", "\xEF\xBB\xBF{\"input\": \"a\"}\r\n{\"input\": \"b\"}\r\n");
  auto with_bom = read_prompt_file(bom.string());
  CHECK(with_bom.rows.size() == 2);
  CHECK(with_bom.bad_lines.empty());
  auto empty = dir.write("empty.jsonl", "");
  CHECK(read_prompt_file(empty.string()).rows.empty());
}
