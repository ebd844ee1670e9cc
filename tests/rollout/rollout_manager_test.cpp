#include "vime/rollout/rollout_manager.hpp"

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "rollout/rollout_test_support.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/rollout/debug_rollout_data.hpp"
#include "vime/rollout/default_generate.hpp"
#include "vime/rollout/failed_samples.hpp"
#include "vime/rollout/group_generator.hpp"
#include "vime/rollout/train_data.hpp"

using Catch::Detail::Approx;
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

double reward_of(const Sample& s) { return s.reward.as_double(); }

int64_t count_prefix(const vime::Metrics& metrics, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& [key, value] : metrics)
    if (key.rfind(prefix, 0) == 0) n += static_cast<int64_t>(value);
  return n;
}

}  // namespace

TEST_CASE("default generate: prompt ids, max_new_tokens, seeds, finish reasons",
          "[rollout_manager]") {
  ScriptedEngine engine(qwen3());
  auto args = rollout_args({"--vllm-enable-deterministic-inference", "--rollout-seed", "40",
                            "--rollout-max-response-len", "5", "--rm-type", "math"});
  // A chat-message prompt is rendered with the chat template.
  Sample chat;
  chat.prompt = Json(Json::Array{
      Json(Json::Object{{"role", Json("user")}, {"content", Json("What is 1+2? [ALL_RIGHT]")}})});
  const std::string rendered =
      qwen3().apply_chat_template(chat.prompt, Json(), true, Json::object());
  CHECK(vime::rollout::prompt_input_ids(qwen3(), chat) == qwen3().encode(rendered));

  const auto options = vime::rollout::RolloutOptions::from(args);
  vime::rollout::GroupGenerator generator(args, options, engine, qwen3());
  Sample plain;
  plain.prompt = "What is 1+2? [ALL_RIGHT]";
  plain.label = "3";
  auto groups =
      generator.run({{plain, plain}}, vime::rollout::rollout_sampling_params(options), false, 0);
  auto requests = engine.requests();
  REQUIRE(requests.size() == 2);
  std::vector<int64_t> seeds{*requests[0].sampling_params.seed, *requests[1].sampling_params.seed};
  std::sort(seeds.begin(), seeds.end());
  CHECK(seeds == std::vector<int64_t>{40, 41});
  CHECK(requests[0].session_id != requests[1].session_id);
  CHECK(requests[0].session_id.size() == 36);
  for (const Sample& s : groups[0]) {
    // "The answer is \boxed{3}." is longer than 5 tokens: cut, TRUNCATED.
    CHECK(s.status == SampleStatus::kTruncated);
    CHECK(s.response_length == 5);
    CHECK(s.tokens.size() == qwen3().encode(plain.prompt.as_string()).size() + 5);
    CHECK(s.rollout_log_probs->size() == 5);
    CHECK(s.weight_versions == std::vector<std::string>{"3"});
    CHECK(s.response == qwen3().decode(std::vector<int32_t>(s.tokens.end() - 5, s.tokens.end())));
    CHECK(s.reward.as_double() == 0.0);  // no \boxed{} yet
  }
  // A sample that already has the whole budget: TRUNCATED without a request.
  Sample full = groups[0][0];
  full.status = SampleStatus::kAborted;
  auto again = generator.run({{full}}, vime::rollout::rollout_sampling_params(options), false, 0);
  CHECK(engine.num_requests == 2);
  CHECK(again[0][0].status == SampleStatus::kTruncated);
}

