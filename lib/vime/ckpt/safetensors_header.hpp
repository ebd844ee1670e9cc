// The parts of a safetensors file and of model.safetensors.index.json that come from outside and
// are read before any tensor: the header (8-byte little-endian length, then JSON
// {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}) and the
// index's weight_map. Every size, offset and name is validated here, without LibTorch, so the
// fuzzers and the sanitizer build check exactly what SafetensorsFile runs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vime::ckpt {

struct SafetensorsEntry {
  std::string name;
  std::string dtype;       // "F32", "BF16", ... (one of safetensors_dtype_size's)
  int64_t dtype_size = 0;  // bytes per element
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0;  // byte offsets into the data after the header
};

struct SafetensorsHeader {
  uint64_t header_bytes = 0;              // the JSON's length: the data starts at 8 + header_bytes
  std::vector<SafetensorsEntry> entries;  // sorted by begin; no two overlap
  std::map<std::string, std::string> metadata;
};

// Bytes per element of a safetensors dtype name; 0 for one vime does not read.
int64_t safetensors_dtype_size(std::string_view dtype);

// Parses and validates the header of a `file_size`-byte file whose first bytes are `bytes` (at
// least min(file_size, 8 + header length) of them). Throws vime::Error starting with `where`.
SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, uint64_t file_size,
                                           const std::string& where);

// The shard files model.safetensors.index.json's weight_map names, sorted and distinct; each a
// plain file name (no directory part). Throws vime::Error starting with `where`.
std::vector<std::string> safetensors_index_files(std::string_view index_json,
                                                 const std::string& where);

}  // namespace vime::ckpt
