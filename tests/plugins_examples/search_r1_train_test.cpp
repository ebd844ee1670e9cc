// Search-R1 end to end, as a user runs it: `vime train --rollout-plugin
// build/plugins/search_r1.so` on the synthetic search task (make_search_task, a tag-biased tiny
// Qwen3 that searches without training) against a real retrieval server; then every sample's
// masks, retrieval calls and reward are checked. Also `vime retrieve serve` as a process.
#include <ATen/ATen.h>  // before Catch: glog's CHECK must lose to Catch's

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "support/ports.hpp"
#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/atomic_file.hpp"
#include "vime/hooks.hpp"
#include "vime/http/fetch.hpp"
#include "vime/http/net.hpp"
#include "vime/plugin/plugin_loader.hpp"
#include "vime/regex.hpp"
#include "vime/retrieval/open_index.hpp"
#include "vime/retrieval/retrieval_server.hpp"
#include "vime/tokenizer/hf_tokenizer.hpp"

namespace fs = std::filesystem;
using vime::test::run_command;

namespace {

vime::Args parse_flags(const std::vector<std::string>& flags) {
  return vime::core::parse_args(flags);
}

const std::string kInvalid =
    "\nMy previous action is invalid. If I want to search, I should put the query between "
    "<search> and </search>. If I want to give the final answer, I should put the answer between "
    "<answer> and </answer>. Let me try again.\n";

const fs::path& search_task() {
  static vime::test::TempDir dir;
  static bool made = false;
  if (!made) {
    auto r = run_command(std::string(VIME_MAKE_SEARCH_TASK_BIN) + " --out " + dir.path().string() +
                         " --people 40 --num-train 16 --num-test 4 --model --tag-biased");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    made = true;
  }
  return dir.path();
}

}  // namespace

TEST_CASE("vime train --rollout-plugin build/plugins/search_r1.so", "[search_r1_train]") {
  const fs::path task = search_task();
  auto index = vime::retrieval::open_index({task / "corpus.jsonl", "", {}});
  vime::retrieval::RetrievalServerOptions options;
  options.port = 0;
  vime::retrieval::RetrievalServer server(index, options);
  server.start();
  vime::test::TempDir run;
  const auto config = run.write(
      "search.yaml", "search_url: " + server.url() + "/retrieve\nmax_turns: 3\ntopk: 2\n");
  const fs::path build = VIME_BUILD_DIR;
  const std::string t = task.string();
  auto r = run_command(
      "cd " + build.parent_path().string() + " && " + VIME_BIN + " train --rollout-plugin " +
      build.filename().string() + "/plugins/search_r1.so --hf-checkpoint " + t +
      "/model --prompt-data " + t +
      "/data/train.jsonl --input-key prompt --label-key reward_model --apply-chat-template"
      " --advantage-estimator grpo --rollout-batch-size 2 --n-samples-per-prompt 4"
      " --global-batch-size 8 --rollout-max-response-len 16 --num-rollout 1 --lr 1e-4"
      " --rollout-seed 2 --custom-config-path " +
      config.string() + " --save-debug-rollout-data " +
      (run.path() / "r{rollout_id}.json").string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains("train/step 0"));

  const auto doc = vime::Json::parse(vime::read_text_file(run.path() / "r0.json"));
  const auto& samples = doc.at("samples").as_array();
  REQUIRE(samples.size() == 8);
  auto tok = vime::tokenizer::HfTokenizer::from_directory(task / "model");
  auto reward = vime::plugin::load_plugin<vime::PluginKind::kReward>(
      (build / "plugins/search_r1.so").string(), "--custom-rm-path", "reward");
  const auto args = parse_flags({"--custom-config-path", config.string()});
  static const vime::Regex action("(?s)<(search|answer)>(.*?)</\\1>");

  int64_t searches = 0, info_blocks = 0, invalid = 0, answered = 0;
  for (const auto& json : samples) {
    const vime::Sample s = vime::Sample::from_json(json);
    INFO(s.response);
    REQUIRE(s.loss_mask);
    REQUIRE(static_cast<int64_t>(s.loss_mask->size()) == s.response_length);
    REQUIRE(static_cast<int64_t>(s.rollout_log_probs->size()) == s.response_length);
    const size_t prompt_len = s.tokens.size() - static_cast<size_t>(s.response_length);
    // Walk the response in runs of equal mask: model turns (1) and observations (0).
    std::string model_turn, rebuilt;
    for (size_t i = 0; i < s.loss_mask->size();) {
      size_t j = i;
      while (j < s.loss_mask->size() && (*s.loss_mask)[j] == (*s.loss_mask)[i]) ++j;
      std::vector<int32_t> ids(s.tokens.begin() + prompt_len + i,
                               s.tokens.begin() + prompt_len + j);
      const std::string text = tok->decode(ids);
      rebuilt += text;
      if ((*s.loss_mask)[i] == 1) {
        model_turn += text;
      } else {
        for (size_t k = i; k < j; ++k) CHECK((*s.rollout_log_probs)[k] == 0.0f);
        // An observation answers the model's turn before it: a search gets the passages of
        // that query from the server, anything else the retry text.
        const auto m = action.search(model_turn);
        if (m && (*m)[1] == "search") {
          std::string passages;
          int n = 1;
          const std::string query = (*m)[2].value_or("");
          size_t a = query.find_first_not_of(" \t\n"), b = query.find_last_not_of(" \t\n");
          const std::string stripped = a == std::string::npos ? "" : query.substr(a, b - a + 1);
          for (const auto& hit : index.search(stripped, 2)) {
            const std::string& c = index.doc(hit.doc).contents;
            const size_t nl = c.find('\n');
            passages += "Doc " + std::to_string(n++) + "(Title: " + c.substr(0, nl) + ") " +
                        (nl == std::string::npos ? "" : c.substr(nl + 1)) + "\n";
          }
          while (!passages.empty() && passages.back() == '\n') passages.pop_back();
          CHECK(text == "\n\n<information>" + passages + "</information>\n\n");
          ++info_blocks;
        } else {
          CHECK(text == kInvalid);
          ++invalid;
        }
        model_turn.clear();
      }
      i = j;
    }
    CHECK(rebuilt == s.response);
    searches += s.metadata.at("search_r1").at("search_calls").as_int();
    if (s.response.find("</answer>") != std::string::npos) ++answered;
    // The reward in the rollout is the plugin's compute_score_em of prompt + response.
    CHECK(s.reward == reward(args, s));
  }
  // The run made real retrieval calls, one per information block, all through the server.
  CHECK(searches > 0);
  CHECK(searches == info_blocks);
  CHECK(server.queries_served() == searches);
  CHECK(invalid > 0);
  INFO("searches " << searches << ", invalid " << invalid << ", answered " << answered);
  CHECK(answered > 0);
}

