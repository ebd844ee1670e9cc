// serve_load: the full load-and-abuse run of `vime serve`: 2,000 requests at 64
// concurrent with client aborts and malformed bodies against a tiny make_arith_task model.
//   serve_load --vime build/bin/vime --model DIR [--requests 2000] [--concurrency 64] [--seed 1]
//              [--fuzz 2000] [--rss-growth-mib 128]
// Exit 0 when every valid request answered 200, every bad one a 4xx in vLLM's shape, the server
// stayed healthy, stopped cleanly, and its RSS grew by less than --rss-growth-mib.
#include <cstdlib>
#include <iostream>
#include <string>

#include "load_driver.hpp"

int main(int argc, char** argv) {
  std::string vime, model, log = "serve_load.log";
  vime::tools::LoadOptions options;
  int64_t growth_mib = 128;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--vime")
      vime = value;
    else if (flag == "--model")
      model = value;
    else if (flag == "--log")
      log = value;
    else if (flag == "--requests")
      options.requests = std::atoi(value.c_str());
    else if (flag == "--concurrency")
      options.concurrency = std::atoi(value.c_str());
    else if (flag == "--seed")
      options.seed = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--fuzz")
      options.fuzz_requests = std::atoi(value.c_str());
    else if (flag == "--rss-growth-mib")
      growth_mib = std::atoll(value.c_str());
    else {
      std::cerr << "serve_load: unknown flag " << flag << "\n";
      return 2;
    }
  }
  if (vime.empty() || model.empty()) {
    std::cerr << "usage: serve_load --vime BIN --model DIR [--requests N] [--concurrency C]\n";
    return 2;
  }
  const auto r = vime::tools::run_serve_load(vime, model, options, log);
  std::cout << r.summary() << std::endl;
  const bool ok = r.error.empty() && r.report.valid_failed == 0 && r.report.bad_failed == 0 &&
                  r.fuzz.bad_failed == 0 && r.alive_after && r.exit_status == 0 &&
                  r.rss_after_kib - r.rss_before_kib < growth_mib * 1024;
  return ok ? 0 : 1;
}
