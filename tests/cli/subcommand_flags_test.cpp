// Every subcommand parses its flags from its table (lib/vime/core/flags/<command>_command.cpp)
// through the one parser: --help lists the table, an unknown flag and a missing required flag are
// one line naming the flag, exit 2.
#include <catch2/catch.hpp>

#include "support/test_support.hpp"

using vime::test::count_lines;
using vime::test::run_vime;

namespace {

void check_usage_error(const std::string& args, const std::string& expected) {
  auto r = run_vime(args);
  INFO(args << " -> " << r.output);
  CHECK(r.exit_code == 2);
  CHECK(count_lines(r.output) == 1);
  CHECK_THAT(r.output, Catch::Contains(expected));
}

}  // namespace

TEST_CASE("each subcommand's --help lists its flags from the table", "[cli]") {
  struct Case {
    const char* args;
    std::vector<const char*> expected;
  };
  const Case cases[] = {
      {"tokenize --help",
       {"usage: vime tokenize encode", "MODE {encode,decode,chat}", "--tokenizer STR", "(required)",
        "--add-special-tokens"}},
      {"logprobs --help",
       {"usage: vime logprobs", "--max-tokens-per-batch INT", "(default: 8192)",
        "--dtype {float32,bfloat16}", "--ckpt-step INT"}},
      {"reward --help",
       {"--rm-type TYPE", "vime reward [reward_file]:", "--workers INT", "--input STR",
        "Reward [reward]:"}},
      {"convert-hf --help",
       {"vime convert-hf --input-dir", "--origin-hf-dir STR", "--force (alias -f)", "--save STR"}},
      {"serve --help",
       {"usage: vime serve MODEL_DIR", "  MODEL_DIR", "--max-num-seqs INT",
        "--tensor-parallel-size INT (alias -tp)", "--gpu-memory-utilization FLOAT",
        "--swap-space STR", "[no effect in vime]", "--rollout-temperature FLOAT"}},
      {"plugin --help", {"usage: vime plugin inspect", "COMMAND {inspect,new}", "--kind STR"}},
  };
  for (const auto& c : cases) {
    auto r = run_vime(c.args);
    INFO(c.args << " -> " << r.output);
    CHECK(r.exit_code == 0);
    for (const char* text : c.expected) CHECK_THAT(r.output, Catch::Contains(text));
  }
  // Each lists its own flags only: eval the groups an eval rollout reads, not training's.
  const auto eval = run_vime("eval --help");
  CHECK_THAT(eval.output, Catch::Contains("--eval-max-response-len") &&
                              Catch::Contains("--rm-type") && !Catch::Contains("--lr ") &&
                              !Catch::Contains("--advantage-estimator") &&
                              !Catch::Contains("--tensor-model-parallel-size"));
  CHECK_THAT(run_vime("reward --help").output, !Catch::Contains("--rollout-temperature"));
  CHECK_THAT(run_vime("convert-hf --help").output,
             Catch::Contains("--num-layers") && !Catch::Contains("--rollout-temperature"));
  CHECK_THAT(run_vime("serve --help").output, !Catch::Contains("--advantage-estimator"));
  auto group = run_vime("serve --help serve");
  CHECK_THAT(group.output,
             Catch::Contains("--max-model-len") && !Catch::Contains("--rollout-temperature"));
}

TEST_CASE("an unknown flag to any subcommand is one line naming it, exit 2", "[cli]") {
  check_usage_error("tokenize encode --tokeniser x --input y --output z",
                    "unknown flag --tokeniser; did you mean --tokenizer?");
  check_usage_error("tokenize decode --add-special-tokens --tokenizer x --input y --output z",
                    "--add-special-tokens");
  check_usage_error("logprobs --hf-checkpoint m --input x --output y --temprature 1",
                    "unknown flag --temprature; did you mean --temperature?");
  check_usage_error("reward --rm-type math --input x --output y --wokers 2",
                    "unknown flag --wokers; did you mean --workers?");
  check_usage_error("convert-hf --input-dir a --output-dir b --origin-hf-dir c --forse",
                    "unknown flag --forse; did you mean --force?");
  check_usage_error("convert-hf --hf-checkpoint a --save b --num-layer 2",
                    "unknown flag --num-layer");
  check_usage_error("serve /nonexistent --max-model-length 8", "unknown flag --max-model-length");
  check_usage_error("plugin new --kind reward --ouput d x", "unknown flag --ouput");
  check_usage_error("eval --rollout-temprature 1", "unknown flag --rollout-temprature");
  // Suggestions come from the command's own table, and only when close.
  check_usage_error("eval --bogus", "vime eval: error: unknown flag --bogus (vime eval --help");
  check_usage_error("convert --bogus", "unknown flag --bogus (vime convert-hf --help");
  check_usage_error("eval --lr 1", "unknown flag --lr");
  check_usage_error("reward --rollout-temperature 1", "unknown flag --rollout-temperature");
}

TEST_CASE("--help with an unknown group lists the groups, exit 2", "[cli]") {
  check_usage_error("train --help nosuch",
                    "--help nosuch: no such flag group; vime train has general, cluster, rollout");
  check_usage_error("eval --help optimizer", "vime eval has general, rollout, data, reward, eval");
}

TEST_CASE("errors carry the command's prefix once", "[cli]") {
  check_usage_error("plugin inspect /nonexistent/x.so",
                    "vime plugin: error: /nonexistent/x.so does not exist");
  check_usage_error("serve", "vime serve: error: no model: vime serve MODEL_DIR");
  check_usage_error("retrieve serve", "vime retrieve: error: serve needs --corpus");
}

TEST_CASE("a required flag left out is one line naming it, exit 2", "[cli]") {
  check_usage_error("tokenize encode --input x --output y", "--tokenizer is required");
  check_usage_error("logprobs --hf-checkpoint m", "--input and --output are required");
  check_usage_error("reward --rm-type math --input x", "--output is required");
  check_usage_error("convert-hf --input-dir x", "--output-dir and --origin-hf-dir are required");
  check_usage_error("convert-hf --save x", "--hf-checkpoint is required");
  check_usage_error("plugin inspect", "TARGET is required");
  check_usage_error("eval --hf-checkpoint m", "no eval dataset: pass --dataset");
}

TEST_CASE("a mode word of its own table: tokenize and plugin with nothing print the usage, exit 2",
          "[cli]") {
  for (const char* command : {"tokenize", "plugin"}) {
    auto r = run_vime(command);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.output, Catch::StartsWith(std::string("usage: vime ") + command));
  }
  check_usage_error("tokenize frobnicate --tokenizer x --input y --output z",
                    "MODE: 'frobnicate' is not one of encode, decode, chat");
}
