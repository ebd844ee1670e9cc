#include "vime/rollout/train_data.hpp"

#include <algorithm>
#include <catch2/catch.hpp>

#include "rollout/rollout_test_support.hpp"
#include "vime/rollout/debug_rollout_data.hpp"
#include "vime/rollout/rollout_manager.hpp"

using vime::Json;
using vime::Sample;
using vime::SampleStatus;
using vime::data::RolloutDataSource;
using vime::rollout::RolloutManager;
using vime::test::math_prompts;
using vime::test::rollout_args;
using vime::test::ScriptedEngine;

namespace {

const vime::Tokenizer& qwen3() { return vime::test::real_tokenizer("qwen3"); }

}  // namespace

TEST_CASE("sample filter, all-samples hook, convert plugin and rollout-log hook",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  const std::string prompts = math_prompts(dir, {"MIXED", "MIXED"});
  auto args = rollout_args(
      {"--prompt-data", prompts, "--rollout-batch-size", "2", "--n-samples-per-prompt", "2",
       "--rm-type", "math", "--rollout-sample-filter-path", vime::test::manager_plugin("drop_odd"),
       "--rollout-all-samples-process-path", vime::test::manager_plugin("count_all")});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  {
    RolloutManager manager(args, engine, qwen3(), *source);
    auto out = manager.generate(0);
    REQUIRE(out.samples.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      CHECK(out.samples[i].remove_sample == (out.samples[i].index.value() % 2 == 1));
      CHECK(out.samples[i].metadata.at("all_groups_seen").as_int() == 2);
      const auto ones = std::count(out.data.loss_masks[i].begin(), out.data.loss_masks[i].end(), 1);
      CHECK(ones == (out.samples[i].remove_sample ? 0 : out.data.response_lengths[i]));
    }
    CHECK_FALSE(out.metrics.empty());
  }
  auto custom =
      rollout_args({"--prompt-data", prompts, "--rollout-batch-size", "2", "--n-samples-per-prompt",
                    "2", "--rm-type", "math", "--custom-convert-samples-to-train-data-path",
                    vime::test::manager_plugin("sevens"), "--custom-rollout-log-function-path",
                    vime::test::manager_plugin("skip_log")});
  RolloutManager manager(custom, engine, qwen3(), *source);
  auto out = manager.generate(1);
  CHECK(out.data.rewards == std::vector<double>(4, 7));
  CHECK(out.data.rollout_ids == std::vector<int64_t>{0, 1, 2, 3});  // filled in for the plugin
  CHECK(out.data.rollout_mask_sums[2] == out.data.response_lengths[2]);
  CHECK(out.metrics.empty());  // the log hook said it logged
}

TEST_CASE("train-data conversion follows slime's _convert_samples_to_train_data",
          "[rollout_manager]") {
  auto args = rollout_args({"--advantage-estimator", "reinforce_plus_plus"});
  std::vector<Sample> samples(3);
  for (int i = 0; i < 3; ++i) {
    samples[i].index = 10 + i;
    samples[i].tokens = {1, 2, 3, 4};
    samples[i].response_length = 2;
    samples[i].reward = 0.25 * i;
    samples[i].metadata["raw_reward"] = 9.0 + i;
    samples[i].train_metadata = Json(Json::Object{{"turn", Json(i)}});
  }
  samples[0].rollout_id = 5;
  samples[1].rollout_id = 5;
  samples[0].loss_mask = std::vector<int32_t>{1, 0};
  samples[1].remove_sample = true;
  samples[2].status = SampleStatus::kTruncated;
  samples[2].metadata["source_name"] = "gsm8k";
  auto data = vime::rollout::convert_samples_to_train_data(
      args, samples,
      vime::rollout::load_reward_post_processor(
          args, vime::rollout::RewardPostProcessOptions::from(args)));
  CHECK(data.rewards == std::vector<double>{0, 0.25, 0.5});
  CHECK(data.raw_reward == std::vector<double>{9, 10, 11});
  CHECK(data.loss_masks == std::vector<std::vector<int32_t>>{{1, 0}, {0, 0}, {1, 1}});
  CHECK(data.rollout_ids == std::vector<int64_t>{5, 5, 6});
  CHECK(data.rollout_mask_sums == std::vector<int64_t>{1, 1, 2});
  CHECK(data.truncated == std::vector<int32_t>{0, 0, 1});
  CHECK(data.sample_indices == std::vector<int64_t>{10, 11, 12});
  CHECK(data.source_names == std::vector<std::string>{"unknown", "unknown", "gsm8k"});
  CHECK(data.metadata.size() == 3);
  CHECK(data.rollout_log_probs.empty());
  samples[2].loss_mask = std::vector<int32_t>{1};
  CHECK_THROWS_WITH(vime::rollout::convert_samples_to_train_data(
                        args, samples,
                        vime::rollout::load_reward_post_processor(
                            args, vime::rollout::RewardPostProcessOptions::from(args))),
                    Catch::Contains("loss_mask has 1 entries"));
}

TEST_CASE("--load-debug-rollout-data-subsample slices like slime", "[rollout_manager]") {
  std::vector<Sample> samples(10);
  for (int i = 0; i < 10; ++i) samples[i].index = i;
  auto indices = [](const std::vector<Sample>& kept) {
    std::vector<int64_t> out;
    for (const Sample& s : kept) out.push_back(*s.index);
    return out;
  };
  using vime::rollout::subsample_debug_rollout_data;
  // rough = 5: data[:2] + data[-3:] (Python floors -5 // 2 to -3).
  CHECK(indices(subsample_debug_rollout_data(samples, 0.5)) == std::vector<int64_t>{0, 1, 7, 8, 9});
  CHECK(indices(subsample_debug_rollout_data(samples, 1.0)).size() == 10);
  CHECK(indices(subsample_debug_rollout_data(samples, 0.4)) == std::vector<int64_t>{0, 1, 8, 9});
  // rough = 0: data[:0] + data[-0:] is everything.
  CHECK(indices(subsample_debug_rollout_data(samples, 0.05)).size() == 10);
}
