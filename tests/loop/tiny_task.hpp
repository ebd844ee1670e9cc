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

}  // namespace vime::test
