// The one exception family of vime. Every message is written for the user: what went wrong, which
// flag or file, and what to do. `vime` prints it as one line; a UsageError exits with code 2, any
// other Error 1.
#pragma once

#include <stdexcept>
#include <string>

namespace vime {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Bad flags, bad config values, missing or unusable input named on the command line.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message) {}
};

}  // namespace vime
