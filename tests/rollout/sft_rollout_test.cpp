#include "vime/rollout/sft_rollout.hpp"

#include <catch2/catch.hpp>

#include "rollout/rollout_test_support.hpp"
#include "vime/rollout/rollout_manager.hpp"

using vime::Json;
using vime::Sample;

namespace {

const vime::Tokenizer& qwen3() { return vime::test::real_tokenizer("qwen3"); }

Json message(const char* role, const char* content) {
  return Json(Json::Object{{"role", Json(role)}, {"content", Json(content)}});
}

// The text of the tokens whose mask is `value`, run by run, joined with "|".
std::string masked_text(const std::vector<int32_t>& tokens, const std::vector<int32_t>& mask,
                        int32_t value) {
  std::string out;
  std::vector<int32_t> run;
  for (size_t i = 0; i <= tokens.size(); ++i) {
    if (i < tokens.size() && mask[i] == value) {
      run.push_back(tokens[i]);
    } else if (!run.empty()) {
      out += (out.empty() ? "" : "|") + qwen3().decode(run);
      run.clear();
    }
  }
  return out;
}

}  // namespace

TEST_CASE("SFT: a string prompt and label train on the label and EOS", "[sft_rollout]") {
  Sample s;
  s.prompt = "Translate: bonjour";
  s.label = "hello";
  vime::rollout::make_sft_sample(qwen3(), s);
  const auto prompt = qwen3().encode("Translate: bonjour");
  auto expected = prompt;
  for (int32_t id : qwen3().encode("hello")) expected.push_back(id);
  expected.push_back(*qwen3().eos_token_id());
  CHECK(s.tokens == expected);
  CHECK(s.response_length == static_cast<int64_t>(expected.size() - prompt.size()));
  CHECK(*s.loss_mask == std::vector<int32_t>(static_cast<size_t>(s.response_length), 1));
  CHECK(s.reward.as_double() == 0.0);
  CHECK(s.status == vime::SampleStatus::kCompleted);
}

TEST_CASE("SFT: chat messages train on assistant turns only", "[sft_rollout]") {
  const Json messages(Json::Array{message("system", "Be brief."), message("user", "Hi"),
                                  message("assistant", "Hello there"), message("user", "Bye"),
                                  message("assistant", "Goodbye")});
  auto t = vime::rollout::sft_chat_tokens(qwen3(), messages, Json());
  REQUIRE(t.tokens.size() == t.loss_mask.size());
  const std::string trained = masked_text(t.tokens, t.loss_mask, 1);
  CHECK(
      trained ==
      "<think>\n\n</think>\n\nHello there<|im_end|>\n|<think>\n\n</think>\n\nGoodbye<|im_end|>\n");
  const std::string context = masked_text(t.tokens, t.loss_mask, 0);
  CHECK(context.find("Be brief.") != std::string::npos);
  CHECK(context.find("<|im_start|>user\nBye<|im_end|>") != std::string::npos);
  CHECK(context.find("Hello") == std::string::npos);

  Sample s;
  s.prompt = messages;
  vime::rollout::make_sft_sample(qwen3(), s);
  CHECK(s.tokens == t.tokens);
  const auto first = std::find(t.loss_mask.begin(), t.loss_mask.end(), 1) - t.loss_mask.begin();
  CHECK(s.response_length == static_cast<int64_t>(t.tokens.size()) - first);
  CHECK(*s.loss_mask == std::vector<int32_t>(t.loss_mask.begin() + first, t.loss_mask.end()));
}

TEST_CASE("SFT rollout through the manager: --rollout-function-path sft", "[sft_rollout]") {
  vime::test::TempDir dir;
  std::string rows;
  for (const char* answer : {"Four", "Five", "Six"}) {
    Json row = Json::object();
    row["messages"] = Json(Json::Array{message("user", "Count"), message("assistant", answer)});
    row["label"] = "";
    rows += row.dump() + "\n";
  }
  auto args = vime::test::rollout_args({"--prompt-data", dir.write("sft.jsonl", rows).string(),
                                        "--input-key", "messages", "--rollout-batch-size", "2",
                                        "--rollout-function-path",
                                        "slime.rollout.sft_rollout.generate_rollout", "--loss-type",
                                        "sft_loss", "--disable-compute-advantages-and-returns"});
  auto source = vime::data::RolloutDataSource::from(args);
  vime::test::ScriptedEngine engine(qwen3());
  vime::rollout::RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);
  REQUIRE(out.samples.size() == 2);
  CHECK(engine.num_requests == 0);
  CHECK(masked_text(out.samples[1].tokens,
                    std::vector<int32_t>(out.samples[1].tokens.size() -
                                             static_cast<size_t>(out.samples[1].response_length),
                                         0),
                    0)
            .find("Count") != std::string::npos);
  CHECK(qwen3().decode(std::vector<int32_t>(
            out.samples[1].tokens.end() - out.samples[1].response_length,
            out.samples[1].tokens.end())) == "<think>\n\n</think>\n\nFive<|im_end|>\n");
  CHECK(out.data.loss_masks[0] ==
        std::vector<int32_t>(static_cast<size_t>(out.data.response_lengths[0]), 1));
}
