// Python's `random.Random(seed)` (CPython's MT19937 seeding and random.shuffle), so that
// --rollout-shuffle orders prompts exactly as slime does (Dataset.shuffle: Random(seed + epoch)).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vime::data {

class PythonRandom {
 public:
  explicit PythonRandom(
      int64_t seed);  // random.seed(int): init_by_array over |seed|'s 32-bit words

  uint32_t next_uint32();          // genrand_uint32
  uint64_t getrandbits(int bits);  // 0 <= bits <= 64
  uint64_t randbelow(uint64_t n);  // Random._randbelow_with_getrandbits, n >= 1
  // random.shuffle(x): Fisher-Yates from the back, j = randbelow(i + 1).
  template <class T>
  void shuffle(std::vector<T>& values) {
    for (size_t i = values.size(); i-- > 1;) std::swap(values[i], values[randbelow(i + 1)]);
  }

 private:
  std::array<uint32_t, 624> state_{};
  size_t index_ = 625;
};

// [0, 1, ..., size-1] shuffled by Random(seed), as slime's Dataset.shuffle permutes its rows.
std::vector<size_t> python_shuffled_permutation(size_t size, int64_t seed);

}  // namespace vime::data
