// Helpers for tests that run programs and write files.
#pragma once

#include <filesystem>
#include <string>

namespace vime::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `command` through /bin/sh, capturing stdout+stderr.
CommandResult run_command(const std::string& command);
// `vime` of this build with the given arguments (already shell-quoted where needed).
CommandResult run_vime(const std::string& arguments);

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

std::string plugin_path(
    const std::string& name);  // a test plugin .so: "good_plugins" -> .../libtest_good_plugins.so
int count_lines(const std::string& text);

}  // namespace vime::test
