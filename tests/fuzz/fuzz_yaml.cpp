// YAML config files (--config, --eval-config, --vllm-config): parse_yaml returns JSON or throws
// vime::Error naming the file; nothing else escapes.
#include <string_view>

#include "fuzz_harness.hpp"
#include "vime/core/yaml_json.hpp"
#include "vime/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const vime::Json value =
        vime::core::parse_yaml(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)value.dump();
  } catch (const vime::Error&) {
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {":",           " ",        "\n",   "- ",
          "  ",          "{",        "}",    "[",
          "]",           "&a",       "*a",   "<<: *a",
          "!!str",       "!!binary", "---",  "...",
          "|",           ">",        "\"",   "'",
          "#",           "~",        "null", "1e9",
          ".inf",        "0x1F",     "? ",   "eval:\n  datasets:\n    - name: x\n",
          "key: value\n"};
}
