// ReTool end to end: `vime train --rollout-plugin build/plugins/retool.so` with a tiny Qwen3 that
// samples from one fixed distribution over a few whole-word tokens (three code blocks, the answer,
// letters), so without training its turns run code, hit the safety check, raise, and answer; code
// runs in the real sandbox. Every sample's masks, interpreter blocks and reward are checked.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's
#include <ATen/core/grad_mode.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>

#include "arith_task.hpp"
#include "arith_tokenizer.hpp"
#include "retool_text.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/hooks.hpp"
#include "vime/model/model.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPrintCode = "<code>print(6*7)</code>";
constexpr std::string_view kUnsafeCode = "<code>import os</code>";
constexpr std::string_view kRaisingCode = "<code>1/0</code>";
constexpr std::string_view kAnswer = "Answer: \\boxed{42}";
constexpr std::string_view kWords[] = {kPrintCode, kUnsafeCode, kRaisingCode, kAnswer};

// As make_search_task --tag-biased: hidden dimension 0 carries a constant through the layers and
// the final norm keeps only it, so the logits are lm_head[:, 0] (scaled) at every position.
void bias_towards_words(vime::Model& model, const vime::Tokenizer& tok) {
  at::NoGradGuard no_grad;
  at::Tensor lm_head;
  for (auto& [name, p] : model.named_parameters()) {
    if (name == "model.embed_tokens.weight") p.select(1, 0).fill_(1.0);
    if (name.ends_with("self_attn.o_proj.weight") || name.ends_with("mlp.down_proj.weight")) {
      p.select(0, 0).zero_();
    }
    if (name == "model.norm.weight") {
      p.zero_();
      p[0] = 1.0;
    }
    if (name == "lm_head.weight") lm_head = p;
  }
  REQUIRE(lm_head.defined());
  const double scale = std::sqrt(static_cast<double>(lm_head.size(1)));
  lm_head.select(1, 0).fill_(-8.0 / scale);
  auto set = [&](std::string_view text, double logit) {
    const auto ids = tok.encode(text);
    REQUIRE(ids.size() == 1);
    lm_head[ids[0]][0] = logit / scale;
  };
  // Per token: EOS ~15% (most turns end before 16 tokens, so the loop goes on), each code block
  // ~9%, the answer ~3%, letters the rest.
  for (char c = 'a'; c <= 'z'; ++c) set(std::string(1, c), 0.0);
  for (auto code : {kPrintCode, kUnsafeCode, kRaisingCode}) set(code, 1.5);
  set(kAnswer, 0.5);
  lm_head[*tok.eos_token_id()][0] = 2.0 / scale;
}

const fs::path& retool_task() {
  static vime::test::TempDir dir;
  static bool made = false;
  if (!made) {
    // The words as added tokens: BPE merges could not build them (they hold other words' pieces).
    // So is slime's system text with the tool list (~860 byte tokens otherwise), for speed.
    auto files = vime::quickstart::make_arith_tokenizer();
    auto tj = vime::Json::parse(files.tokenizer_json);
    const std::string header = retool::format_prompt("");
    const size_t from = std::string_view("<|im_start|>system").size();
    const std::string system = header.substr(from, header.find("<|im_end|>") - from);
    std::vector<std::string> words(std::begin(kWords), std::end(kWords));
    words.push_back(system);
    for (const std::string& word : words) {
      tj["added_tokens"].push_back(vime::Json::Object{{"id", files.vocab_size++},
                                                      {"content", std::string(word)},
                                                      {"single_word", false},
                                                      {"lstrip", false},
                                                      {"rstrip", false},
                                                      {"normalized", false},
                                                      {"special", false}});
    }
    files.tokenizer_json = tj.dump(2) + "\n";
    auto tok =
        vime::tokenizer::HfTokenizer::from_json(files.tokenizer_json, files.tokenizer_config_json);
    vime::quickstart::ArithTaskOptions shape;
    shape.model.hidden_size = 64;
    shape.model.intermediate_size = 128;
    shape.model.num_layers = 2;
    shape.model.head_dim = 16;
    shape.model.max_position_embeddings = 4096;
    shape.model.tie_word_embeddings = false;
    auto config = vime::quickstart::arith_model_config(shape, files.vocab_size);
    vime::quickstart::write_tiny_model(dir.path() / "model", config, files, 1,
                                       [&](vime::Model& m) { bias_towards_words(m, *tok); });
    std::string rows;
    for (int i = 0; i < 4; ++i)
      rows += R"({"prompt": "What is 6*7?", "label": "42"})"
              "\n";
    dir.write("train.jsonl", rows);
    made = true;
  }
  return dir.path();
}

std::string interpreter(const std::string& text) {
  return "\n\n<interpreter>\n" + text + "\n</interpreter>\n\n";
}

}  // namespace

