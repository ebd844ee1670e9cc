// slime's retool text, byte for byte (examples/retool/generate_with_retool.py, tool_sandbox.py):
// the tool prompt, the action parser, the code safety check and the code wrapper.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace retool {

// format_conversation_with_tools(prompt, tools=[code_interpreter]) as slime's Jinja2 template
// renders it (its whitespace control glues "<|im_start|>system" to the system text, and the
// trailing newline of the template is dropped, as Jinja2 does by default). An empty prompt has no
// user turn.
std::string format_prompt(std::string_view user_prompt);

struct Action {
  enum Kind { kNone, kAnswer, kCode } kind = kNone;
  std::string content;
};
// postprocess_predictions: "Answer: \\boxed{...}" first, then a code_interpreter <tool_call>, then
// <code>...</code>, then ```python ... ```; the first match of each, stripped (a tool call's code
// is not).
Action postprocess_predictions(std::string_view prediction);

// PythonSandbox._check_code_safety: "Code contains dangerous pattern: <pattern>" or "Import of
// '<name>' is not allowed"; nullopt for code it lets through. Where several imports are refused,
// slime names one in set order (hash-randomised); vime names the first in the code.
std::optional<std::string> unsafe_code_reason(std::string_view code);

// execute_code's wrapper script around the user's code (indented into a try block).
std::string wrap_code(std::string_view code);

// Python's str.strip(): every character str.isspace() accepts (U+00A0, U+3000, ... as well as
// ASCII whitespace), from both ends.
std::string python_strip(std::string_view text);

// execute_predictions' text for a turn with no action.
extern const char* const kInvalidAction;

}  // namespace retool