TEST_CASE("over-sampling with the dynamic filter keeps rollout_batch_size groups and counts drops",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  auto args = rollout_args(
      {"--prompt-data",
       math_prompts(dir, {"ALL_RIGHT", "MIXED", "ALL_WRONG", "MIXED", "MIXED", "MIXED"}),
       "--rollout-batch-size", "2", "--over-sampling-batch-size", "3", "--n-samples-per-prompt",
       "2", "--rm-type", "math", "--dynamic-sampling-filter-path", "check_reward_nonzero_std"});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);

  REQUIRE(out.samples.size() == 4);
  // Two rounds of three groups were pulled; the two zero-std groups were dropped.
  CHECK(source->sample_offset() == 6);
  CHECK(count_prefix(out.metrics, "rollout/dynamic_filter/drop_zero_std_1") == 1);
  CHECK(count_prefix(out.metrics, "rollout/dynamic_filter/drop_zero_std_0") == 1);
  // Sorted by index (which mixed groups finish first is up to the workers).
  CHECK(out.samples[0].index.value() < out.samples[2].index.value());
  for (size_t g = 0; g < 4; g += 2) {
    CHECK(out.samples[g].group_index == out.samples[g + 1].group_index);
    CHECK(reward_of(out.samples[g]) + reward_of(out.samples[g + 1]) == 1.0);
  }
  CHECK(engine.num_aborts == 1);  // the last round's unfinished groups were aborted
  // Train data: GRPO-normalised rewards, 1-masks, a rollout id per sample.
  const auto& data = out.data;
  REQUIRE(data.tokens.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(data.raw_reward[i] == reward_of(out.samples[i]));
    CHECK(std::abs(data.rewards[i]) == Approx(0.7071).margin(1e-3));
    CHECK(data.loss_masks[i] == std::vector<int32_t>(data.response_lengths[i], 1));
    CHECK(data.rollout_mask_sums[i] == data.response_lengths[i]);
    CHECK(data.rollout_log_probs[i] == std::vector<float>(data.response_lengths[i], -0.25f));
    CHECK(data.truncated[i] == 0);
    CHECK(data.source_names[i] == "unknown");
  }
  CHECK(out.metrics.count("rollout/response_len/mean"));
  CHECK(out.metrics.at("rollout/truncated_ratio") == 0.0);
  CHECK(out.metrics.count("perf/rollout_time"));
  // Per-GPU rates where the rollout runs on GPUs only.
  CHECK(out.metrics.count("perf/tokens_per_gpu_per_sec") ==
        (vime::core::runtime_info().cuda_available ? 1 : 0));
  CHECK(out.metrics.count("perf/longest_sample_tokens_per_sec"));
  CHECK(out.metrics.at("rollout/prefix_cache_hit_rate") == Approx(0.5).margin(0.05));
}

TEST_CASE("the dynamic filter never drops a group with a failed sample", "[rollout_manager]") {
  // Failed samples score 0, so a group of them has zero reward std: dropped, the rollout would
  // sample on for as long as the engine fails. Kept, it reaches the run's failed-samples check.
  vime::test::TempDir dir;
  auto args = rollout_args({"--prompt-data", math_prompts(dir, {"THROW", "MIXED", "THROW"}),
                            "--rollout-batch-size", "2", "--over-sampling-batch-size", "3",
                            "--n-samples-per-prompt", "2", "--rm-type", "math",
                            "--dynamic-sampling-filter-path", "check_reward_nonzero_std"});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);
  REQUIRE(out.samples.size() == 4);
  CHECK(source->sample_offset() == 3);  // one round: no group was dropped
  const auto failed = vime::rollout::describe_failed_samples(out.samples);
  REQUIRE(failed.has_value());
  CHECK_THAT(*failed, Catch::StartsWith("2 of 4 samples failed to generate") ||
                          Catch::StartsWith("4 of 4 samples failed to generate"));
  CHECK_THAT(*failed, Catch::EndsWith("first error: scripted engine: THROW in prompt"));
}

