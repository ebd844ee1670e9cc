// The flags the vLLM rollout backend reads (make_vllm_backend), once: the engines and router to
// start or use, how weights reach them, and fault tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "vime/args.hpp"
#include "vime/engine/vllm_engine_options.hpp"
#include "vime/launch/health_check_options.hpp"
#include "vime/launch/launch_options.hpp"

namespace vime::loop {

struct VllmBackendOptions {
  launch::LaunchOptions launch;            // engines (their weight transport, colocation), router
  engine::VllmEngineOptions engine;        // how requests reach them; the URLs come once they run
  double weight_transfer_timeout_s = 900;  // --vllm-weight-transfer-timeout-sec
  // How long external engines may take to answer /health at start (--rollout-health-check-timeout).
  double external_engine_timeout_s = 30;
  // Disk transport: --update-weight-disk-dir, --update-weight-disk-keep-files.
  std::optional<std::string> disk_dir;
  bool keep_disk_files = false;
  // NCCL transport: --[no-]vllm-weight-sync-packed, --update-weight-buffer-size.
  bool packed = true;
  int64_t packed_buffer_size_bytes = 512ll << 20;
  bool use_fault_tolerance = false;  // --use-fault-tolerance: health checks and restarts
  launch::HealthCheckOptions health;

  static VllmBackendOptions from(const Args& args);
};

}  // namespace vime::loop
