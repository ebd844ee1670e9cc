// plugins/multi_turn_calculator loaded as a real .so through vime's plugin loader and driven by a
// scripted engine: tool calls get <result> tokens with loss mask 0 and log-prob 0, the budget and
// the turn limit end generation, a bad expression becomes an error result, an abort ends the
// sample.
#include <catch2/catch.hpp>
#include <deque>

#include "arith_tokenizer.hpp"
#include "support/reply_queue_engine.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/hooks.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace {

// Replies in order, cut to max_new_tokens, each tagged weight version "3".
struct ScriptedEngine : vime::test::ReplyQueueEngine {
  ScriptedEngine(const vime::Tokenizer& tok, std::vector<Reply> replies)
      : ReplyQueueEngine(tok, std::move(replies)) {
    cut_to_max_new_tokens = true;
    weight_version = "3";
  }
};

struct Fixture {
  std::unique_ptr<vime::tokenizer::HfTokenizer> tok;
  vime::plugin::PluginFunction<vime::PluginKind::kGenerate> generate;

  Fixture() {
    auto files = vime::quickstart::make_arith_tokenizer();
    tok =
        vime::tokenizer::HfTokenizer::from_json(files.tokenizer_json, files.tokenizer_config_json);
    generate = vime::plugin::load_plugin<vime::PluginKind::kGenerate>(
        std::string(VIME_EXAMPLE_PLUGIN_DIR) + "/libmulti_turn_calculator.so",
        "--custom-generate-function-path", "generate");
  }

  vime::Sample run(ScriptedEngine& engine, const vime::Args& args, int64_t max_new_tokens = 64) {
    vime::GenerateContext ctx{args, engine, *tok, false, std::nullopt};
    vime::Sample s;
    s.prompt = "12*7+1=";
    s.session_id = "s1";
    vime::SamplingParams params;
    params.max_new_tokens = max_new_tokens;
    params.stop_token_ids = {*tok->eos_token_id()};
    return generate(ctx, s, params);
  }
  std::vector<int32_t> ids(const std::string& text) const { return tok->encode(text); }
};

vime::Args args_of(std::vector<std::string> flags, int64_t max_turns = 0) {
  auto args = vime::core::parse_args(flags);
  if (max_turns > 0) {
    args.set("calculator_max_turns", vime::Json(max_turns), vime::ArgSource::kCustomConfig);
  }
  return args;
}

std::vector<float> engine_log_probs(size_t n) {
  std::vector<float> lp;
  for (size_t i = 0; i < n; ++i) lp.push_back(-0.1f * (i + 1));
  return lp;
}

}  // namespace

TEST_CASE("a calculator call, its result, then the answer", "[plugins_examples]") {
  Fixture f;
  const std::string call = "<calc>12*7</calc>", answer = "+1 is \\boxed{85}<|endoftext|>";
  ScriptedEngine engine(*f.tok, {{call}, {answer}});
  auto s = f.run(engine, args_of({}));

  const auto prompt = f.ids("12*7+1="), call_ids = f.ids(call),
             result_ids = f.ids("<result>84</result>"), answer_ids = f.ids(answer);
  std::vector<int32_t> want = prompt;
  for (const auto* part : {&call_ids, &result_ids, &answer_ids})
    want.insert(want.end(), part->begin(), part->end());
  CHECK(s.tokens == want);
  CHECK(s.response == call + "<result>84</result>" + answer);
  CHECK(s.response_length ==
        static_cast<int64_t>(call_ids.size() + result_ids.size() + answer_ids.size()));
  std::vector<int32_t> mask(call_ids.size(), 1);
  mask.insert(mask.end(), result_ids.size(), 0);
  mask.insert(mask.end(), answer_ids.size(), 1);
  CHECK(*s.loss_mask == mask);
  auto lp = engine_log_probs(call_ids.size());
  lp.insert(lp.end(), result_ids.size(), 0.0f);
  auto lp2 = engine_log_probs(answer_ids.size());
  lp.insert(lp.end(), lp2.begin(), lp2.end());
  CHECK(*s.rollout_log_probs == lp);
  CHECK(s.status == vime::SampleStatus::kCompleted);
  CHECK(s.weight_versions == std::vector<std::string>{"3", "3"});

  // The second request continues from everything so far, with the budget that is left.
  REQUIRE(engine.requests.size() == 2);
  CHECK(engine.requests[0].input_ids == prompt);
  CHECK(engine.requests[0].sampling_params.max_new_tokens == 64);
  CHECK(engine.requests[1].sampling_params.max_new_tokens ==
        64 - static_cast<int64_t>(call_ids.size() + result_ids.size()));
  CHECK(std::vector<int32_t>(s.tokens.begin(), s.tokens.end() - answer_ids.size()) ==
        engine.requests[1].input_ids);
  CHECK(engine.requests[1].sampling_params.stop.back() == "</calc>");
  CHECK(engine.requests[1].session_id == "s1");
}

