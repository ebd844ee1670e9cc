#include "vime/data/python_random.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "vime/json.hpp"

using vime::Json;

namespace {

Json load_goldens() {
  // Written by CPython's random module: tests/data/goldens/make_python_shuffle_goldens.py.
  std::ifstream in(VIME_SOURCE_DIR "/tests/data/goldens/python_shuffle.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str(), "python_shuffle.json");
}

}  // namespace

TEST_CASE("PythonRandom reproduces CPython's generator output", "[data]") {
  Json goldens = load_goldens();
  for (const Json& c : goldens.at("raw").as_array()) {
    vime::data::PythonRandom random(c.at("seed").as_int());
    for (const Json& expected : c.at("uint32").as_array())
      CHECK(random.getrandbits(32) == static_cast<uint64_t>(expected.as_int()));
  }
}

TEST_CASE("shuffled permutations equal random.Random(seed).shuffle", "[data]") {
  Json goldens = load_goldens();
  size_t checked = 0;
  for (const Json& c : goldens.at("shuffles").as_array()) {
    const auto n = static_cast<size_t>(c.at("n").as_int());
    const int64_t seed = c.at("seed").as_int();
    INFO("n=" << n << " seed=" << seed);
    auto perm = vime::data::python_shuffled_permutation(n, seed);
    const auto& head = c.at("head").as_array();
    for (size_t i = 0; i < head.size(); ++i)
      REQUIRE(perm[i] == static_cast<size_t>(head[i].as_int()));
    int64_t checksum = 0;
    for (size_t i = 0; i < perm.size(); ++i) checksum += static_cast<int64_t>(i * perm[i]);
    CHECK(checksum == c.at("checksum").as_int());
    ++checked;
  }
  CHECK(checked == 90);
}
