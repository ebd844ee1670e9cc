// Counter-based randomness for sampling: Philox4x32-10 (Salmon et al., SC'11; Random123), a pure
// function of (counter, key). A request's draw at step t is philox(counter = t, key = seed), so it
// depends on nothing else: not on the batch it runs in, its row, the device or earlier calls.
#pragma once

#include <array>
#include <cstdint>

namespace vime::engine {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A uniform double in [0, 1) with 53 random bits for request `seed` at generation step `step`.
double philox_uniform(uint64_t seed, uint64_t step);

}  // namespace vime::engine
