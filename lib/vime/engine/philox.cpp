#include "vime/engine/philox.hpp"

namespace vime::engine {
namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53;
constexpr uint32_t kMultiplier1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85;  // sqrt(3) - 1

void round(PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t p0 = uint64_t{kMultiplier0} * c[0];
  const uint64_t p1 = uint64_t{kMultiplier1} * c[2];
  const auto hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const auto hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int i = 0; i < 10; ++i) {
    if (i > 0) key = {key[0] + kWeyl0, key[1] + kWeyl1};
    round(counter, key);
  }
  return counter;
}

double philox_uniform(uint64_t seed, uint64_t step) {
  const PhiloxCounter out =
      philox4x32_10({static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), 0, 0},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  const uint64_t bits = (uint64_t{out[0]} << 21) ^ (uint64_t{out[1]} >> 11);  // 53 bits
  return static_cast<double>(bits) * 0x1.0p-53;
}

}  // namespace vime::engine
