#include "vime/core/arg_validation.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/core/arg_parser.hpp"
#include "vime/error.hpp"

using vime::Args;
using vime::core::parse_args;
using vime::core::validate_args;

namespace {

// A minimal valid run plus `extra` flags; paths are not checked unless a test asks for it.
Args validated(std::vector<std::string> extra, bool check_paths = false) {
  std::vector<std::string> tokens = {"--rollout-batch-size", "4", "--n-samples-per-prompt", "4",
                                     "--num-rollout",        "3"};
  tokens.insert(tokens.end(), extra.begin(), extra.end());
  Args a = parse_args(tokens);
  validate_args(a, {.check_paths = check_paths});
  return a;
}

std::string error_of(std::vector<std::string> extra, bool check_paths = false) {
  try {
    validated(std::move(extra), check_paths);
  } catch (const vime::UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("derived values follow slime", "[validation]") {
  Args a = validated({"--eps-clip", "0.3"});
  CHECK(a.get_double("eps_clip_high") == 0.3);
  CHECK(a.get_int("over_sampling_batch_size") == 4);
  CHECK(a.get_int("global_batch_size") == 16);  // one step per rollout, counted in samples
  CHECK(a.source("eps_clip_high") == vime::ArgSource::kDerived);

  Args steps = validated({"--num-steps-per-rollout", "2"});
  CHECK(steps.get_int("global_batch_size") == 8);

  Args colocated =
      validated({"--colocate", "--actor-num-nodes", "2", "--actor-num-gpus-per-node", "4"});
  CHECK(colocated.get_bool("offload_train"));
  CHECK(colocated.get_bool("offload_rollout"));
  CHECK(colocated.get_int("rollout_num_gpus") == 8);

  Args dynamic = validated({"--use-dynamic-batch-size", "--max-tokens-per-gpu", "9216"});
  CHECK(dynamic.get_int("log_probs_max_tokens_per_gpu") == 9216);

  Args single =
      parse_args(std::vector<std::string>{"--rollout-batch-size", "4", "--num-epoch", "1"});
  validate_args(single, {.check_paths = false});
  bool std_normalized = single.has("grpo_std_normalization")
                            ? single.get_bool("grpo_std_normalization")
                            : !single.get_bool("disable_grpo_std_normalization");
  CHECK_FALSE(std_normalized);  // n_samples_per_prompt == 1

  Args ppo = validated({"--advantage-estimator", "ppo"});
  CHECK(ppo.get_bool("use_critic"));
  CHECK(ppo.get_bool("offload_train"));

  Args eval = validated({"--eval-prompt-data", "/data/aime.jsonl", "--eval-interval", "5"});
  CHECK(eval.get_string_list("eval_prompt_data") ==
        std::vector<std::string>{"aime", "/data/aime.jsonl"});
}

TEST_CASE("--load without a Megatron checkpoint falls back to --ref-load as slime does",
          "[validation]") {
  vime::test::TempDir dir;
  auto ref = dir.path() / "ref";
  std::filesystem::create_directories(ref);
  Args a = validated({"--load", (dir.path() / "empty").string(), "--ref-load", ref.string(),
                      "--ref-ckpt-step", "5"});
  CHECK(a.get_string("load") == ref.string());
  CHECK(a.get_bool("finetune"));
  CHECK(a.get_bool("no_load_optim"));
  CHECK(a.get_bool("no_load_rng"));
  CHECK(a.get_int("ckpt_step") == 5);
  CHECK(a.get_int("start_rollout_id") == 0);

  auto ckpt = dir.path() / "ckpt";
  dir.write("ckpt/latest_checkpointed_iteration.txt", "20\n");
  Args resumed = validated({"--load", ckpt.string(), "--ref-load", ref.string()});
  CHECK(resumed.get_string("load") == ckpt.string());
  CHECK_FALSE(resumed.get_bool("finetune"));
}

TEST_CASE("slime's validation rules give clear messages", "[validation]") {
  CHECK_THAT(error_of({"--rollout-temperature", "0"}),
             Catch::Contains("--rollout-temperature must be > 0"));
  CHECK_THAT(error_of({"--use-kl-loss"}), Catch::Contains("need a reference model"));
  CHECK_THAT(error_of({"--kl-coef", "0.1", "--kl-loss-coef", "0.1", "--ref-load", "/r"}),
             Catch::Contains("--kl-coef and --kl-loss-coef cannot both be non-zero"));
  CHECK_THAT(error_of({"--advantage-estimator", "reinforce_plus_plus"}),
             Catch::Contains("needs --normalize-advantages"));
  CHECK_THAT(error_of({"--use-rollout-logprobs", "--use-tis"}),
             Catch::Contains("cannot be used together"));
  CHECK_THAT(error_of({"--use-dynamic-batch-size"}),
             Catch::Contains("--use-dynamic-batch-size needs --max-tokens-per-gpu"));
  CHECK_THAT(error_of({"--over-sampling-batch-size", "2"}),
             Catch::Contains("must be >= --rollout-batch-size 4"));
  CHECK_THAT(error_of({"--eval-interval", "5"}),
             Catch::Contains("--eval-interval needs eval datasets"));
  CHECK_THAT(error_of({"--save-interval", "5"}), Catch::Contains("--save-interval needs --save"));
  CHECK_THAT(error_of({"--debug-rollout-only", "--debug-train-only"}),
             Catch::Contains("cannot be used together"));
  CHECK_THAT(error_of({"--use-opd"}), Catch::Contains("--use-opd needs --opd-type"));
  CHECK_THAT(error_of({"--opd-teacher-model", "t"}),
             Catch::Contains("--opd-teacher-model needs --use-opd"));
  CHECK_THAT(error_of({"--use-opd", "--opd-type", "vllm", "--opd-teacher-model", "teacher"}),
             Catch::Contains("--opd-teacher-model teacher names a model of --vllm-config"));
  CHECK_THAT(error_of({"--use-opd", "--opd-type", "megatron", "--opd-teacher-load", "/",
                       "--opd-teacher-model", "http://h:1"}),
             Catch::Contains("--opd-type megatron takes --opd-teacher-load"));
  // Flags that mean something only with another are refused alone, not ignored.
  CHECK_THAT(error_of({"--debug-train-only"}), Catch::Contains("needs --load-debug-rollout-data"));
  CHECK_THAT(error_of({"--get-mismatch-metrics"}),
             Catch::Contains("--get-mismatch-metrics needs --custom-tis-function-path"));
  CHECK_THAT(error_of({"--disable-compute-advantages-and-returns"}),
             Catch::Contains("needs --loss-type sft_loss or custom_loss"));
  CHECK_THAT(error_of({"--save-hf", "/h/{rollout_id}"}), Catch::Contains("--save-hf needs --save"));
  CHECK_THAT(error_of({"--ref-update-interval", "0"}), Catch::Contains("must be > 0"));
  CHECK_THAT(error_of({"--custom-tis-function-path", "mis"}),
             Catch::Contains("needs --use-tis or --get-mismatch-metrics"));
  CHECK_THAT(error_of({"--update-weight-delta-dir", "/a", "--update-weight-disk-dir", "/b"}),
             Catch::Contains("must agree"));
  CHECK_THAT(error_of({"--num-epoch", "2", "--disable-rollout-global-dataset"}),
             Catch::Contains("--num-epoch needs the global dataset"));
  CHECK(error_of({"--num-epoch", "2"}) == "no error");
  CHECK_THAT(error_of({"--global-batch-size", "5"}), Catch::Contains("must divide"));
  CHECK_THAT(error_of({"--update-weight-transport", "disk"}),
             Catch::Contains("needs --update-weight-disk-dir"));
  CHECK_THAT(error_of({"--normalization", "LayerNorm"}),
             Catch::Contains("--normalization LayerNorm is not supported yet"));
  CHECK(error_of({"--normalization", "RMSNorm"}) == "no error");
  // Several problems are reported together, on one line.
  std::string both = error_of({"--rollout-temperature", "-1", "--save-interval", "3"});
  CHECK_THAT(both,
             Catch::Contains("--rollout-temperature must be > 0; --save-interval needs --save"));
}

TEST_CASE("required flags", "[validation]") {
  Args a = parse_args(std::vector<std::string>{});
  CHECK_THROWS_WITH(validate_args(a, {.check_paths = false}),
                    Catch::Contains("--rollout-batch-size is required") &&
                        Catch::Contains("one of --num-rollout and --num-epoch is required"));
}

TEST_CASE("missing input paths and unsupported flags are refused together, by name",
          "[validation]") {
  vime::test::TempDir dir;
  auto data = dir.write("train.jsonl", "{\"input\": \"1+1\"}\n");
  CHECK(
      error_of({"--prompt-data", data.string() + "@[0:1]", "--hf-checkpoint", dir.path().string()},
               true) == "no error");
  std::string e =
      error_of({"--prompt-data", "/nope/train.jsonl", "--pipeline-model-parallel-size", "2"}, true);
  CHECK_THAT(e, Catch::Contains("--pipeline-model-parallel-size 2 is not supported yet") &&
                    Catch::Contains("--prompt-data /nope/train.jsonl does not exist"));
  CHECK(vime::core::strip_row_slice("/d/x.jsonl@[-3:]") == "/d/x.jsonl");
  CHECK(vime::core::strip_row_slice("/d/x.jsonl") == "/d/x.jsonl");
}

TEST_CASE("flags with nothing to change in vime are refused at values that would change results",
          "[validation]") {
  // slime's scripts pass 0.0: nothing to change, accepted.
  CHECK(error_of({"--attention-dropout", "0.0", "--hidden-dropout", "0"}) == "no error");
  CHECK_THAT(error_of({"--attention-dropout", "0.1"}),
             Catch::Contains("--attention-dropout 0.1 is not supported: vime trains without "
                             "dropout"));
  CHECK_THAT(error_of({"--hidden-dropout", "0.05"}), Catch::Contains("--hidden-dropout 0.05"));
  // --rotary-scaling-factor: the factor vime applies, from the flags or config.json, or 1.
  CHECK(error_of({"--use-rope-scaling", "--rope-scaling-factor", "8", "--rotary-scaling-factor",
                  "8.0"}) == "no error");
  CHECK(error_of({"--rotary-scaling-factor", "1.0"}) == "no error");
  const std::string llama = VIME_SOURCE_DIR "/tests/model/golden/tiny_llama";  // factor 8
  CHECK(error_of({"--hf-checkpoint", llama, "--rotary-scaling-factor", "8"}) == "no error");
  CHECK_THAT(error_of({"--hf-checkpoint", llama, "--rotary-scaling-factor", "4"}),
             Catch::Contains("--rotary-scaling-factor 4.0 differs from the RoPE scaling vime "
                             "applies (8.0"));
  CHECK_THAT(error_of({"--use-rope-scaling", "--rope-scaling-factor", "8",
                       "--rotary-scaling-factor", "32"}),
             Catch::Contains("--rotary-scaling-factor 32.0 differs"));
  CHECK_THAT(error_of({"--rotary-scaling-factor", "8"}), Catch::Contains("vime applies (1.0"));
}