TEST_CASE("partial rollout returns aborted groups to the buffer and they resume",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  const std::string prompts = math_prompts(dir, {"SLOW", "DELAY MIXED", "DELAY MIXED", "SLOW"});
  const std::vector<std::string> common{"--prompt-data",
                                        prompts,
                                        "--rollout-batch-size",
                                        "2",
                                        "--n-samples-per-prompt",
                                        "2",
                                        "--rm-type",
                                        "math",
                                        "--partial-rollout",
                                        "--mask-offpolicy-in-partial-rollout"};
  auto with = [&](std::string over) {
    auto flags = common;
    flags.insert(flags.end(), {"--over-sampling-batch-size", over});
    return rollout_args(flags);
  };
  auto args = with("4");
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  {
    RolloutManager manager(args, engine, qwen3(), *source);
    auto first = manager.generate(0);
    REQUIRE(first.samples.size() == 4);
    for (const Sample& s : first.samples) CHECK(s.group_index.value() % 3 != 0);
  }
  REQUIRE(source->buffer_size() == 2);
  // Rollout 1 takes exactly the two buffered groups, which continue from their 2 tokens.
  RolloutManager resume(with("2"), engine, qwen3(), *source);
  auto second = resume.generate(1);
  REQUIRE(second.samples.size() == 4);
  for (const Sample& s : second.samples) {
    CHECK(s.group_index.value() % 3 == 0);
    CHECK(s.metadata.at("start_rollout_id").as_int() == 0);
    CHECK(s.status == SampleStatus::kCompleted);
    CHECK(s.response.rfind("The answer is \\boxed{", 0) == 0);
    REQUIRE(s.loss_mask->size() == static_cast<size_t>(s.response_length));
    CHECK((*s.loss_mask)[0] == 0);
    CHECK((*s.loss_mask)[1] == 0);
    CHECK((*s.loss_mask)[2] == 1);
    CHECK(s.weight_versions.size() == 2);
  }
  CHECK(reward_of(second.samples[0]) + reward_of(second.samples[1]) == 1.0);
}

TEST_CASE("eval runs every dataset with its overrides and logs pass@k", "[rollout_manager]") {
  vime::test::TempDir dir;
  const std::string easy = math_prompts(dir, {"MIXED", "MIXED"}, "easy.jsonl");
  const std::string hard = math_prompts(dir, {"ALL_RIGHT"}, "hard.jsonl");
  const std::string yaml =
      "eval:\n"
      "  defaults: {max_response_len: 64}\n"
      "  datasets:\n"
      "    - {name: easy, path: " +
      easy +
      ", rm_type: math, n_samples_per_eval_prompt: 4,"
      " temperature: 0.3, metadata_overrides: {source_name: easy_src}}\n"
      "    - {name: hard, path: " +
      hard + ", custom_rm_path: '" + vime::test::manager_plugin("length_reward") +
      "', max_response_len: 3, top_k: 5, custom_generate_function_path: '" +
      vime::test::manager_plugin("scripted_generate") + "'}\n";
  auto args =
      rollout_args({"--eval-config", dir.write("eval.yaml", yaml).string(), "--rm-type", "math",
                    "--log-passrate", "--prompt-data", easy, "--save-debug-rollout-data",
                    (dir.path() / "d_{rollout_id}.json").string()});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.eval(5);

  REQUIRE(out.output.data.size() == 2);
  const auto& e = out.output.data.at("easy");
  REQUIRE(e.samples.size() == 8);
  // Each prompt's 4 calls alternate right/wrong (in whatever order the workers ran them).
  for (size_t g = 0; g < 8; g += 4)
    CHECK(std::count(e.rewards.begin() + g, e.rewards.begin() + g + 4, 1.0) == 2);
  CHECK(e.samples[4].index == 4);
  const auto& h = out.output.data.at("hard");
  REQUIRE(h.samples.size() == 1);
  CHECK(h.rewards == std::vector<double>{103});  // custom_rm_path wins over --rm-type
  CHECK(h.truncated == std::vector<int32_t>{1});
  CHECK(h.samples[0].metadata.at("generated_by").as_string() == "scripted_generate");
  CHECK_FALSE(e.samples[0].metadata.contains("generated_by"));
  for (const auto& r : engine.requests()) {
    if (qwen3().decode(r.input_ids).find("Q0: What is 0+1") != std::string::npos &&
        r.sampling_params.top_k == 5) {
      CHECK(r.sampling_params.max_new_tokens == 3);
    } else {
      CHECK(r.sampling_params.temperature == Approx(0.3));
      CHECK(r.sampling_params.max_new_tokens == 64);
    }
  }
  CHECK(e.samples[0].metadata.at("source_name").as_string() == "easy_src");
  CHECK(out.metrics.at("eval/easy") == Approx(0.5));
  CHECK(out.metrics.at("eval/hard") == Approx(103));
  CHECK(out.metrics.at("eval/hard-truncated_ratio") == 1.0);
  CHECK(out.metrics.at("eval/easy-pass@1") == Approx(0.5));
  CHECK(out.metrics.at("eval/easy-pass@2") == Approx(1 - 1.0 / 6));
  CHECK(out.metrics.at("eval/easy-pass@4") == Approx(1.0));
  CHECK(out.metrics.count("eval/easy/response_len/mean"));
  // Eval samples are saved as rollout "eval_5", as slime names them.
  CHECK(vime::rollout::load_debug_rollout_data(dir.path() / "d_eval_5.json").size() == 9);
}

