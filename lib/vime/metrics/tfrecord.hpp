// TFRecord framing, the container of TensorBoard event files: per record
//   uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data | uint32
//   masked_crc32c(data)
// CRC32C is the Castagnoli CRC (iSCSI, RFC 3720); the mask keeps a CRC of data that itself holds
// CRCs from looking like one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vime::metrics {

uint32_t crc32c(std::string_view bytes);
// ((crc >> 15) | (crc << 17)) + 0xa282ead8 (tensorflow/core/lib/hash/crc32c.h).
uint32_t masked_crc32c(std::string_view bytes);
// One framed record holding `data`.
std::string tfrecord(std::string_view data);

}  // namespace vime::metrics