TEST_CASE("vime train --rollout-plugin build/plugins/retool.so", "[retool_train]") {
  const fs::path task = retool_task();
  vime::test::TempDir run;
  const auto config = run.write("retool.yaml", "max_turns: 4\npython_timeout: 20\n");
  const fs::path build = VIME_BUILD_DIR;
  // A seed whose 8 samples take every path checked below (print, refusal or error, answer) with
  // this model (seeds 1, 2 and 4 do; 3 and 5 miss one since samples are seeded one by one).
  const std::string seed = "1";
  auto r = vime::test::run_command(
      "cd " + build.parent_path().string() + " && " + VIME_BIN + " train --rollout-plugin " +
      build.filename().string() + "/plugins/retool.so --hf-checkpoint " +
      (task / "model").string() + " --prompt-data " + (task / "train.jsonl").string() +
      " --input-key prompt --label-key label --reward-key score"
      " --advantage-estimator grpo --rollout-batch-size 2 --n-samples-per-prompt 4"
      " --global-batch-size 8 --rollout-max-response-len 16 --num-rollout 1 --lr 1e-4"
      " --rollout-seed " +
      seed + " --custom-config-path " + config.string() + " --save-debug-rollout-data " +
      (run.path() / "r{rollout_id}.json").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("train/step 0"));
  CHECK_THAT(r.output,
             Catch::Contains("retool: code sandbox") && Catch::Contains("isolation full"));

  const auto doc = vime::Json::parse(vime::read_text_file(run.path() / "r0.json"));
  const auto& samples = doc.at("samples").as_array();
  REQUIRE(samples.size() == 8);
  auto tok = vime::tokenizer::HfTokenizer::from_directory(task / "model");
  auto reward = vime::plugin::load_plugin<vime::PluginKind::kReward>(
      (build / "plugins/retool.so").string(), "--custom-rm-path", "reward");
  const std::vector<std::string> flags = {"--custom-config-path", config.string()};
  const auto args = vime::core::parse_args(flags);

  int64_t printed = 0, refused = 0, raised = 0, invalid = 0, answered = 0;
  for (const auto& json : samples) {
    const vime::Sample s = vime::Sample::from_json(json);
    INFO(s.response);
    REQUIRE(s.loss_mask);
    REQUIRE(static_cast<int64_t>(s.loss_mask->size()) == s.response_length);
    REQUIRE(static_cast<int64_t>(s.rollout_log_probs->size()) == s.response_length);
    const size_t prompt_len = s.tokens.size() - static_cast<size_t>(s.response_length);
    std::string model_turn, rebuilt;
    int64_t blocks = 0, turns = 0;
    for (size_t i = 0; i < s.loss_mask->size();) {
      size_t j = i;
      while (j < s.loss_mask->size() && (*s.loss_mask)[j] == (*s.loss_mask)[i]) ++j;
      const std::string text = tok->decode(
          std::vector<int32_t>(s.tokens.begin() + static_cast<int64_t>(prompt_len + i),
                               s.tokens.begin() + static_cast<int64_t>(prompt_len + j)));
      rebuilt += text;
      if ((*s.loss_mask)[i] == 1) {
        model_turn += text;
        ++turns;
      } else {
        for (size_t k = i; k < j; ++k) CHECK((*s.rollout_log_probs)[k] == 0.0f);
        // The observation answers the turn before it: its first code block, run in the sandbox.
        CHECK(model_turn.find(kAnswer) == std::string::npos);  // an answer ends the sample
        size_t first = std::string::npos;
        std::string_view block;
        for (auto word : {kPrintCode, kUnsafeCode, kRaisingCode}) {
          const size_t at = model_turn.find(word);
          if (at < first) first = at, block = word;
        }
        if (block == kPrintCode) {
          CHECK(text == interpreter("Output:\n42"));
          ++printed;
        } else if (block == kUnsafeCode) {
          CHECK(text == interpreter("Error: Code contains dangerous pattern: import\\s+os"));
          ++refused;
        } else if (block == kRaisingCode) {
          CHECK_THAT(text, Catch::StartsWith("\n\n<interpreter>\nError: division by zero\n"
                                             "Traceback:\nTraceback (most recent call last):\n"
                                             "  File \"/tmp/code.py\"") &&
                               Catch::EndsWith("ZeroDivisionError: division by zero\n"
                                               "</interpreter>\n\n"));
          ++raised;
        } else {
          CHECK(text ==
                "\nMy previous action is invalid. If I want to execute code, I should put the "
                "code between <code> and </code>. If I want to give the final answer, I should "
                "use the format 'Answer: \\boxed{answer}'. Let me try again.\n");
          ++invalid;
        }
        if (!block.empty()) ++blocks;
        model_turn.clear();
      }
      i = j;
    }
    CHECK(rebuilt == s.response);
    CHECK(turns <= 4);
    const auto& stats = s.metadata.at("retool");
    CHECK(stats.at("tool_call_count").as_int() == blocks);
    if (model_turn.find(kAnswer) != std::string::npos) ++answered;
    // The rollout's reward is the plugin's; a wrong answer gets slime's tool-call bonus.
    const vime::Json want = reward(args, s);
    CHECK(s.reward == want);
    const double score = want.at("score").as_double();
    if (want.at("acc").as_bool()) {
      CHECK(score == 1.0);
    } else {
      CHECK(score == std::min(-0.6, -1.0 + static_cast<double>(blocks - 2) / 2 * 0.1));
    }
  }
  INFO("printed " << printed << ", refused " << refused << ", raised " << raised << ", invalid "
                  << invalid << ", answered " << answered);
  CHECK(printed > 0);
  CHECK(refused + raised > 0);
  CHECK(answered > 0);
}