TEST_CASE("debug rollout data round-trips through --save/--load-debug-rollout-data",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  const std::string prompts = math_prompts(dir, {"MIXED", "ALL_RIGHT"});
  const std::string path = (dir.path() / "debug" / "rollout_{rollout_id}.json").string();
  auto args =
      rollout_args({"--prompt-data", prompts, "--rollout-batch-size", "2", "--n-samples-per-prompt",
                    "2", "--rm-type", "math", "--save-debug-rollout-data", path});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager saver(args, engine, qwen3(), *source);
  auto saved = saver.generate(3);
  REQUIRE(std::filesystem::exists(dir.path() / "debug" / "rollout_3.json"));

  auto load_args =
      rollout_args({"--prompt-data", prompts, "--rollout-batch-size", "2", "--n-samples-per-prompt",
                    "2", "--rm-type", "math", "--load-debug-rollout-data", path});
  RolloutManager loader(load_args, engine, qwen3(), *source);
  const int before = engine.num_requests;
  auto loaded = loader.generate(3);
  CHECK(engine.num_requests == before);
  REQUIRE(loaded.samples.size() == saved.samples.size());
  for (size_t i = 0; i < saved.samples.size(); ++i)
    CHECK(loaded.samples[i].to_json() == saved.samples[i].to_json());
  CHECK(loaded.data.rewards == saved.data.rewards);
  CHECK_THROWS_WITH(loader.generate(4), Catch::Contains("rollout_4.json does not exist"));
}

TEST_CASE("a throwing engine or generate plugin fails its samples, not the rollout",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  auto args = rollout_args(
      {"--prompt-data", math_prompts(dir, {"MIXED", "PLUGIN_THROW", "THROW"}),
       "--rollout-batch-size", "3", "--n-samples-per-prompt", "2", "--rm-type", "math",
       "--custom-generate-function-path", vime::test::manager_plugin("scripted_generate"),
       "--rollout-sample-hook-path", vime::test::manager_plugin("tag_hook"),
       "--rollout-sample-hook-path", vime::test::manager_plugin("second_hook")});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(2);
  REQUIRE(out.samples.size() == 6);
  for (size_t i = 0; i < 2; ++i) {
    const Sample& s = out.samples[i];
    CHECK(s.status == SampleStatus::kCompleted);
    CHECK(s.metadata.at("generated_by").as_string() == "scripted_generate");
    CHECK(s.metadata.at("hook_rollout_id").as_int() == 2);
    CHECK(s.metadata.at("hook_saw_reward").as_bool() == false);  // hooks run before the RM
    CHECK_FALSE(s.metadata.contains("second_hook"));  // it returned nullopt: sample unchanged
  }
  for (size_t i = 2; i < 6; ++i) {
    const Sample& s = out.samples[i];
    CHECK(s.status == SampleStatus::kFailed);
    CHECK(s.metadata.at("error_cat").as_string() == "generate");
    CHECK(s.metadata.at("error").as_string() ==
          (i < 4 ? "generate plugin failed on purpose" : "scripted engine: THROW in prompt"));
    CHECK(out.data.loss_masks[i] == std::vector<int32_t>(out.data.response_lengths[i], 0));
  }
  CHECK(out.metrics.at("rollout/error_cat/generate") == 4);
  // The one line a run stops with (the train loop's rollout driver).
  using vime::rollout::describe_failed_samples;
  CHECK(describe_failed_samples(out.samples) ==
        "4 of 6 samples failed to generate; first error: generate plugin failed on purpose");
  CHECK_THROWS_WITH(vime::rollout::stop_on_failed_samples(2, out.samples),
                    "rollout 2: 4 of 6 samples failed to generate; first error: generate plugin "
                    "failed on purpose");
  out.samples[5].metadata["error_cat"] = "reward";
  CHECK(describe_failed_samples(out.samples) ==
        "4 of 6 samples failed (generate 3, reward 1); first error (generate): generate plugin "
        "failed on purpose");
  CHECK_FALSE(describe_failed_samples({out.samples[0], out.samples[1]}).has_value());
}

