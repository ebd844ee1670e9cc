// slime's PythonSandbox.execute_code on vime's sandbox (<vime/code_sandbox.hpp>): the safety check,
// the wrapper script, and the interpreter's text for each way a run can end.
#pragma once

#include <string>

#include "retool_config.hpp"

namespace retool {

struct CodeRun {
  std::string text;        // what goes between <interpreter> and </interpreter>
  bool ran = false;        // the sandbox ran it (not refused by the safety check)
  bool timed_out = false;  // killed at python_timeout
  double seconds = 0;
};

// Runs `code` (already stripped) as slime does: "Error: <reason>" when the safety check refuses
// it; the wrapper's stdout, stripped, when it exits 0; "Error: Process exited with code
// N\n<stderr>" otherwise (N negative for a signal, as Python's returncode); "Error: Code execution
// timed out after T seconds" at the timeout. Output beyond python_max_output_bytes ends in a note
// saying so. The first call with given sandbox settings starts the process's Sandbox for them (and
// throws vime::UsageError where this machine cannot isolate code as they ask).
CodeRun execute_code(const RetoolConfig& config, const std::string& code);

// execute_predictions: what follows a model turn.
struct Observation {
  std::string text;        // appended with loss mask 0; empty when done
  bool done = false;       // the turn gave its answer
  bool tool_call = false;  // an <interpreter> block (slime's tool_call_count counts these)
  CodeRun run;
};
// "Answer: \\boxed{..}": done; code: "\n\n<interpreter>\n<text>\n</interpreter>\n\n" (blank code:
// "Error: No Python code found"); no action: kInvalidAction.
Observation execute_prediction(const RetoolConfig& config, const std::string& turn);

// Bytes that are not UTF-8 become U+FFFD (Python's errors="replace"), as does a sequence the
// output cap cut in two.
std::string valid_utf8(std::string_view bytes);

}  // namespace retool
