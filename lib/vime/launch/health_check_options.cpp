#include "vime/launch/health_check_options.hpp"

namespace vime::launch {

HealthCheckOptions HealthCheckOptions::from(const Args& args) {
  HealthCheckOptions o;
  o.interval_s = args.get_double("rollout_health_check_interval");
  o.timeout_s = args.get_double("rollout_health_check_timeout");
  o.first_wait_s = args.get_double("rollout_health_check_first_wait");
  return o;
}

}  // namespace vime::launch