TEST_CASE("reward dispatch: a plugin's own reward, then --custom-rm-path over --rm-type",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  auto args = rollout_args({"--prompt-data", math_prompts(dir, {"MIXED", "SELF_REWARD MIXED"}),
                            "--rollout-batch-size", "2", "--n-samples-per-prompt", "2", "--rm-type",
                            "math", "--custom-rm-path", vime::test::manager_plugin("length_reward"),
                            "--custom-generate-function-path",
                            vime::test::manager_plugin("scripted_generate"),
                            "--advantage-estimator", "reinforce_plus_plus"});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);
  REQUIRE(out.samples.size() == 4);
  for (size_t i = 0; i < 2; ++i)
    CHECK(reward_of(out.samples[i]) == 100 + out.samples[i].response_length);
  for (size_t i = 2; i < 4; ++i) CHECK(reward_of(out.samples[i]) == 0.5);
  CHECK(out.data.rewards == out.data.raw_reward);  // reinforce_plus_plus: not normalised
}

TEST_CASE("--group-rm grades each finished group once", "[rollout_manager]") {
  vime::test::TempDir dir;
  auto args =
      rollout_args({"--prompt-data", math_prompts(dir, {"MIXED", "MIXED"}), "--rollout-batch-size",
                    "2", "--n-samples-per-prompt", "3", "--group-rm", "--custom-rm-path",
                    vime::test::manager_plugin("group_rank")});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);
  REQUIRE(out.samples.size() == 6);
  for (size_t i = 0; i < 6; ++i) CHECK(reward_of(out.samples[i]) == static_cast<double>(i % 3));
}

TEST_CASE("the example best-of-n rollout plugin runs through the manager", "[rollout_manager]") {
  vime::test::TempDir dir;
  const std::string plugin = VIME_EXAMPLE_ROLLOUT_PLUGIN;
  auto args = rollout_args({"--prompt-data", math_prompts(dir, {"MIXED", "MIXED", "ALL_WRONG"}),
                            "--rollout-batch-size", "3", "--n-samples-per-prompt", "2", "--rm-type",
                            "math", "--rollout-function-path", plugin});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  RolloutManager manager(args, engine, qwen3(), *source);
  auto out = manager.generate(0);
  REQUIRE(out.samples.size() == 3);
  CHECK(engine.num_requests == 6);
  CHECK(reward_of(out.samples[0]) == 1.0);
  CHECK(reward_of(out.samples[1]) == 1.0);
  CHECK(reward_of(out.samples[2]) == 0.0);
  CHECK(out.samples[0].metadata.at("best_of").as_int() == 2);
  CHECK(out.metrics.at("rollout/best_of_n/kept_reward_mean") == Approx(2.0 / 3));
  // It is a train rollout only; as the eval function it says so.
  CHECK_THROWS_WITH(manager.eval(0), Catch::Contains("best_of_n_rollout is a train rollout"));
}

TEST_CASE("abort() from another thread ends the rollout with what is in flight",
          "[rollout_manager]") {
  vime::test::TempDir dir;
  auto args =
      rollout_args({"--prompt-data", math_prompts(dir, {"SLOW", "SLOW"}), "--rollout-batch-size",
                    "2", "--n-samples-per-prompt", "2", "--rm-type", "math"});
  auto source = RolloutDataSource::from(args);
  ScriptedEngine engine(qwen3());
  engine.slow_ms = 20000;
  RolloutManager manager(args, engine, qwen3(), *source);
  const auto start = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    manager.abort();
  });
  vime::rollout::TrainRollout out;
  try {
    out = manager.generate(0);
  } catch (...) {
    stopper.join();
    throw;
  }
  stopper.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  REQUIRE(out.samples.size() == 4);
  for (const Sample& s : out.samples) {
    CHECK(s.status == SampleStatus::kAborted);
    CHECK(s.response_length == 2);
    CHECK(s.remove_sample);
  }
  CHECK(source->sample_offset() == 2);
}
