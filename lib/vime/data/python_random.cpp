#include "vime/data/python_random.hpp"

#include <bit>
#include <numeric>

namespace vime::data {
namespace {

constexpr size_t kN = 624;
constexpr size_t kM = 397;
constexpr uint32_t kMatrixA = 0x9908b0dfU;
constexpr uint32_t kUpperMask = 0x80000000U;
constexpr uint32_t kLowerMask = 0x7fffffffU;

}  // namespace

PythonRandom::PythonRandom(int64_t seed) {
  // init_genrand(19650218)
  state_[0] = 19650218U;
  for (size_t i = 1; i < kN; ++i)
    state_[i] = 1812433253U * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);

  // init_by_array(key): key = |seed| as little-endian 32-bit words, at least one word.
  uint64_t magnitude = seed < 0 ? 0 - static_cast<uint64_t>(seed) : static_cast<uint64_t>(seed);
  std::vector<uint32_t> key{static_cast<uint32_t>(magnitude)};
  if (magnitude >> 32) key.push_back(static_cast<uint32_t>(magnitude >> 32));

  size_t i = 1, j = 0;
  for (size_t k = std::max(kN, key.size()); k; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525U)) + key[j] +
                static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (size_t k = kN - 1; k; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941U)) -
                static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
  }
  state_[0] = 0x80000000U;
  index_ = kN;
}

uint32_t PythonRandom::next_uint32() {
  if (index_ >= kN) {
    size_t kk = 0;
    for (; kk < kN - kM; ++kk) {
      uint32_t y = (state_[kk] & kUpperMask) | (state_[kk + 1] & kLowerMask);
      state_[kk] = state_[kk + kM] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    }
    for (; kk < kN - 1; ++kk) {
      uint32_t y = (state_[kk] & kUpperMask) | (state_[kk + 1] & kLowerMask);
      state_[kk] = state_[kk + kM - kN] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    }
    uint32_t y = (state_[kN - 1] & kUpperMask) | (state_[0] & kLowerMask);
    state_[kN - 1] = state_[kM - 1] ^ (y >> 1) ^ ((y & 1U) ? kMatrixA : 0U);
    index_ = 0;
  }
  uint32_t y = state_[index_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680U;
  y ^= (y << 15) & 0xefc60000U;
  y ^= (y >> 18);
  return y;
}

uint64_t PythonRandom::getrandbits(int bits) {
  if (bits <= 0) return 0;
  if (bits <= 32) return next_uint32() >> (32 - bits);
  // CPython fills 32-bit words from the least significant end; the last word keeps its top bits.
  const uint64_t low = next_uint32();
  const uint64_t high = next_uint32() >> (64 - bits);
  return low | (high << 32);
}

uint64_t PythonRandom::randbelow(uint64_t n) {
  const int bits = std::bit_width(n);
  uint64_t r = getrandbits(bits);
  while (r >= n) r = getrandbits(bits);
  return r;
}

std::vector<size_t> python_shuffled_permutation(size_t size, int64_t seed) {
  std::vector<size_t> permutation(size);
  std::iota(permutation.begin(), permutation.end(), size_t{0});
  PythonRandom(seed).shuffle(permutation);
  return permutation;
}

}  // namespace vime::data
