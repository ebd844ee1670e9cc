#include "vime/metrics/tfrecord.hpp"

#include <boost/crc.hpp>

namespace vime::metrics {
namespace {

void append_le(std::string& out, uint64_t value, int num_bytes) {
  for (int i = 0; i < num_bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  append_le(out, data.size(), 8);
  append_le(out, masked_crc32c(out), 4);
  out.append(data);
  append_le(out, masked_crc32c(data), 4);
  return out;
}

}  // namespace vime::metrics
