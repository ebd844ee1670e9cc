#include "vime/ckpt/safetensors_header.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "vime/error.hpp"
#include "vime/json.hpp"

namespace vime::ckpt {

int64_t safetensors_dtype_size(std::string_view dtype) {
  struct Size {
    std::string_view name;
    int64_t bytes;
  };
  static constexpr Size kSizes[] = {{"F32", 4}, {"BF16", 2}, {"F16", 2}, {"F64", 8}, {"I64", 8},
                                    {"I32", 4}, {"I16", 2},  {"I8", 1},  {"U8", 1},  {"BOOL", 1}};
  for (const auto& s : kSizes)
    if (s.name == dtype) return s.bytes;
  return 0;
}

SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, uint64_t file_size,
                                           const std::string& where) {
  auto fail = [&](const std::string& what) -> void {
    throw Error(where + ": " + what + " (a corrupt or truncated safetensors file?)");
  };
  if (file_size < 8) {
    fail("file is " + std::to_string(file_size) + " bytes, shorter than the 8-byte header length");
  }
  SafetensorsHeader out;
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | bytes[i];
  if (header_len > file_size - 8) {
    fail("header length " + std::to_string(header_len) + " runs past the end of the " +
         std::to_string(file_size) + "-byte file");
  }
  out.header_bytes = header_len;
  std::string_view header_text(reinterpret_cast<const char*>(bytes + 8), header_len);
  Json header = Json::parse(header_text, where + " (safetensors header)");
  if (!header.is_object()) fail("header is not a JSON object");
  const auto data_size = static_cast<int64_t>(file_size - 8 - header_len);
  for (const auto& [name, info] : header.as_object()) {
    if (name == "__metadata__") {
      if (!info.is_object()) fail("__metadata__ is not an object");
      for (const auto& [k, v] : info.as_object())
        out.metadata[k] = v.is_string() ? v.as_string() : v.dump();
      continue;
    }
    auto bad = [&](const std::string& what) { fail("tensor \"" + name + "\": " + what); };
    if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
        !info.contains("data_offsets")) {
      bad("needs dtype, shape and data_offsets");
    }
    SafetensorsEntry e;
    e.name = name;
    if (!info.at("dtype").is_string()) bad("dtype is not a string");
    e.dtype = info.at("dtype").as_string();
    e.dtype_size = safetensors_dtype_size(e.dtype);
    if (e.dtype_size == 0) bad("unsupported dtype " + info.at("dtype").dump());
    const Json& shape = info.at("shape");
    if (!shape.is_array()) bad("shape is not a list");
    // The byte count is checked against the data size as it grows, so it cannot overflow.
    int64_t nbytes = e.dtype_size;
    for (const auto& d : shape.as_array()) {
      if (!d.is_int() || d.as_int() < 0) bad("shape " + shape.dump() + " is not a list of sizes");
      const int64_t size = d.as_int();
      e.shape.push_back(size);
      if (size != 0 && nbytes > std::numeric_limits<int64_t>::max() / size) {
        bad("shape " + shape.dump() + " has more elements than any file can hold");
      }
      nbytes *= size;
    }
    const Json& offsets = info.at("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2 || !offsets.at(0).is_int() ||
        !offsets.at(1).is_int()) {
      bad("data_offsets is not [begin, end]");
    }
    e.begin = offsets.at(0).as_int();
    e.end = offsets.at(1).as_int();
    if (e.begin < 0 || e.end < e.begin) bad("data_offsets " + offsets.dump() + " are reversed");
    if (e.end > data_size) {
      bad("data_offsets " + offsets.dump() + " run past the " + std::to_string(data_size) +
          " data bytes (truncated file?)");
    }
    if (e.end - e.begin != nbytes) {
      bad("holds " + std::to_string(e.end - e.begin) + " bytes but shape " + shape.dump() + " of " +
          e.dtype + " needs " + std::to_string(nbytes));
    }
    out.entries.push_back(std::move(e));
  }
  // Tensors must not overlap (the format requires them to tile the buffer).
  std::sort(out.entries.begin(), out.entries.end(),
            [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < out.entries.size(); ++i) {
    if (out.entries[i].begin < out.entries[i - 1].end) {
      fail("tensors \"" + out.entries[i - 1].name + "\" and \"" + out.entries[i].name +
           "\" overlap");
    }
  }
  return out;
}

std::vector<std::string> safetensors_index_files(std::string_view index_json,
                                                 const std::string& where) {
  Json index = Json::parse(index_json, where);
  const Json* map = index.is_object() ? index.find("weight_map") : nullptr;
  if (map == nullptr || !map->is_object()) throw Error(where + ": no \"weight_map\" object");
  std::set<std::string> names;
  for (const auto& [tensor, file] : map->as_object()) {
    if (!file.is_string() || file.as_string().empty() || file.as_string() == "." ||
        file.as_string() == ".." || file.as_string().find('/') != std::string::npos) {
      throw Error(where + ": weight_map[\"" + tensor + "\"] is " + file.dump() +
                  ", not a file name in the checkpoint directory");
    }
    names.insert(file.as_string());
  }
  return {names.begin(), names.end()};
}

}  // namespace vime::ckpt
