// JSON and JSONL (prompt files, request bodies, config): every line parses or throws vime::Error;
// what parses dumps to text that parses back to the same value.
#include <string_view>

#include "fuzz_harness.hpp"
#include "vime/error.hpp"
#include "vime/json.hpp"

namespace {

void check(std::string_view text) {
  vime::Json value;
  try {
    value = vime::Json::parse(text, "fuzz");
  } catch (const vime::Error&) {
    return;
  }
  // Dumped text parses back to the same dump (compared as text: NaN != NaN as a value).
  const std::string dumped = value.dump();
  if (vime::Json::parse(dumped, "dump").dump() != dumped) __builtin_trap();  // round trip broke
  (void)value.dump(2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text);
  for (size_t start = 0; start < text.size();) {  // as JSONL
    const size_t end = std::min(text.find('\n', start), text.size());
    if (end > start) check(text.substr(start, end - start));
    start = end + 1;
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"{",
          "}",
          "[",
          "]",
          "\"",
          ":",
          ",",
          "true",
          "false",
          "null",
          "1e308",
          "-0",
          "1e-400",
          "\\u0000",
          "\\ud800",
          "\\udc00",
          "9223372036854775808",
          "-9223372036854775809",
          "0.1",
          "\"prompt\"",
          "\"label\"",
          "\"metadata\"",
          "NaN",
          "Infinity",
          "\n"};
}
