// `vime reward` end to end: the real binary, real rm_hub plugins, real files.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/test_support.hpp"
#include "vime/json.hpp"

using vime::Json;
using vime::test::run_vime;
using vime::test::TempDir;

namespace {

std::vector<Json> read_jsonl(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<Json> rows;
  std::string line;
  while (std::getline(in, line)) rows.push_back(Json::parse(line, path.string()));
  return rows;
}

}  // namespace

TEST_CASE("vime reward grades a file and reports bad lines by number", "[reward_cli]") {
  TempDir dir;
  auto in =
      dir.write("in.jsonl",
                "{\"response\": \"so \\\\boxed{42}\", \"label\": \"42\", \"prompt\": \"q1\"}\n"
                "{\"response\": \"so \\\\boxed{41}\", \"label\": 42}\n"
                "not json at all\n"
                "\n"
                "{\"label\": \"42\"}\n"
                "{\"response\": \"the brown fox\", \"label\": \"a quick brown fox\", "
                "\"metadata\": {\"rm_type\": \"f1\"}}\n"
                "[1, 2]\n"
                "{\"response\": \"\\\\boxed{\\\\frac{1}{2}}\", \"label\": \"0.5\"}\n");
  auto out = dir.path() / "out.jsonl";
  auto r = run_vime("reward --rm-type math --input " + in.string() + " --output " + out.string());
  INFO(r.output);
  CHECK(r.exit_code == 1);  // some lines could not be graded
  CHECK_THAT(r.output, Catch::Contains("line 3 skipped") && Catch::Contains("invalid JSON"));
  CHECK_THAT(r.output, Catch::Contains("line 5 skipped") && Catch::Contains("\"response\""));
  CHECK_THAT(r.output, Catch::Contains("line 7 skipped") && Catch::Contains("object"));
  CHECK_THAT(r.output, Catch::Contains("4 graded, 3 skipped"));
  auto rows = read_jsonl(out);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].at("reward") == Json(1));
  CHECK(rows[0].at("prompt").as_string() == "q1");
  CHECK(rows[1].at("reward") == Json(0));
  CHECK(rows[2].at("reward").as_double() == Approx(0.8));  // metadata.rm_type f1
  CHECK(rows[3].at("reward") == Json(1));
  CHECK(rows[3].at("label").as_string() == "0.5");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }
}

TEST_CASE("vime reward with dapo and --reward-key", "[reward_cli]") {
  TempDir dir;
  auto in = dir.write("in.jsonl",
                      "\xEF\xBB\xBF{\"response\": \"Answer: 42\", \"label\": \"42\"}\r\n"
                      "{\"response\": \"Answer: 7\", \"label\": \"42\"}\r\n");  // BOM, CRLF
  auto out = dir.path() / "out.jsonl";
  auto r = run_vime("reward --rm-type dapo --reward-key score --input " + in.string() +
                    " --output " + out.string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  auto rows = read_jsonl(out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("reward").at("pred").as_string() == "42");
  CHECK(rows[0].at("reward_value").as_double() == 1.0);
  CHECK(rows[1].at("reward_value").as_double() == -1.0);
  CHECK_THAT(r.output, Catch::Contains("mean reward 0.0000"));

  // A key the reward does not have: every line is reported.
  auto bad = run_vime("reward --rm-type dapo --reward-key nope --input " + in.string() +
                      " --output " + out.string());
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.output, Catch::Contains("--reward-key nope"));
}

TEST_CASE("vime reward with a custom plugin, single and --group-rm", "[reward_cli]") {
  TempDir dir;
  auto in = dir.write("in.jsonl",
                      "{\"response\": \"is 7\", \"label\": \"7\", \"group_index\": 0}\n"
                      "{\"response\": \"FAIL\", \"label\": \"7\", \"group_index\": 0}\n"
                      "{\"response\": \"7 is\", \"label\": \"7\", \"group_index\": 1}\n");
  auto out = dir.path() / "out.jsonl";
  auto single = run_vime("reward --custom-rm-path " + vime::test::plugin_path("reward_plugins") +
                         ":fail_on_marker --input " + in.string() + " --output " + out.string());
  INFO(single.output);
  CHECK(single.exit_code == 1);
  CHECK_THAT(single.output, Catch::Contains("line 2 skipped: reward model failed: marker found"));
  CHECK(read_jsonl(out).size() == 2);

  auto group = run_vime("reward --custom-rm-path " + vime::test::plugin_path("reward_plugins") +
                        ":length_rank --group-rm --reward-key rank --input " + in.string() +
                        " --output " + out.string());
  INFO(group.output);
  CHECK(group.exit_code == 0);
  auto rows = read_jsonl(out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].at("reward").at("group_size").as_int() == 2);  // lines 1-2: group 0
  CHECK(rows[2].at("reward").at("group_size").as_int() == 1);
}

TEST_CASE("vime reward usage errors exit 2", "[reward_cli]") {
  TempDir dir;
  auto in = dir.write("in.jsonl", "{\"response\": \"x\", \"label\": \"x\"}\n");
  auto out = (dir.path() / "out.jsonl").string();
  auto no_input = run_vime("reward --rm-type math --output " + out);
  CHECK(no_input.exit_code == 2);
  CHECK_THAT(no_input.output, Catch::Contains("--input"));
  auto missing = run_vime("reward --rm-type math --input /nonexistent/in.jsonl --output " + out);
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.output, Catch::Contains("/nonexistent/in.jsonl"));
  auto unknown = run_vime("reward --rm-type maths --input " + in.string() + " --output " + out);
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.output, Catch::Contains("--rm-type maths") && Catch::Contains("math"));
  auto no_url = run_vime("reward --rm-type remote_rm --input " + in.string() + " --output " + out);
  CHECK(no_url.exit_code == 2);
  CHECK_THAT(no_url.output, Catch::Contains("--rm-url"));
  auto bad_dir =
      run_vime("reward --rm-type f1 --input " + in.string() + " --output /nonexistent/o.jsonl");
  CHECK(bad_dir.exit_code == 2);
  auto help = run_vime("reward --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Catch::Contains("--rm-type TYPE"));
}
