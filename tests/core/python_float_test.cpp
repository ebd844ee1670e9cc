// python_float_repr against CPython's repr (tests/core/goldens/python_float_goldens.json,
// written by make_python_float_goldens.py): the one copy that metrics, Jinja and the graders use.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "vime/json.hpp"
#include "vime/python_format.hpp"

using vime::python_float_repr;

TEST_CASE("python_float_repr matches CPython's repr byte for byte", "[python_float]") {
  std::ifstream in(VIME_SOURCE_DIR "/tests/core/goldens/python_float_goldens.json");
  std::stringstream text;
  text << in.rdbuf();
  const vime::Json goldens = vime::Json::parse(text.str(), "python_float_goldens.json");
  const auto& cases = goldens.at("cases").as_array();
  REQUIRE(cases.size() > 1000);
  for (const vime::Json& c : cases) {
    const std::string& hex = c.at("hex").as_string();
    INFO(hex);
    CHECK(python_float_repr(std::strtod(hex.c_str(), nullptr)) == c.at("repr").as_string());
  }
}

TEST_CASE("python_float_repr: layout rules and special values", "[python_float]") {
  CHECK(python_float_repr(2.0) == "2.0");
  CHECK(python_float_repr(0.1) == "0.1");
  CHECK(python_float_repr(1e16) == "1e+16");
  CHECK(python_float_repr(9999999999999998.0) == "9999999999999998.0");
  CHECK(python_float_repr(1e-05) == "1e-05");
  CHECK(python_float_repr(0.0001) == "0.0001");
  CHECK(python_float_repr(123456789012345680.0) == "1.2345678901234568e+17");
  CHECK(python_float_repr(-1234567.5) == "-1234567.5");
  CHECK(python_float_repr(1e100) == "1e+100");
  CHECK(python_float_repr(5e-324) == "5e-324");
  CHECK(python_float_repr(0.0) == "0.0");
  CHECK(python_float_repr(-0.0) == "-0.0");
  CHECK(python_float_repr(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(python_float_repr(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(python_float_repr(std::nan("")) == "nan");
  CHECK(python_float_repr(-std::nan("")) == "nan");
}
