#include "vime/eval/eval_dataset_config.hpp"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/core/arg_validation.hpp"
#include "vime/error.hpp"
#include "vime/eval/dataset_presets.hpp"
#include "vime/eval/eval_result.hpp"
#include "vime/eval/eval_samples.hpp"

using vime::Json;
using vime::eval::load_eval_dataset_configs;

namespace {

vime::Args args(std::vector<std::string> flags) { return vime::core::parse_args(flags); }
vime::eval::EvalOptions options(std::vector<std::string> flags) {
  return vime::eval::EvalOptions::from(args(std::move(flags)));
}

const vime::eval::EvalDatasetConfig& by_name(const std::vector<vime::eval::EvalDatasetConfig>& c,
                                             const std::string& name) {
  for (const auto& x : c)
    if (x.name == name) return x;
  FAIL("no dataset " << name);
  throw;
}

}  // namespace

// slime's test_eval_config: dataset entry > eval.defaults > args.
TEST_CASE("eval config resolves dataset > defaults > args", "[eval]") {
  vime::test::TempDir dir;
  auto yaml = dir.write("eval.yaml", R"(eval:
  defaults:
    max_response_len: 16384
    top_p: 0.7
    rm_type: math
  datasets:
    - name: aime
      path: /root/aime-2024/aime-2024.jsonl
      rm_type: deepscaler
      n_samples_per_eval_prompt: 16
    - name: gpqa
      path: /root/gpqa/gpqa_eval.jsonl@[0:200]
      rm_type: gpqa
      n_samples_per_eval_prompt: 2
      top_p: 0.9
      metadata_overrides: {source: gpqa_diamond}
    - name: plain
      path: /d/plain.jsonl
)");
  auto configs = load_eval_dataset_configs(options({"--eval-config",
                                                    yaml.string(),
                                                    "--eval-temperature",
                                                    "0.6",
                                                    "--rollout-temperature",
                                                    "1.0",
                                                    "--rollout-top-k",
                                                    "20",
                                                    "--eval-max-response-len",
                                                    "100",
                                                    "--input-key",
                                                    "prompt",
                                                    "--eval-label-key",
                                                    "answer",
                                                    "--label-key",
                                                    "label",
                                                    "--rollout-stop",
                                                    "</s>",
                                                    "--eval-prompt-data",
                                                    "ignored",
                                                    "/x.jsonl"}));
  REQUIRE(configs.size() == 3);  // --eval-config wins over --eval-prompt-data
  const auto& aime = by_name(configs, "aime");
  CHECK(aime.rm_type == "deepscaler");          // dataset entry
  CHECK(aime.n_samples_per_eval_prompt == 16);  // dataset entry
  CHECK(*aime.max_response_len == 16384);       // defaults beat --eval-max-response-len
  CHECK(*aime.top_p == Approx(0.7));            // defaults
  CHECK(*aime.temperature == Approx(0.6));      // --eval-temperature beats --rollout-temperature
  CHECK(*aime.top_k == 20);                     // no --eval-top-k: --rollout-top-k
  CHECK(aime.input_key == "prompt");            // no --eval-input-key: --input-key
  CHECK(aime.label_key == "answer");            // --eval-label-key beats --label-key
  CHECK(aime.stop == std::vector<std::string>{"</s>"});
  const auto& gpqa = by_name(configs, "gpqa");
  CHECK(*gpqa.top_p == Approx(0.9));
  CHECK(gpqa.path == "/root/gpqa/gpqa_eval.jsonl@[0:200]");
  Json md = gpqa.inject_metadata(Json(Json::Object{{"rm_type", Json("f1")}, {"k", Json(1)}}));
  CHECK(md.at("rm_type") == Json("gpqa"));
  CHECK(md.at("source") == Json("gpqa_diamond"));
  CHECK(md.at("k") == Json(1));
  CHECK(by_name(configs, "plain").rm_type == "math");  // a default for a field without a flag
  CHECK(by_name(configs, "plain").n_samples_per_eval_prompt == 1);
}

