#include "vime/metrics/tensorboard_event.hpp"

#include <bit>
#include <string_view>

namespace vime::metrics {
namespace {

// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
void put_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_key(std::string& out, int field, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void put_fixed(std::string& out, uint64_t bits, int num_bytes) {
  for (int i = 0; i < num_bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

std::string event_header(double wall_time_s, int64_t step) {
  std::string event;
  if (wall_time_s != 0) {
    put_key(event, 1, 1);
    put_fixed(event, std::bit_cast<uint64_t>(wall_time_s), 8);
  }
  if (step != 0) {
    put_key(event, 2, 0);
    put_varint(event, static_cast<uint64_t>(step));  // negative int64: ten-byte two's complement
  }
  return event;
}

}  // namespace

std::string encode_file_version_event(double wall_time_s) {
  std::string event = event_header(wall_time_s, 0);
  put_bytes(event, 3, kEventFileVersion);
  return event;
}

std::string encode_scalars_event(double wall_time_s, int64_t step, const Metrics& scalars) {
  std::string summary;
  for (const auto& [tag, value] : scalars) {
    std::string entry;
    put_bytes(entry, 1, tag);
    put_key(entry, 2, 5);  // in a oneof: written even when 0
    put_fixed(entry, std::bit_cast<uint32_t>(static_cast<float>(value)), 4);
    put_bytes(summary, 1, entry);
  }
  std::string event = event_header(wall_time_s, step);
  put_bytes(event, 5, summary);
  return event;
}

}  // namespace vime::metrics
