#include "vime/loop/vllm_backend_options.hpp"

namespace vime::loop {

VllmBackendOptions VllmBackendOptions::from(const Args& args) {
  VllmBackendOptions o;
  o.launch = launch::LaunchOptions::from(args);
  o.engine = engine::VllmEngineOptions::from(args);
  o.weight_transfer_timeout_s = args.get_double("vllm_weight_transfer_timeout_sec");
  o.external_engine_timeout_s = args.get_double("rollout_health_check_timeout");
  if (args.is_set("update_weight_disk_dir")) o.disk_dir = args.get_string("update_weight_disk_dir");
  o.keep_disk_files = args.get_bool("update_weight_disk_keep_files");
  o.packed = !args.is_set("vllm_weight_sync_packed") || args.get_bool("vllm_weight_sync_packed");
  o.packed_buffer_size_bytes = args.get_int("update_weight_buffer_size");
  o.use_fault_tolerance = args.get_bool("use_fault_tolerance");
  o.health = launch::HealthCheckOptions::from(args);
  return o;
}

}  // namespace vime::loop