TEST_CASE("a misspelled key in eval.defaults is an error naming it", "[eval]") {
  vime::test::TempDir dir;
  auto yaml = dir.write("eval.yaml",
                        "eval:\n  defaults: {temperture: 0.6}\n  datasets:\n"
                        "    - {name: a, path: /a.jsonl}\n");
  CHECK_THROWS_AS(load_eval_dataset_configs(options({"--eval-config", yaml.string()})),
                  vime::UsageError);
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", yaml.string()})),
                    Catch::Contains("unknown key(s) in eval.defaults: temperture") &&
                        Catch::Contains("eval.yaml") && Catch::Contains("temperature"));
  auto entry = dir.write("entry.yaml", "eval:\n  datasets:\n    - {name: a, path: /a, topp: 1}\n");
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", entry.string()})),
                    Catch::Contains("unknown key 'topp'"));
  auto noname = dir.write("noname.yaml", "eval:\n  datasets:\n    - {path: /a.jsonl}\n");
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", noname.string()})),
                    Catch::Contains("`name`"));
  auto nopath = dir.write("nopath.yaml", "eval:\n  datasets:\n    b: {rm_type: math}\n");
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", nopath.string()})),
                    Catch::Contains("dataset 'b' needs a 'path'"));
  auto badtype = dir.write("bad.yaml", "eval:\n  datasets:\n    c: {path: /c, top_k: high}\n");
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", badtype.string()})),
                    Catch::Contains("'top_k' must be an integer"));
  auto noeval = dir.write("noeval.yaml", "datasets: []\n");
  CHECK_THROWS_WITH(load_eval_dataset_configs(options({"--eval-config", noeval.string()})),
                    Catch::Contains("top-level 'eval'"));
}

TEST_CASE("datasets given as a mapping keyed by name, and --eval-prompt-data pairs", "[eval]") {
  vime::test::TempDir dir;
  auto yaml = dir.write("eval.yaml",
                        "eval:\n  datasets:\n    math500: {path: /m.jsonl, rm_type: math}\n"
                        "    gsm: {path: /g.jsonl}\n");
  auto configs = load_eval_dataset_configs(options({"--eval-config", yaml.string()}));
  REQUIRE(configs.size() == 2);
  CHECK(by_name(configs, "math500").path == "/m.jsonl");

  auto pairs = load_eval_dataset_configs(
      options({"--eval-prompt-data", "aime", "/a.jsonl", "gpqa", "/g.jsonl@[0:200]",
               "--n-samples-per-eval-prompt", "4", "--eval-top-p", "0.7"}));
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[1].name == "gpqa");
  CHECK(pairs[1].path == "/g.jsonl@[0:200]");
  CHECK(pairs[1].n_samples_per_eval_prompt == 4);
  CHECK(*pairs[1].top_p == Approx(0.7));
  auto bare = load_eval_dataset_configs(options({"--eval-prompt-data", "/only.jsonl"}));
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].name == "aime");  // slime names a bare path aime
  CHECK(load_eval_dataset_configs(options({})).empty());
}

