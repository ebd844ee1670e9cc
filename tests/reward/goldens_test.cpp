// Every committed golden (tests/data/reward_goldens/*.jsonl, made by running slime's own Python
// graders: scripts/goldens/make_reward_goldens.py) graded through the real dispatch and plugins.
// The target is 100% agreement; a mismatch prints the pair.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "reward/reward_test_support.hpp"

namespace {

struct Agreement {
  int total = 0;
  int agree = 0;
};

bool same_reward(const vime::Json& slime, const vime::Json& vime_reward) {
  if (slime.is_object()) return slime == vime_reward;
  return vime_reward.is_number() && std::abs(slime.as_double() - vime_reward.as_double()) < 1e-12;
}

Agreement check_golden(const std::string& file, const std::string& rm_type) {
  std::ifstream in(std::string(VIME_SOURCE_DIR) + "/tests/data/reward_goldens/" + file);
  REQUIRE(in.good());
  vime::Args args = vime::test::reward_args(rm_type);
  vime::reward::RewardDispatcher dispatcher(args);
  Agreement a;
  std::string line;
  int shown = 0;
  while (std::getline(in, line)) {
    vime::Json row = vime::Json::parse(line, file);
    vime::Sample s;
    s.response = row.at("response").as_string();
    s.label = row.at("label");
    if (const vime::Json* m = row.find("metadata")) s.metadata = *m;
    vime::Json got = dispatcher.reward(s);
    ++a.total;
    if (same_reward(row.at("reward"), got)) {
      ++a.agree;
    } else if (shown++ < 10 && file != "math_fuzz.jsonl") {
      UNSCOPED_INFO(file << ": response " << vime::Json(s.response).dump() << " label "
                         << s.label.dump() << ": slime " << row.at("reward").dump() << ", vime "
                         << got.dump());
    }
  }
  return a;
}

}  // namespace

TEST_CASE("rm goldens: vime agrees with slime's graders", "[rm_goldens]") {
  struct File {
    const char* name;
    const char* rm_type;
    int min_pairs;
    double min_agreement;  // 1.0 everywhere but the decimal-heavy fuzz (see the generator)
  };
  const File files[] = {{"math.jsonl", "math", 500, 1.0},
                        {"math_random.jsonl", "math", 1500, 1.0},
                        {"math_forms.jsonl", "math", 1000, 1.0},
                        {"math_fuzz.jsonl", "math", 6000, 0.998},
                        {"deepscaler.jsonl", "deepscaler", 500, 1.0},
                        {"dapo.jsonl", "dapo", 500, 1.0},
                        {"f1.jsonl", "f1", 500, 1.0},
                        // slime's gpqa.py at 643f912 matches answer text by whole words: vime's
                        // gpqa_whole_word (rm_hub/README.md compares it with --rm-type gpqa).
                        {"gpqa.jsonl", "gpqa_whole_word", 500, 1.0},
                        {"gpqa_fuzz.jsonl", "gpqa_whole_word", 1500, 1.0},
                        {"f1_fuzz.jsonl", "f1", 1500, 1.0},
                        {"dapo_fuzz.jsonl", "dapo", 1500, 1.0},
                        {"deepscaler_fuzz.jsonl", "deepscaler", 1500, 1.0}};
  for (const auto& f : files) {
    Agreement a = check_golden(f.name, f.rm_type);
    INFO(f.name << ": " << a.agree << "/" << a.total << " agree");
    CHECK(a.total >= f.min_pairs);
    CHECK(a.agree >= f.min_agreement * a.total);
  }
}
