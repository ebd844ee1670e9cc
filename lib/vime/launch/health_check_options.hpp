// How often and how patiently fault tolerance's watchdog (HealthMonitor) checks the engines.
#pragma once

#include <string>

#include "vime/args.hpp"

namespace vime::launch {

struct HealthCheckOptions {
  double interval_s = 30;
  double timeout_s = 30;
  double first_wait_s = 0;
  std::string api_key;  // not a flag: the engines' key, set by the caller

  // --rollout-health-check-interval, --rollout-health-check-timeout,
  // --rollout-health-check-first-wait.
  static HealthCheckOptions from(const Args& args);
};

}  // namespace vime::launch
