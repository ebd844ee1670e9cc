// safetensors (HF's tensor file format) read and write, without a library: an 8-byte little-endian
// header length, a JSON header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {str: str}}, then the raw little-endian data. Files are memory-mapped; every
// offset, dtype and shape is validated, and errors name the file and the tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vime::ckpt {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class SafetensorsFile {
 public:
  // Maps and validates the whole header; throws vime::Error naming the file (and tensor).
  explicit SafetensorsFile(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(SafetensorsFile&&) noexcept;

  const std::filesystem::path& path() const;
  std::vector<std::string> names() const;  // in file order
  bool contains(const std::string& name) const;
  // A CPU tensor viewing the mapping (copy-on-write: writing to it never touches the file). It
  // keeps the mapping alive after this object is gone.
  at::Tensor get(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes one file atomically (temp file, then rename). Tensors may be on any device and of
// F32, BF16, F16, F64, I64, I32, I16, I8, U8 or BOOL.
void write_safetensors(const std::filesystem::path& path, const NamedTensors& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// HF's layout in a directory: model.safetensors, or model-0000i-of-0000N.safetensors shards plus
// model.safetensors.index.json when the tensors exceed `max_shard_bytes`.
void write_safetensors_dir(const std::filesystem::path& dir, const NamedTensors& tensors,
                           int64_t max_shard_bytes = int64_t{5} << 30);
// Reads model.safetensors or the sharded index (or, without either, every *.safetensors file).
NamedTensors read_safetensors_dir(const std::filesystem::path& dir);
bool has_safetensors(const std::filesystem::path& dir);

}  // namespace vime::ckpt
