#include "retool_text.hpp"

#include <array>
#include <utility>
#include <vector>

#include "common/py_text.hpp"
#include "vime/json.hpp"
#include "vime/regex.hpp"

namespace retool {
namespace {

using vime::Regex;

constexpr std::string_view kSystemPrompt =
    "You are a helpful assistant that can use Python tools to solve mathematical problems. When "
    "you need to perform calculations, use the code_interpreter tool to execute code and get "
    "results.";
// ToolRegistry's code_interpreter spec through Jinja2's tojson (sort_keys=True).
constexpr std::string_view kToolJson =
    R"({"function": {"description": "A tool for executing Python code in a safe sandbox )"
    R"(environment.", "name": "code_interpreter", "parameters": {"properties": {"code": )"
    R"({"description": "The Python code to execute", "type": "string"}}, "required": ["code"], )"
    R"("type": "object"}}, "type": "function"})";
constexpr std::string_view kToolsHeader =
    "\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are "
    "provided with function signatures within <tools></tools> XML tags:\n<tools>";
constexpr std::string_view kToolsFooter =
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, "
    "\"arguments\": <args-json-object>}\n</tool_call>\n<|im_end|>";

// _check_code_safety's patterns, searched in this order with re.IGNORECASE.
constexpr std::array<std::string_view, 31> kDangerousPatterns = {
    R"(import\s+os)",     R"(import\s+sys)",      R"(import\s+subprocess)",
    R"(import\s+shutil)", R"(import\s+glob)",     R"(import\s+pathlib)",
    R"(__import__)",      R"(eval\s*\()",         R"(exec\s*\()",
    R"(open\s*\()",       R"(file\s*\()",         R"(input\s*\()",
    R"(raw_input\s*\()",  R"(compile\s*\()",      R"(execfile\s*\()",
    R"(getattr\s*\()",    R"(setattr\s*\()",      R"(delattr\s*\()",
    R"(hasattr\s*\()",    R"(globals\s*\()",      R"(locals\s*\()",
    R"(vars\s*\()",       R"(dir\s*\()",          R"(type\s*\()",
    R"(isinstance\s*\()", R"(issubclass\s*\()",   R"(super\s*\()",
    R"(property\s*\()",   R"(staticmethod\s*\()", R"(classmethod\s*\()",
    R"(__\w+__)",
};
constexpr std::array<std::string_view, 10> kAllowedModules = {
    "math",      "random",   "datetime",   "collections", "itertools",
    "functools", "operator", "statistics", "decimal",     "fractions"};

constexpr std::string_view kWrapperHead = R"PY(import sys
import traceback
from io import StringIO
import resource

# Set memory limit (4GB)
try:
    resource.setrlimit(resource.RLIMIT_AS, (4 * 1024 * 1024 * 1024, -1))
except Exception:
    pass

# Redirect stdout and stderr
old_stdout = sys.stdout
old_stderr = sys.stderr
stdout_capture = StringIO()
stderr_capture = StringIO()
sys.stdout = stdout_capture
sys.stderr = stderr_capture

try:
    # User code
)PY";
constexpr std::string_view kWrapperTail = R"PY(
    
    # Get output
    stdout_output = stdout_capture.getvalue()
    stderr_output = stderr_capture.getvalue()
    
    # Restore standard output
    sys.stdout = old_stdout
    sys.stderr = old_stderr
    
    # Return result
    result = ""
    if stdout_output:
        result += f"Output:\n{stdout_output}"
    if stderr_output:
        result += f"\nErrors:\n{stderr_output}"
    
    print(result)
    
except Exception as e:
    # Restore standard output
    sys.stdout = old_stdout
    sys.stderr = old_stderr
    
    # Return error information
    error_msg = f"Error: {str(e)}\nTraceback:\n{traceback.format_exc()}"
    print(error_msg))PY";

// A code_interpreter call's code, as slime's try block reads it: nullopt where Python raises (and
// slime's except passes) or the code is blank.
std::optional<std::string> tool_call_code(std::string json_text) {
  json_text = vime::rm::replace_all(json_text, "\n", "\\n");
  vime::Json call;
  try {
    call = vime::Json::parse(json_text);
  } catch (const std::exception&) {
    return std::nullopt;  // JSONDecodeError
  }
  if (!call.is_object()) return std::nullopt;  // .get on a list: AttributeError
  const vime::Json* name = call.find("name");
  const vime::Json* arguments = call.find("arguments");
  if (!name || !name->is_string() || name->as_string() != "code_interpreter") return std::nullopt;
  if (!arguments) return std::nullopt;  // {}.get("code", "") is "": blank
  if (!arguments->is_object()) return std::nullopt;
  const vime::Json* code = arguments->find("code");
  if (!code || !code->is_string()) return std::nullopt;  // "" is blank; .strip() on others raises
  if (python_strip(code->as_string()).empty()) return std::nullopt;
  return code->as_string();
}

