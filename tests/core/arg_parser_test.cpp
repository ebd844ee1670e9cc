#include "vime/core/arg_parser.hpp"

#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "vime/error.hpp"

using vime::Args;
using vime::ArgSource;
using vime::UsageError;
using vime::core::parse_args;

namespace {

Args parse(std::vector<std::string> tokens) { return parse_args(tokens); }

std::string parse_error(std::vector<std::string> tokens) {
  try {
    parse_args(tokens);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("defaults are slime's", "[args]") {
  Args a = parse({});
  CHECK(a.get_double("rollout_temperature") == 1.0);
  CHECK(a.get_double("rollout_top_p") == 1.0);
  CHECK(a.get_int("rollout_top_k") == -1);
  CHECK(a.get_int("rollout_seed") == 42);
  CHECK(a.get_int("n_samples_per_prompt") == 1);
  CHECK(a.get_string("advantage_estimator") == "grpo");
  CHECK(a.get_double("eps_clip") == 0.2);
  CHECK(a.get("eps_clip_high").is_null());
  CHECK(a.get_string("kl_loss_type") == "k1");
  CHECK(a.get_double("lr") == 1e-6);
  CHECK(a.get_int("seed") == 1234);
  CHECK(a.get_string("input_key") == "input");
  CHECK(a.get_string("metadata_key") == "metadata");
  CHECK(a.get_int("micro_batch_size") == 1);
  CHECK(a.get_bool("add_bias_linear"));  // Megatron's store_false dest
  CHECK(a.get_int("tensor_model_parallel_size") == 1);
  CHECK(a.source("lr") == ArgSource::kDefault);
}

TEST_CASE("a full GRPO command line parses with argparse semantics", "[args]") {
  Args a = parse({"--hf-checkpoint",
                  "/m",
                  "--rollout-batch-size",
                  "32",
                  "--n-samples-per-prompt=8",
                  "--rollout-top-k",
                  "-1",
                  "--rollout-stop",
                  "</answer>",
                  "<|im_end|>",
                  "--rollout-stop-token-ids",
                  "151645",
                  "151643",
                  "--advantage-estimator",
                  "grpo",
                  "--use-kl-loss",
                  "--kl-loss-coef",
                  "0.001",
                  "--kl-loss-type",
                  "low_var_kl",
                  "--eps-clip",
                  "0.2",
                  "--eps-clip-high",
                  "0.28",
                  "--lr",
                  "1e-6",
                  "--disable-bias-linear",
                  "--swiglu",
                  "--num-layers",
                  "36",
                  "--rollout-sample-hook-path",
                  "a.so",
                  "--rollout-sample-hook-path",
                  "b.so",
                  "--no-offload-train"});
  CHECK(a.get_string("hf_checkpoint") == "/m");
  CHECK(a.get_int("rollout_batch_size") == 32);
  CHECK(a.get_int("n_samples_per_prompt") == 8);
  CHECK(a.get_int("rollout_top_k") == -1);  // a negative number is a value, not a flag
  CHECK(a.get_string_list("rollout_stop") == std::vector<std::string>{"</answer>", "<|im_end|>"});
  CHECK(a.get_int_list("rollout_stop_token_ids") == std::vector<int64_t>{151645, 151643});
  CHECK(a.get_bool("use_kl_loss"));
  CHECK(a.get_double("kl_loss_coef") == 0.001);
  CHECK(a.get_double("eps_clip_high") == 0.28);
  CHECK_FALSE(a.get_bool("add_bias_linear"));
  CHECK(a.get_bool("swiglu"));
  CHECK(a.get_string_list("rollout_sample_hook_path") == std::vector<std::string>{"a.so", "b.so"});
  CHECK(a.get("offload_train").as_bool() == false);
  CHECK(a.source("rollout_batch_size") == ArgSource::kCommandLine);
}

TEST_CASE("short aliases set the same dest", "[args]") {
  Args a = parse({"--rm-plugin", "x.so", "--rollout-plugin", "y.so:gen"});
  CHECK(a.get_string("custom_rm_path") == "x.so");
  // --rollout-plugin is its own flag, resolved to one of two hook flags by the .so's exports
  // (plugin/rollout_plugin.cpp).
  CHECK(a.get_string("rollout_plugin") == "y.so:gen");
}

TEST_CASE("bad values and unknown flags are usage errors that name the flag", "[args]") {
  CHECK(parse_error({"--rollout-batch-size", "abc"}) ==
        "--rollout-batch-size: 'abc' is not an integer");
  CHECK(parse_error({"--rollout-temperature", "hot"}) ==
        "--rollout-temperature: 'hot' is not a number");
  CHECK_THAT(parse_error({"--advantage-estimator", "dpo"}),
             Catch::StartsWith("--advantage-estimator: 'dpo' is not one of grpo, gspo, cispo"));
  CHECK(parse_error({"--rollout-batch-size"}) == "--rollout-batch-size expects a value");
  CHECK(parse_error({"--rollout-stop"}) == "--rollout-stop expects one or more values");
  CHECK(parse_error({"--colocate=yes"}) == "--colocate takes no value (got 'yes')");
  CHECK_THAT(parse_error({"--rollout-temprature", "1"}),
             Catch::Contains("did you mean --rollout-temperature?"));
  CHECK_THAT(parse_error({"--temperature", "1"}),
             Catch::Contains("did you mean --eval-temperature or --rollout-temperature?"));
  CHECK_THAT(parse_error({"stray"}), Catch::StartsWith("unexpected argument 'stray'"));
  CHECK_THAT(parse_error({"--sglang-mem-fraction-static", "0.7"}),
             Catch::Contains("use --vllm-gpu-memory-utilization instead"));
  CHECK_THAT(parse_error({"--train-env-vars", "{oops"}),
             Catch::StartsWith("--train-env-vars: invalid JSON"));
}

TEST_CASE("--vllm-* and --router-* flags vime does not own pass through verbatim", "[args]") {
  Args a = parse({"--vllm-gpu-memory-utilization", "0.7", "--vllm-enforce-eager",
                  "--router-log-level=debug", "--vllm-router-port", "3000", "--vllm-max-num-seqs",
                  "256", "--rollout-batch-size", "4"});
  REQUIRE(a.vllm_passthrough().size() == 3);
  CHECK(a.vllm_passthrough()[0].name == "--vllm-gpu-memory-utilization");
  CHECK(a.vllm_passthrough()[0].values == std::vector<std::string>{"0.7"});
  CHECK(a.vllm_passthrough()[1].name == "--vllm-enforce-eager");
  CHECK(a.vllm_passthrough()[1].values.empty());
  CHECK(a.vllm_passthrough()[2].values == std::vector<std::string>{"256"});
  REQUIRE(a.router_passthrough().size() == 1);
  CHECK(a.router_passthrough()[0].values == std::vector<std::string>{"debug"});
  CHECK(a.get_int("vllm_router_port") == 3000);  // owned by vime, not passed through
  CHECK(a.get_int("rollout_batch_size") == 4);
  CHECK(parse({"--router-policy", "round_robin"}).get_string("router_policy") == "round_robin");
  CHECK(parse_error({"--vllm-tensor-parallel-size", "2"}) ==
        "--vllm-tensor-parallel-size is set by vime from --rollout-num-gpus-per-engine; drop it "
        "from the "
        "command line");
  CHECK_THAT(parse_error({"--vllm-model", "/m"}),
             Catch::Contains("set by vime from --hf-checkpoint"));
}

TEST_CASE("--config YAML sets flags and the command line wins", "[args]") {
  vime::test::TempDir dir;
  auto config = dir.write("run.yaml", R"(
rollout-batch-size: 16
n_samples_per_prompt: 4          # a dest works as well as a flag name
rollout-stop: ["</answer>"]
use-kl-loss: true
disable-bias-linear: true        # the flag is given -> add_bias_linear false
rollout:                         # the grouped layout --dry-run prints
  rollout_temperature: 0.7
vllm_passthrough:
  --vllm-gpu-memory-utilization: 0.5
)");
  Args a = parse({"--config", config.string(), "--rollout-batch-size", "8"});
  CHECK(a.get_int("rollout_batch_size") == 8);
  CHECK(a.source("rollout_batch_size") == ArgSource::kCommandLine);
  CHECK(a.get_int("n_samples_per_prompt") == 4);
  CHECK(a.source("n_samples_per_prompt") == ArgSource::kConfigFile);
  CHECK(a.get_string_list("rollout_stop") == std::vector<std::string>{"</answer>"});
  CHECK(a.get_bool("use_kl_loss"));
  CHECK_FALSE(a.get_bool("add_bias_linear"));
  CHECK(a.get_double("rollout_temperature") == 0.7);
  REQUIRE(a.vllm_passthrough().size() == 1);
  CHECK(a.vllm_passthrough()[0].values == std::vector<std::string>{"0.5"});
}

TEST_CASE("--config errors name the file and the key", "[args]") {
  vime::test::TempDir dir;
  auto bad_key = dir.write("a.yaml", "rollout-temprature: 0.5\n");
  CHECK_THAT(parse_error({"--config", bad_key.string()}),
             Catch::Contains(
                 "a.yaml: unknown key 'rollout-temprature'; did you mean rollout-temperature?"));
  auto bad_yaml = dir.write("b.yaml", "a: [1, 2\nb: 3\n");
  CHECK_THAT(parse_error({"--config", bad_yaml.string()}),
             Catch::Contains("b.yaml: invalid YAML at line"));
  auto bad_value = dir.write("c.yaml", "rollout-batch-size: many\n");
  CHECK_THAT(parse_error({"--config", bad_value.string()}),
             Catch::Contains("--rollout-batch-size: 'many' is not an integer"));
  CHECK_THAT(parse_error({"--config", (dir.path() / "missing.yaml").string()}),
             Catch::Contains("missing.yaml: cannot read the file"));
}

TEST_CASE("--custom-config-path adds free-form keys for plugins; the command line still wins",
          "[args]") {
  vime::test::TempDir dir;
  auto custom = dir.write("custom.yaml", R"(
search_topk: 3
search_backend: local
retriever: {url: "http://127.0.0.1:8000/retrieve", timeout_s: 5.5}
rollout_batch_size: 64
n_samples_per_prompt: 2
)");
  Args a = parse({"--custom-config-path", custom.string(), "--rollout-batch-size", "8"});
  CHECK(a.get_int("search_topk") == 3);
  CHECK(a.get_string("search_backend") == "local");
  CHECK(a.get("retriever").at("timeout_s").as_double() == 5.5);
  CHECK(a.source("search_topk") == ArgSource::kCustomConfig);
  CHECK(a.get_int("rollout_batch_size") == 8);
  CHECK(a.get_int("n_samples_per_prompt") == 2);
}

TEST_CASE("unsupported settings are refused by name, no-effect ones listed", "[args]") {
  Args a = parse({"--pipeline-model-parallel-size", "2", "--tensor-model-parallel-size", "2",
                  "--sequence-parallel", "--context-parallel-size", "1", "--attention-backend",
                  "flash", "--attention-dropout", "0.0"});
  auto refused = vime::core::unsupported_settings(a);
  CHECK(std::find(refused.begin(), refused.end(), "--pipeline-model-parallel-size 2") !=
        refused.end());
  for (const auto& r : refused) {
    CHECK(r.find("context-parallel") == std::string::npos);       // default value is fine
    CHECK(r.find("tensor-model-parallel") == std::string::npos);  // supported
  }
  CHECK_THROWS_WITH(vime::core::check_supported(a),
                    Catch::Contains("--pipeline-model-parallel-size 2 is not supported yet"));
  auto no_effect = vime::core::no_effect_settings(a);
  CHECK(std::find(no_effect.begin(), no_effect.end(), "--attention-backend flash") !=
        no_effect.end());
  CHECK(std::find(no_effect.begin(), no_effect.end(), "--attention-dropout 0.0") !=
        no_effect.end());
  // Sequence parallelism changes no result (vime keeps activations whole on each rank).
  CHECK(std::find(no_effect.begin(), no_effect.end(), "--sequence-parallel") != no_effect.end());
}
