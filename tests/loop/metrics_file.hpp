// Reads a metrics JSONL file (--metrics-jsonl) into metric -> values in the order logged.
#pragma once

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "vime/core/atomic_file.hpp"
#include "vime/json.hpp"

namespace vime::test {

inline std::map<std::string, std::vector<double>> read_metrics(const std::filesystem::path& path) {
  std::map<std::string, std::vector<double>> out;
  std::istringstream lines(vime::read_text_file(path));
  for (std::string line; std::getline(lines, line);) {
    const auto row =
        vime::Json::parse(line);  // named: a range-for over a temporary's member dangles
    for (const auto& [key, value] : row.as_object()) {
      if (value.is_number()) out[key].push_back(value.as_double());
    }
  }
  return out;
}

}  // namespace vime::test
