// Servers the tests start take --port 0 and say which port they bound; the tests read it back
// instead of picking a free port first and handing it over (another process may take it between).
#pragma once

#include <filesystem>

namespace vime::test {

// The port in the first "at http://HOST:PORT" line of `log` (what `vime serve` and `vime retrieve
// serve` print once they listen), waiting up to `seconds` for it; 0 when none came by then.
int wait_reported_port(const std::filesystem::path& log, double seconds);

}  // namespace vime::test
