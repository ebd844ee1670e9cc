// rm_hub/math/latex_to_text against pylatexenc 2.10 itself: tests/data/reward_goldens/
// latex_to_text.jsonl holds what LatexNodes2Text().latex_to_text printed for each snippet
// (scripts/goldens/make_reward_goldens.py).
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "math/latex_to_text.hpp"
#include "vime/json.hpp"

TEST_CASE("LaTeX rendering agrees with pylatexenc", "[rm_math]") {
  std::ifstream in(std::string(VIME_SOURCE_DIR) + "/tests/data/reward_goldens/latex_to_text.jsonl");
  REQUIRE(in.good());
  std::string line;
  int total = 0, agree = 0;
  std::string mismatches;
  while (std::getline(in, line)) {
    vime::Json row = vime::Json::parse(line, "latex_to_text.jsonl");
    const std::string& latex = row.at("latex").as_string();
    const std::string& expected = row.at("text").as_string();
    std::string got = vime::rm::latex_to_text(latex);
    ++total;
    if (got == expected) {
      ++agree;
    } else {
      mismatches += vime::Json(latex).dump() + ": pylatexenc " + vime::Json(expected).dump() +
                    ", vime " + vime::Json(got).dump() + "\n";
    }
  }
  INFO(agree << "/" << total << " snippets agree\n" << mismatches);
  CHECK(total >= 250);
  CHECK(agree == total);
}
