#include "vime/engine/routed_experts.hpp"

#include <cstring>

#include "vime/core/base64.hpp"
#include "vime/error.hpp"

namespace vime::engine {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

void flatten(const Json& value, std::vector<int32_t>& out, const std::string& where) {
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) flatten(value.at(i), out, where);
  } else if (value.is_number()) {
    out.push_back(static_cast<int32_t>(value.as_int()));
  } else {
    throw Error(where + ": routed_experts holds a " + value.type_name() + ", not an integer");
  }
}

// The quoted value of `key` in a .npy header dict ("'descr': '<i4'" -> "<i4").
std::string header_string(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return {};
  const size_t open = header.find('\'', header.find(':', at) + 1);
  const size_t close = open == std::string::npos ? open : header.find('\'', open + 1);
  if (close == std::string::npos) return {};
  return header.substr(open + 1, close - open - 1);
}

std::vector<int32_t> from_npy(const std::string& bytes, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(where + ": routed_experts .npy " + why); };
  if (bytes.size() < kMagicSize + 4) throw bad("is truncated");
  const auto major = static_cast<unsigned char>(bytes[kMagicSize]);
  size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) |
                    (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw bad("is truncated");
    for (int i = 3; i >= 0; --i)
      header_length = (header_length << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  } else {
    throw bad("has format version " + std::to_string(major) + " (1, 2 or 3 expected)");
  }
  if (bytes.size() < header_start + header_length) throw bad("is truncated");
  const std::string header = bytes.substr(header_start, header_length);
  if (header.find("'fortran_order': True") != std::string::npos)
    throw bad("is in Fortran order (C order expected)");
  const std::string descr = header_string(header, "descr");
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|' && descr[0] != '=') ||
      (descr[1] != 'i' && descr[1] != 'u'))
    throw bad("has dtype '" + descr + "' (little-endian integers expected)");
  const bool is_signed = descr[1] == 'i';
  const size_t width = static_cast<size_t>(std::stoi(descr.substr(2)));
  if (width != 1 && width != 2 && width != 4 && width != 8) throw bad("has dtype '" + descr + "'");
  const size_t data_start = header_start + header_length;
  const size_t n = (bytes.size() - data_start) / width;
  if ((bytes.size() - data_start) % width != 0) throw bad("has a partial element");
  std::vector<int32_t> out(n);
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + data_start);
  for (size_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    for (size_t b = 0; b < width; ++b) v |= static_cast<uint64_t>(p[i * width + b]) << (8 * b);
    if (is_signed && width < 8 && (v >> (8 * width - 1)) != 0) v |= ~uint64_t{0} << (8 * width);
    out[i] = static_cast<int32_t>(static_cast<int64_t>(v));
  }
  return out;
}

}  // namespace

std::string encode_routed_experts_npy(const std::vector<int32_t>& ids, int64_t layers,
                                      int64_t topk) {
  const int64_t width = layers * topk;
  const int64_t rows = width == 0 ? 0 : static_cast<int64_t>(ids.size()) / width;
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(layers) + ", " +
                       std::to_string(topk) + "), }";
  // The data starts 64-byte aligned; the header ends in '\n'.
  const size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string bytes(kMagic, kMagicSize);
  bytes.push_back('\x01');
  bytes.push_back('\x00');
  bytes.push_back(static_cast<char>(header.size() & 0xFF));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  for (int32_t id : ids) {
    const auto v = static_cast<uint32_t>(id);
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
  }
  return base64_encode(bytes);
}

std::vector<int32_t> decode_routed_experts(const Json& value, const std::string& where) {
  std::vector<int32_t> out;
  if (value.is_null()) return out;
  if (value.is_array()) {
    flatten(value, out, where);
    return out;
  }
  if (!value.is_string())
    throw Error(where + ": routed_experts must be base64 text or a list, got a " +
                value.type_name());
  const std::string bytes = base64_decode(value.as_string(), where + ": routed_experts");
  if (bytes.compare(0, kMagicSize, kMagic, kMagicSize) == 0) return from_npy(bytes, where);
  if (bytes.size() % 4 != 0)
    throw Error(where + ": routed_experts holds " + std::to_string(bytes.size()) +
                " bytes, not whole int32 values");
  out.resize(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());  // little-endian hosts only (x86, arm64)
  return out;
}

}  // namespace vime::engine
