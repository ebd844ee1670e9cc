// The `vime` binary as users run it: exit codes, one-line errors, help, and slime command lines.
#include <catch2/catch.hpp>

#include "support/skip.hpp"
#include "support/test_support.hpp"
#include "vime/core/runtime_info.hpp"
#include "vime/core/yaml_json.hpp"

using vime::Json;
using vime::test::count_lines;
using vime::test::plugin_path;
using vime::test::run_command;
using vime::test::run_vime;

namespace {

const std::string kRunQwen3 =
    std::string(VIME_SOURCE_DIR) + "/tests/cli/run_qwen3_4b.sh " + VIME_BIN;

// Creates the inputs slime's script names under `root`.
void make_qwen3_inputs(const vime::test::TempDir& dir) {
  dir.write("Qwen3-4B/config.json", "{}");
  dir.write("Qwen3-4B_torch_dist/latest_checkpointed_iteration.txt", "release\n");
  dir.write("dapo-math-17k/dapo-math-17k.jsonl", "{\"prompt\": \"1+1\", \"label\": \"2\"}\n");
  dir.write("aime-2024/aime-2024.jsonl", "{\"prompt\": \"2+2\", \"label\": \"4\"}\n");
}

}  // namespace

TEST_CASE("vime --version, --help and unknown commands", "[cli]") {
  auto version = run_vime("--version");
  CHECK(version.exit_code == 0);
  CHECK_THAT(version.output,
             Catch::StartsWith("vime 0.1.0 (plugin ABI") && Catch::Contains("LibTorch"));
  auto help = run_vime("--help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.output, Catch::Contains("train") && Catch::Contains("plugin"));
  auto none = run_vime("");
  CHECK(none.exit_code == 2);
  auto unknown = run_vime("trian");
  CHECK(unknown.exit_code == 2);
  CHECK(count_lines(unknown.output) == 1);
  CHECK_THAT(unknown.output, Catch::Contains("unknown command 'trian'"));
}

TEST_CASE("vime train --help lists every group with slime's flags", "[cli]") {
  auto help = run_vime("train --help");
  CHECK(help.exit_code == 0);
  for (const char* text : {"Rollout [rollout]:", "--rollout-temperature FLOAT", "(default: 1.0)",
                           "--[no-]offload-train", "--custom-rm-path STR (alias --rm-plugin)",
                           "[not supported yet]", "[no effect in vime]", "--num-layers INT"}) {
    CHECK_THAT(help.output, Catch::Contains(text));
  }
  auto one = run_vime("train --help rollout");
  CHECK(one.exit_code == 0);
  CHECK_THAT(one.output,
             Catch::Contains("--rollout-temperature") && !Catch::Contains("--num-layers"));
}

TEST_CASE("usage errors are one line and exit 2", "[cli]") {
  for (const char* args :
       {"train --rollout-batch-size x", "train --rollout-temprature 1", "train --dry-run",
        "train --dry-run --rollout-batch-size 2 --num-rollout 1 --pipeline-model-parallel-size 4",
        "plugin inspect /nonexistent/libx.so", "plugin new --kind reward", "plugin frobnicate"}) {
    auto r = run_vime(args);
    INFO(args << " -> " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.output) == 1);
  }
}