TEST_CASE("--dataset presets set rm type, keys, template, lengths and file", "[eval]") {
  vime::test::TempDir dir;
  auto gsm = dir.write(
      "gsm8k_test.jsonl",
      R"({"question": "Tom has 3 apples and buys 4. How many?", "answer": "3 + 4 = 7\n#### 7"})"
      "\n"
      R"({"question": "2*5?", "answer": "#### 1,000 "})"
      "\n");
  dir.write("aime-2024.jsonl",
            R"({"prompt": [{"role": "user", "content": "AIME?"}], "label": "42"})"
            "\n");
  auto configs = load_eval_dataset_configs(
      options({"--dataset", "gsm8k", "aime", "--dataset-path", dir.path().string()}));
  REQUIRE(configs.size() == 2);
  const auto& g = by_name(configs, "gsm8k");
  CHECK(g.rm_type == "math");
  CHECK(g.input_key == "question");
  CHECK(g.path == gsm.string());
  const auto& a = by_name(configs, "aime");
  CHECK(a.rm_type == "deepscaler");
  CHECK(a.n_samples_per_eval_prompt == 16);
  auto fewer =
      load_eval_dataset_configs(options({"--dataset", "aime", "--dataset-path", dir.path().string(),
                                         "--n-samples-per-eval-prompt", "2"}));
  CHECK(fewer[0].n_samples_per_eval_prompt == 2);  // the flag beats the preset's 16
  // slime's eval response length, unless a flag sets one.
  CHECK(*g.max_response_len == 16384);
  CHECK(*a.max_response_len == 16384);
  for (const char* flag : {"--eval-max-response-len", "--rollout-max-response-len"}) {
    auto shorter = load_eval_dataset_configs(
        options({"--dataset", "aime", "--dataset-path", dir.path().string(), flag, "64"}));
    CHECK(*shorter[0].max_response_len == 64);
  }

  // The samples an eval rollout gets.
  auto groups = vime::eval::load_eval_samples(options({}), g);
  REQUIRE(groups.size() == 2);
  REQUIRE(groups[0].size() == 1);
  CHECK(groups[0][0].prompt ==
        Json("Tom has 3 apples and buys 4. How many?\nPlease reason step by step, and put your "
             "final answer within \\boxed{}."));
  CHECK(groups[0][0].label == Json("7"));
  CHECK(groups[1][0].label == Json("1,000"));
  CHECK(groups[1][0].metadata.at("rm_type") == Json("math"));
  auto aime_groups = vime::eval::load_eval_samples(options({}), a);
  REQUIRE(aime_groups[0].size() == 16);
  CHECK(*aime_groups[0][15].index == 15);
  CHECK(*aime_groups[0][15].group_index == 0);
  CHECK(aime_groups[0][0].prompt.is_array());

  // $VIME_DATA, unknown names, and nowhere to look.
  ::setenv("VIME_DATA", dir.path().c_str(), 1);
  CHECK(load_eval_dataset_configs(options({"--dataset", "gsm8k"}))[0].path == gsm.string());
  ::unsetenv("VIME_DATA");
  CHECK_THROWS_WITH(
      load_eval_dataset_configs(options({"--dataset", "gsm8k"})),
      Catch::Contains("--dataset-path gsm8k_test.jsonl") && Catch::Contains("$VIME_DATA"));
  CHECK_THROWS_WITH(
      load_eval_dataset_configs(options({"--dataset", "mmlu", "--dataset-path", "/x"})),
      Catch::Contains("unknown dataset; known: math, gsm8k, aime, gpqa"));
  CHECK_THROWS_WITH(
      load_eval_dataset_configs(options(
          {"--dataset", "aime", "--eval-prompt-data", "aime", "/a.jsonl", "--dataset-path", "/x"})),
      Catch::Contains("configured twice"));
}

TEST_CASE("eval results read rewards through --eval-reward-key, else --reward-key", "[eval]") {
  std::vector<vime::Sample> samples(3);
  samples[0].reward = Json(Json::Object{{"acc", Json(1)}, {"score", Json(0.5)}});
  samples[1].reward = Json(Json::Object{{"acc", Json(0)}, {"score", Json(-1.0)}});
  samples[2].reward = Json(Json::Object{{"acc", Json(true)}, {"score", Json(1.0)}});
  samples[1].status = vime::SampleStatus::kTruncated;
  auto r = vime::eval::make_eval_result(
      options({"--reward-key", "score", "--eval-reward-key", "acc"}), samples);
  CHECK(r.rewards == std::vector<double>{1, 0, 1});
  CHECK(r.truncated == std::vector<int32_t>{0, 1, 0});
  CHECK(r.samples.size() == 3);
  CHECK(vime::eval::make_eval_result(options({"--reward-key", "score"}), samples).rewards ==
        std::vector<double>{0.5, -1.0, 1.0});
  CHECK_THROWS_WITH(vime::eval::make_eval_result(options({}), samples),
                    Catch::Contains("not a number") && Catch::Contains("--eval-reward-key"));
  samples[2].reward = Json(Json::Object{{"score", Json(1.0)}});
  CHECK_THROWS_WITH(vime::eval::make_eval_result(options({"--eval-reward-key", "acc"}), samples),
                    Catch::Contains("no key 'acc'"));
}

TEST_CASE("--eval-interval is satisfied by --dataset presets", "[eval]") {
  auto a = args({"--eval-interval", "5", "--dataset", "aime", "--rollout-batch-size", "2",
                 "--num-rollout", "1"});
  CHECK_NOTHROW(vime::core::validate_args(a, {.check_paths = false}));
  auto none = args({"--eval-interval", "5", "--rollout-batch-size", "2", "--num-rollout", "1"});
  CHECK_THROWS_WITH(vime::core::validate_args(none, {.check_paths = false}),
                    Catch::Contains("--eval-config or --dataset"));
}
