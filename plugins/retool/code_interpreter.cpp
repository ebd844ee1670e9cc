#include "code_interpreter.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "common/py_value.hpp"
#include "retool_text.hpp"
#include "vime/code_sandbox.hpp"
#include "vime/error.hpp"

namespace retool {
namespace {

const vime::CodeSandbox& sandbox_for(const RetoolConfig& config) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<vime::CodeSandbox>> sandboxes;
  std::lock_guard lock(mutex);
  auto& slot = sandboxes[config.sandbox_key()];
  if (!slot) {
    slot = std::make_unique<vime::CodeSandbox>(config.sandbox);
    std::fprintf(stderr, "retool: code sandbox %s, isolation %s\n", slot->python().c_str(),
                 slot->isolation_name());
  }
  return *slot;
}

std::string kept_output(const std::string& text, int64_t bytes) {
  std::string out = valid_utf8(text);
  if (bytes > static_cast<int64_t>(text.size())) {
    out += "\n[output truncated: the first " + std::to_string(text.size()) + " of " +
           std::to_string(bytes) + " bytes]";
  }
  return out;
}

// The length of the UTF-8 sequence at s[i], 0 when it is not a valid one.
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  if (c >= 0xE0 && c <= 0xEF) n = 3;
  if (c >= 0xF0 && c <= 0xF4) n = 4;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;  // overlong
  if (c == 0xED && b(i + 1) > 0x9F) return 0;  // surrogates
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;  // overlong
  if (c == 0xF4 && b(i + 1) > 0x8F) return 0;  // > U+10FFFF
  return n;
}

}  // namespace

std::string valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t n = utf8_sequence(bytes, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(bytes.substr(i, n));
      i += n;
    }
  }
  return out;
}

CodeRun execute_code(const RetoolConfig& config, const std::string& code) {
  CodeRun run;
  if (config.python_safety_check) {
    if (auto why = unsafe_code_reason(code)) {
      run.text = "Error: " + *why;
      return run;
    }
  }
  const auto& sandbox = sandbox_for(config);
  vime::CodeSandboxRun r;
  try {
    r = sandbox.run_python(wrap_code(code));
  } catch (const vime::Error& e) {
    run.text = std::string("Error: Failed to execute code: ") + e.what();
    return run;
  }
  run.ran = true;
  run.seconds = r.seconds;
  if (r.timed_out) {
    run.timed_out = true;
    run.text = "Error: Code execution timed out after " +
               vime::rm::python_str(config.python_timeout) + " seconds";
  } else if (r.exit_code == 0) {
    run.text = python_strip(kept_output(r.stdout_text, r.stdout_bytes));
  } else {
    const int returncode = r.exit_code ? *r.exit_code : -r.signal.value_or(0);
    run.text = "Error: Process exited with code " + std::to_string(returncode) + "\n" +
               kept_output(r.stderr_text, r.stderr_bytes);
  }
  return run;
}

Observation execute_prediction(const RetoolConfig& config, const std::string& turn) {
  const Action action = postprocess_predictions(turn);
  if (action.kind == Action::kAnswer) return {"", true, false, {}};
  if (action.kind == Action::kNone) return {kInvalidAction, false, false, {}};
  const std::string code = python_strip(action.content);
  if (code.empty()) {
    return {"\n\n<interpreter>\nError: No Python code found\n</interpreter>\n\n", false, true, {}};
  }
  CodeRun run = execute_code(config, code);
  return {"\n\n<interpreter>\n" + run.text + "\n</interpreter>\n\n", false, true, std::move(run)};
}

}  // namespace retool