TEST_CASE("plugin failures in a run are one line naming flag and file, exit 2", "[cli]") {
  vime::test::TempDir dir;
  auto text = dir.write("notes.so", "text");
  const std::string base = "train --dry-run --rollout-batch-size 2 --num-rollout 1 ";
  struct Case {
    std::string flags;
    std::string expected;
  };
  const Case cases[] = {
      {"--custom-rm-path /nonexistent/libx.so",
       "--custom-rm-path: /nonexistent/libx.so does not exist"},
      {"--rm-plugin " + text.string(), "is not a shared library"},
      {"--custom-rm-path " + plugin_path("not_vime"), "is not a vime plugin"},
      {"--custom-rm-path " + plugin_path("wrong_abi"), "was built for vime plugin ABI 999"},
      {"--custom-rm-path " + plugin_path("good_plugins") + ":nope", "has no plugin named 'nope'"},
      {"--custom-rm-path " + plugin_path("good_plugins") + ":keep_nonzero_std",
       "is a dynamic_filter plugin, but --custom-rm-path needs a reward plugin"},
  };
  for (const auto& c : cases) {
    auto r = run_vime(base + c.flags);
    INFO(c.flags << " -> " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(count_lines(r.output) == 1);
    CHECK_THAT(r.output, Catch::StartsWith("vime train: error: ") && Catch::Contains(c.expected));
  }
  auto ok = run_vime(base + "--custom-rm-path " + plugin_path("good_plugins") + ":contains_label");
  CHECK(ok.exit_code == 0);
  auto inspect = run_vime("plugin inspect " + plugin_path("good_plugins"));
  CHECK(inspect.exit_code == 0);
  CHECK_THAT(inspect.output, Catch::Contains("3 export(s)") &&
                                 Catch::Contains("keep_nonzero_std") &&
                                 Catch::Contains("dynamic_filter"));
}

TEST_CASE("slime's run-glm4-9B.sh resolves with its GLM-4 preset", "[cli]") {
  vime::test::TempDir dir;
  dir.write("GLM-Z1-9B-0414/config.json", "{}");
  dir.write("GLM-Z1-9B-0414_torch_dist/latest_checkpointed_iteration.txt", "release\n");
  dir.write("dapo-math-17k/dapo-math-17k.jsonl", "{\"prompt\": \"1+1\", \"label\": \"2\"}\n");
  dir.write("aime-2024/aime-2024.jsonl", "{\"prompt\": \"2+2\", \"label\": \"4\"}\n");
  auto resolved = run_command(std::string(VIME_SOURCE_DIR) + "/tests/cli/run_glm4_9b.sh " +
                              VIME_BIN + " " + dir.path().string());
  INFO(resolved.output);
  REQUIRE(resolved.exit_code == 0);
  Json config = vime::core::parse_yaml(resolved.output, "dry-run output");
  CHECK(config.at("model").at("num_layers").as_int() == 40);
  CHECK(config.at("model").at("rotary_percent").as_double() == 0.5);
  CHECK(config.at("model").at("post_self_attn_layernorm").as_bool());
  CHECK(config.at("parallel").at("context_parallel_size").as_int() == 2);
}

TEST_CASE("slime's run-qwen3-4B.sh: every flag is recognised", "[cli]") {
  // As written (TP 2 + sequence parallel, /root paths absent): refused only by naming what is
  // missing.
  auto refused = run_command(kRunQwen3 + " /nonexistent-root");
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(count_lines(refused.output) == 1);
  CHECK_THAT(refused.output,
             !Catch::Contains("not supported yet") &&
                 Catch::Contains("--hf-checkpoint /nonexistent-root/Qwen3-4B does not exist") &&
                 !Catch::Contains("unknown"));

  // With the inputs present, as written (TP 2, sequence parallel), it resolves.
  vime::test::TempDir dir;
  make_qwen3_inputs(dir);
  auto resolved = run_command(kRunQwen3 + " " + dir.path().string());
  INFO(resolved.output);
  REQUIRE(resolved.exit_code == 0);
  Json config = vime::core::parse_yaml(resolved.output, "dry-run output");
  CHECK(config.at("rollout").at("rollout_temperature").as_double() == 0.8);
  CHECK(config.at("rollout").at("hf_checkpoint").as_string() == dir.path().string() + "/Qwen3-4B");
  CHECK(config.at("model").at("num_layers").as_int() == 36);
  CHECK(config.at("model").at("add_bias_linear").as_bool() == false);
  CHECK(config.at("algorithm").at("eps_clip_high").as_double() == 0.28);
  CHECK(config.at("data").at("global_batch_size").as_int() == 256);
  CHECK(config.at("parallel").at("tensor_model_parallel_size").as_int() == 2);
  CHECK(config.at("vllm_passthrough").at("--vllm-gpu-memory-utilization").as_string() == "0.7");
  auto no_effect = config.at("no_effect").dump();
  CHECK_THAT(no_effect, Catch::Contains("--attention-backend flash") &&
                            Catch::Contains("--attention-softmax-in-fp32"));

  // The dry-run output is itself a --config file that resolves to the same configuration.
  auto yaml = dir.write("resolved.yaml", resolved.output);
  auto again = run_vime("train --dry-run --config " + yaml.string());
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  Json config_again = vime::core::parse_yaml(again.output, "second dry-run output");
  for (const auto& [group, values] : config.as_object()) {
    if (group == "custom_config" || group == "warnings") continue;
    INFO(group);
    CHECK(config_again.at(group) == values);
  }
}

TEST_CASE("on a GPU machine the CUDA LibTorch build sees the GPUs", "[gpu]") {
  auto info = vime::core::runtime_info();
  if (!info.cuda_available) VIME_SKIP(vime::test::kNoCuda);
  CHECK(info.cuda_device_count >= 1);
  auto version = run_vime("--version");
  CHECK_THAT(version.output, Catch::Contains("CUDA available"));
}

TEST_CASE("every scripts/models preset works as in slime: source it, pass MODEL_ARGS", "[cli]") {
  vime::test::TempDir dir;
  auto script = dir.write(
      "presets.sh",
      std::string(R"sh(set -e
for preset in )sh") +
          VIME_SOURCE_DIR +
          R"sh(/scripts/models/*.sh; do
  unset MODEL_ARGS
  source "$preset"
  out=$()sh" VIME_BIN
          R"sh( train --dry-run --rollout-batch-size 2 --num-rollout 1 "${MODEL_ARGS[@]}") || {
    echo "FAILED: $preset"; exit 1; }
  echo "$out" | grep -q '^  num_layers: [0-9]' || { echo "no num_layers: $preset"; exit 1; }
  echo "ok $(basename "$preset")"
done
)sh");
  auto r = run_command("bash " + script.string());
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(count_lines(r.output) >= 10);
}
