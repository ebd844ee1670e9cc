// Philox4x32-10 against Random123's known-answer vectors (tests/kat_vectors of
// DEShawResearch/random123), and the uniform built from it.
#include "vime/engine/philox.hpp"

#include <catch2/catch.hpp>
#include <cmath>

using vime::engine::philox4x32_10;
using vime::engine::philox_uniform;
using vime::engine::PhiloxCounter;

TEST_CASE("Philox4x32-10 matches Random123's known-answer vectors", "[sampler]") {
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("philox_uniform is a pure function of (seed, step), uniform in [0, 1)", "[sampler]") {
  CHECK(philox_uniform(7, 3) == philox_uniform(7, 3));
  CHECK(philox_uniform(7, 3) != philox_uniform(7, 4));
  CHECK(philox_uniform(7, 3) != philox_uniform(8, 3));
  CHECK(philox_uniform(1ull << 32, 0) != philox_uniform(0, 0));  // the seed's high word counts
  CHECK(philox_uniform(0, 1ull << 32) != philox_uniform(0, 0));  // and the step's
  const int n = 100000;
  double sum = 0, sum_sq = 0;
  int below_tenth = 0;
  for (int i = 0; i < n; ++i) {
    const double u = philox_uniform(12345, i);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    sum_sq += u * u;
    below_tenth += u < 0.1;
  }
  // Mean 1/2 and variance 1/12; 5-sigma bounds for n = 1e5.
  CHECK(std::abs(sum / n - 0.5) < 5 * std::sqrt(1.0 / 12 / n));
  CHECK(std::abs(sum_sq / n - sum * sum / n / n - 1.0 / 12) < 0.002);
  CHECK(std::abs(below_tenth - 0.1 * n) < 5 * std::sqrt(0.09 * n));
}