TEST_CASE("a bad expression gives an error result the model sees", "[plugins_examples]") {
  Fixture f;
  ScriptedEngine engine(*f.tok, {{"<calc>12*(7</calc>"}, {"<calc>2x</calc>"}, {"\\boxed{0}"}});
  auto s = f.run(engine, args_of({}), 200);  // error texts are long in a byte-level vocabulary
  CHECK(s.response ==
        "<calc>12*(7</calc><result>error: missing ')' at position 5</result>"
        "<calc>2x</calc><result>error: unexpected 'x' at position 1</result>\\boxed{0}");
  CHECK(s.status == vime::SampleStatus::kCompleted);
  CHECK(std::count(s.loss_mask->begin(), s.loss_mask->end(), 0) ==
        static_cast<long>(f.ids("<result>error: missing ')' at position 5</result>").size() +
                          f.ids("<result>error: unexpected 'x' at position 1</result>").size()));
}

TEST_CASE("the response budget runs out: TRUNCATED", "[plugins_examples]") {
  Fixture f;
  const std::string call = "<calc>12*7</calc>";  // 6 tokens, then a 4-token result
  SECTION("during the model's answer (--rollout-max-response-len 14)") {
    ScriptedEngine engine(*f.tok, {{call}, {"so the answer is \\boxed{85}"}});
    auto s = f.run(engine, args_of({"--rollout-max-response-len", "14"}), 1000);
    CHECK(s.response_length == 14);
    CHECK(s.response == call + "<result>84</result>" + "so t");
    CHECK(s.status == vime::SampleStatus::kTruncated);
    CHECK(engine.requests[1].sampling_params.max_new_tokens == 4);
    CHECK(s.loss_mask->size() == 14);
  }
  SECTION("inside the tool result (max_new_tokens 9)") {
    ScriptedEngine engine(*f.tok, {{call}});
    auto s = f.run(engine, args_of({}), 9);
    CHECK(s.response_length == 9);
    CHECK(s.response == call + "<result>84");
    CHECK(*s.loss_mask == std::vector<int32_t>{1, 1, 1, 1, 1, 1, 0, 0, 0});
    CHECK(s.status == vime::SampleStatus::kTruncated);
    CHECK(engine.requests.size() == 1);
  }
}

TEST_CASE("the turn limit ends generation; an abort ends the sample", "[plugins_examples]") {
  Fixture f;
  SECTION("calculator_max_turns 2") {
    ScriptedEngine engine(*f.tok, {{"<calc>1+1</calc>"}, {"<calc>2+2</calc>"}, {"unused"}});
    auto s = f.run(engine, args_of({}, 2));
    CHECK(engine.requests.size() == 2);
    CHECK(s.response == "<calc>1+1</calc><result>2</result><calc>2+2</calc>");
    CHECK(s.status == vime::SampleStatus::kCompleted);
  }
  SECTION("the engine aborts the second turn") {
    ScriptedEngine engine(*f.tok, {{"<calc>(1+2)*-3</calc>"}, {"\\box", "abort"}});
    auto s = f.run(engine, args_of({}));
    CHECK(s.response == "<calc>(1+2)*-3</calc><result>-9</result>\\box");
    CHECK(s.status == vime::SampleStatus::kAborted);
    CHECK(s.loss_mask->back() == 1);
  }
  SECTION("an EOS right after a closed call is an answer, not a call") {
    ScriptedEngine engine(*f.tok, {{"<calc>3*3</calc><|endoftext|>"}});
    auto s = f.run(engine, args_of({}));
    CHECK(engine.requests.size() == 1);
    CHECK(s.status == vime::SampleStatus::kCompleted);
  }
}
