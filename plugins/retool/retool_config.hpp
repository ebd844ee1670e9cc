// retool's settings: slime's TOOL_CONFIGS keys, read from --custom-config-path, with slime's
// defaults, plus the sandbox's own (vime's; slime's sandbox has no such limits).
#pragma once

#include <cstdint>
#include <string>

#include "vime/args.hpp"
#include "vime/code_sandbox.hpp"
#include "vime/json.hpp"

namespace retool {

struct RetoolConfig {
  int64_t max_turns = 16;           // engine calls per sample
  int64_t max_tool_calls = 16;      // code runs per sample
  bool python_safety_check = true;  // slime's _check_code_safety before running the code
  vime::Json python_timeout = vime::Json(120);  // seconds, as given: it is printed in a message
  vime::CodeSandboxOptions sandbox;             // tool_concurrency, python_* limits, sandbox_*

  // Throws vime::UsageError naming the key on a bad value.
  static RetoolConfig from(const vime::Args& args);
  // Identifies the sandbox settings (one Sandbox per distinct value, kept for the process).
  std::string sandbox_key() const;
};

// "4GB", "512MB", "64KB", "100" (bytes): slime's python_memory_limit spelling, powers of 1024.
int64_t parse_byte_size(const std::string& key, const vime::Json& value);

}  // namespace retool
