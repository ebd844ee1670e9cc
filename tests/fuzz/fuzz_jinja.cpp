// Chat templates (a model's tokenizer_config.json): a template parses and renders a fixed
// conversation, or throws ChatTemplateError / vime::Error; loops and recursion stay bounded.
#include <string>

#include "fuzz_harness.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"
#include "vime/tokenizer/chat_template.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Nested loops over sandbox-sized ranges are legal and slow, not a bug: one range per template.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const size_t first = text.find("range");
      first != std::string_view::npos && text.find("range", first + 1) != std::string_view::npos)
    return 0;
  static const vime::Json messages = vime::Json::parse(
      R"([{"role":"system","content":"Be brief."},{"role":"user","content":"1+1?"},
          {"role":"assistant","content":"2","tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]},
          {"role":"tool","content":"ok"}])");
  try {
    const auto t = vime::tokenizer::ChatTemplate::from_string(
        std::string(reinterpret_cast<const char*>(data), size),
        vime::Json::Object{{"bos_token", "<s>"}, {"eos_token", "</s>"}});
    (void)t.render(messages, nullptr, true, vime::Json::object());
  } catch (const vime::Error&) {
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"{{",
          "}}",
          "{%",
          "%}",
          "{#",
          "#}",
          "{%-",
          "-%}",
          " for m in messages ",
          " endfor ",
          " if ",
          " elif ",
          " else ",
          " endif ",
          " set x = ",
          " macro f(a) ",
          " endmacro ",
          " call ",
          " filter upper ",
          " endfilter ",
          "|tojson",
          "|length",
          "|join(',')",
          "|replace('a','b')",
          "|trim",
          "[::-1]",
          "[1:2]",
          "loop.index",
          "m['content']",
          "m.role",
          "raise_exception('x')",
          "namespace(a=1)",
          "range(1000000)",
          "'a' * 99999999",
          "9999999999999999999",
          "1/0",
          "x.y.z",
          "(",
          ")",
          "[",
          "]",
          "~",
          "recursive",
          "loop(x)"};
}
