// safetensors headers and model.safetensors.index.json: the parse either validates every tensor's
// dtype, shape and offsets against the file's size or throws vime::Error; index files name only
// plain files of the checkpoint directory.
#include <cstring>
#include <string>

#include "fuzz_harness.hpp"
#include "vime/ckpt/safetensors_header.hpp"
#include "vime/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = vime::ckpt::parse_safetensors_header(data, size, "fuzz");
    for (const auto& e : header.entries) {
      if (e.begin < 0 || e.end < e.begin || 8 + header.header_bytes + uint64_t(e.end) > size)
        __builtin_trap();  // an accepted tensor outside the file
    }
  } catch (const vime::Error&) {
  }
  try {
    for (const auto& name : vime::ckpt::safetensors_index_files(
             std::string_view(reinterpret_cast<const char*>(data), size), "fuzz")) {
      if (name.find('/') != std::string::npos || name == ".." || name.empty()) __builtin_trap();
    }
  } catch (const vime::Error&) {
  }
  return 0;
}

std::vector<std::string> fuzz_dictionary() {
  return {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
          "\"dtype\"",
          "\"shape\"",
          "\"data_offsets\"",
          "\"__metadata__\"",
          "\"F32\"",
          "\"BF16\"",
          "\"BOOL\"",
          "\"I64\"",
          "9223372036854775807",
          "4611686018427387904",
          "-1",
          "[0,0]",
          "{\"weight_map\":{\"w\":\"model-00001-of-00002.safetensors\"}}",
          "\"../x\"",
          "\"/etc\"",
          std::string("\x10\0\0\0\0\0\0\0", 8),
          std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8)};
}