TEST_CASE("vime retrieve serve builds, saves and reloads its index", "[search_r1_train]") {
  const fs::path task = search_task();
  vime::test::TempDir run;
  auto serve = [&](const std::string& log) {
    auto r =
        run_command(std::string(VIME_BIN) + " retrieve serve --corpus " +
                    (task / "corpus.jsonl").string() + " --index " + (run.path() / "idx").string() +
                    " --port 0 > " + (run.path() / log).string() + " 2>&1 & echo $!");
    REQUIRE(r.exit_code == 0);
    const std::string pid = r.output.substr(0, r.output.find('\n'));
    const int port = vime::test::wait_reported_port(run.path() / log, 120);
    INFO(vime::read_text_file(run.path() / log));
    REQUIRE(port > 0);
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    for (int i = 0; i < 100; ++i) {
      if (vime::http::fetch(vime::http::Request::get(url + "/health", 1)).ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    auto reply = vime::http::fetch(vime::http::Request::post_json(
        url + "/retrieve",
        vime::Json::parse(R"({"queries": ["born"], "topk": 3, "return_scores": false})"), 10));
    run_command("kill -TERM " + pid + "; while kill -0 " + pid +
                " 2>/dev/null; do sleep 0.05; done");
    return reply;
  };
  auto first = serve("first.log");
  REQUIRE(first.status == 200);
  CHECK(vime::Json::parse(first.body).at("result").at(0).size() == 3);
  CHECK_THAT(vime::read_text_file(run.path() / "first.log"),
             Catch::Contains("built from") && Catch::Contains("stopped after 1 queries"));
  auto second = serve("second.log");
  CHECK(second.body == first.body);
  CHECK_THAT(vime::read_text_file(run.path() / "second.log"), Catch::Contains("index loaded"));
  // Bad input: exit 2 with one line naming the flag.
  auto bad = vime::test::run_vime("retrieve serve --corpus /nonexistent.jsonl --port 0");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.output, Catch::Contains("--corpus /nonexistent.jsonl"));
  auto none = vime::test::run_vime("retrieve serve");
  CHECK(none.exit_code == 2);
}

TEST_CASE("vime eval --dataset math reads MATH-500's JSONL from --dataset-path or $VIME_DATA",
          "[search_r1_train]") {
  const fs::path task = search_task();
  const std::string fixture = std::string(VIME_SOURCE_DIR) + "/tests/data/eval";
  const std::string common = "eval --hf-checkpoint " + (task / "model").string() +
                             " --dataset math --eval-max-response-len 4 --eval-temperature 0";
  auto by_path = vime::test::run_vime(common + " --dataset-path " + fixture);
  INFO(by_path.output);
  REQUIRE(by_path.exit_code == 0);
  CHECK_THAT(by_path.output, Catch::Contains("eval/math"));
  auto by_env = run_command("VIME_DATA=" + fixture + " " + VIME_BIN + " " + common);
  INFO(by_env.output);
  REQUIRE(by_env.exit_code == 0);
  CHECK_THAT(by_env.output, Catch::Contains("eval/math"));
  auto nowhere = run_command("env -u VIME_DATA " + std::string(VIME_BIN) + " " + common);
  CHECK(nowhere.exit_code == 2);
  CHECK_THAT(nowhere.output, Catch::Contains("--dataset-path") && Catch::Contains("VIME_DATA"));
}
