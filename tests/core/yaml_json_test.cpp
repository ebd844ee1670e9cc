// YAML config files as JSON: scalars typed as PyYAML types them, and bad input an error, never a
// crash (a long scalar once overflowed std::regex's recursion; 1e999 threw std::out_of_range).
#include "vime/core/yaml_json.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "vime/error.hpp"

using vime::Json;
using vime::core::parse_yaml;

TEST_CASE("yaml: scalars become JSON types as PyYAML reads them", "[json]") {
  const Json j = parse_yaml(
      "a: 12\nb: -3\nc: 2.5\nd: .5\ne: 1e3\nf: 1.5E-2\ng: .inf\nh: -.Inf\ni: .nan\nj: x1\nk: '12'\n"
      "l: 99999999999999999999\nm: 1e999\nn: ~\no: true\np: 1.\nq: 1e\nr: +7\n",
      "test");
  CHECK(j.at("a").as_int() == 12);
  CHECK(j.at("b").as_int() == -3);
  CHECK(j.at("c").as_double() == 2.5);
  CHECK(j.at("d").as_double() == 0.5);
  CHECK(j.at("e").as_double() == 1000.0);
  CHECK(j.at("f").as_double() == 0.015);
  CHECK(std::isinf(j.at("g").as_double()));
  CHECK(j.at("h").as_double() < 0);
  CHECK(std::isnan(j.at("i").as_double()));
  CHECK(j.at("j").as_string() == "x1");
  CHECK(j.at("k").as_string() == "12");
  CHECK(j.at("l").as_double() == 1e20);
  CHECK(std::isinf(j.at("m").as_double()));
  CHECK(j.at("n").is_null());
  CHECK(j.at("o").as_bool());
  CHECK(j.at("p").as_double() == 1.0);
  CHECK(j.at("q").as_string() == "1e");
  CHECK(j.at("r").as_int() == 7);
}

TEST_CASE("yaml: a 1 MB scalar and malformed text do not crash", "[json]") {
  const Json digits = parse_yaml("x: " + std::string(1 << 20, '7'), "test");
  CHECK(std::isinf(digits.at("x").as_double()));
  const Json word = parse_yaml("x: " + std::string(1 << 20, 'a'), "test");
  CHECK(word.at("x").as_string().size() == size_t(1) << 20);
  CHECK_THROWS_AS(parse_yaml("a: [1, 2\nb: {", "test"), vime::Error);
  CHECK_THROWS_AS(parse_yaml("? [a, b]\n: 1\n", "test"), vime::Error);
}
