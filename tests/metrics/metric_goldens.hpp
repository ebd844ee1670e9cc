// tests/metrics/goldens/metric_goldens.json, written by CPython/numpy/zlib
// (make_metric_goldens.py).
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "vime/json.hpp"

namespace vime::test {

inline const Json& metric_goldens() {
  static const Json goldens = [] {
    std::ifstream in(VIME_SOURCE_DIR "/tests/metrics/goldens/metric_goldens.json");
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str(), "metric_goldens.json");
  }();
  return goldens;
}

}  // namespace vime::test