// str.isspace(): Unicode White_Space plus the four ASCII separators \x1c-\x1f.
bool python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The code point that starts at byte i and its length; invalid UTF-8 is one non-space byte.
std::pair<char32_t, size_t> code_point_at(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return {0xFFFD, 1};
  char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return {0xFFFD, 1};
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  return {cp, n};
}

}  // namespace

std::string python_strip(std::string_view text) {
  size_t begin = 0;
  while (begin < text.size()) {
    const auto [cp, n] = code_point_at(text, begin);
    if (!python_space(cp)) break;
    begin += n;
  }
  size_t end = begin, last_non_space = begin;
  while (end < text.size()) {
    const auto [cp, n] = code_point_at(text, end);
    end += n;
    if (!python_space(cp)) last_non_space = end;
  }
  return std::string(text.substr(begin, last_non_space - begin));
}

const char* const kInvalidAction =
    "\nMy previous action is invalid. If I want to execute code, I should put the code between "
    "<code> and </code>. If I want to give the final answer, I should use the format "
    "'Answer: \\boxed{answer}'. Let me try again.\n";

std::string format_prompt(std::string_view user_prompt) {
  std::string out = "<|im_start|>system";
  out += kSystemPrompt;
  out += kToolsHeader;
  out += kToolJson;
  out += kToolsFooter;
  if (!user_prompt.empty()) {
    out += "\n<|im_start|>user";
    out += user_prompt;
    out += "<|im_end|>";
  }
  out += "\n<|im_start|>assistant";
  return out;
}

Action postprocess_predictions(std::string_view prediction) {
  static const Regex answer(R"((?s)Answer:\s*\\boxed\{((?:[^{}]|\{[^{}]*\})*)\})");
  static const Regex tool_call(R"((?s)<tool_call>\s*(\{.*?\})\s*</tool_call>)");
  static const Regex code(R"((?s)<code>(.*?)</code>)");
  static const Regex python_block(R"((?s)```python\s*(.*?)\s*```)");
  if (auto m = answer.search(prediction)) {
    return {Action::kAnswer, python_strip((*m)[1].value_or(""))};
  }
  if (auto m = tool_call.search(prediction)) {
    if (auto c = tool_call_code((*m)[1].value_or(""))) return {Action::kCode, *c};
  }
  if (auto m = code.search(prediction)) return {Action::kCode, python_strip((*m)[1].value_or(""))};
  if (auto m = python_block.search(prediction)) {
    return {Action::kCode, python_strip((*m)[1].value_or(""))};
  }
  return {};
}

std::optional<std::string> unsafe_code_reason(std::string_view code) {
  static const std::vector<Regex> dangerous = [] {
    std::vector<Regex> out;
    for (auto p : kDangerousPatterns) out.emplace_back(p, vime::RegexOptions{true});
    return out;
  }();
  for (size_t i = 0; i < dangerous.size(); ++i) {
    if (dangerous[i].matches_anywhere(code)) {
      return "Code contains dangerous pattern: " + std::string(kDangerousPatterns[i]);
    }
  }
  static const Regex import_name(R"(import\s+(\w+))");
  static const Regex from_name(R"(from\s+(\w+))");
  auto names = import_name.findall(code);
  for (auto& name : from_name.findall(code)) names.push_back(std::move(name));
  for (const auto& name : names) {
    bool allowed = false;
    for (auto module : kAllowedModules) allowed = allowed || name == module;
    if (!allowed) return "Import of '" + name + "' is not allowed";
  }
  return std::nullopt;
}

std::string wrap_code(std::string_view code) {
  std::string out(kWrapperHead);
  size_t start = 0;
  for (;;) {  // "\n".join("    " + line for line in code.split("\n"))
    const size_t end = code.find('\n', start);
    out += "    ";
    out += code.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (end == std::string_view::npos) break;
    out += '\n';
    start = end + 1;
  }
  out += kWrapperTail;
  return out;
}

}  // namespace retool
