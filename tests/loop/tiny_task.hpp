// The tiny arithmetic task (make_arith_task: a 2-layer Qwen3 in HF format + JSONL data) shared by
// the `vime train` end-to-end tests; made once per test binary run (~1 s).
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace vime::test {

inline const std::filesystem::path& tiny_arith_task() {
  static TempDir dir;
  static bool made = false;
  if (!made) {
    auto r = run_command(std::string(VIME_MAKE_ARITH_TASK_BIN) + " --out " + dir.path().string() +
                         " --num-train 256 --num-test 16 --hidden-size 64 --num-layers 2"
                         " --head-dim 16 --intermediate-size 128");
    REQUIRE(r.exit_code == 0);
    made = true;
  }
  return dir.path();
}

// `vime train` flags for GRPO on the tiny task: 4 prompts x 4 samples, one step of 16, 8 new
// tokens, learning rate `lr`.
inline std::string tiny_grpo_flags(const std::string& lr) {
  const auto t = tiny_arith_task().string();
  return "--hf-checkpoint " + t + "/model --prompt-data " + t +
         "/data/train.jsonl --input-key input --label-key label --rm-type math"
         " --advantage-estimator grpo --rollout-batch-size 4 --n-samples-per-prompt 4"
         " --global-batch-size 16 --rollout-max-response-len 8 --lr " +
         lr + " ";
}

}  // namespace vime::test
