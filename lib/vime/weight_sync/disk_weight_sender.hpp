// Disk weight sync (--update-weight-transport disk): the trainer writes its weights as an HF
// directory under --update-weight-disk-dir and every engine reloads it, through vLLM's disk
// weight-transfer backend (init, start, update_weights {"path"}, finish) or, for servers without
// it, POST /collective_rpc reload_weights (vime's update_weights_from_disk).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace vime {
class Model;
}

namespace vime::weight_sync {

struct DiskSyncOptions {
  std::filesystem::path dir;  // shared by trainer and engines
  bool keep_files = false;    // keep every version's directory
  double timeout_s = 900;     // per engine call (--vllm-weight-transfer-timeout-sec)
  std::string api_key;
  // Runs after a version's files are written, before engines read them
  // (--custom-update-weight-post-write-path).
  std::function<void(const std::string& version_dir, const std::vector<std::string>& urls)>
      post_write;
};

class DiskWeightSender {
 public:
  explicit DiskWeightSender(DiskSyncOptions options);

  // Writes `model` as <dir>/weights_v<version> (a temporary directory renamed when complete) and
  // has every engine in `urls` load it (concurrently); removes the previous version's directory
  // unless keep_files. Throws vime::Error naming the engine that failed.
  void send(const Model& model, const std::vector<std::string>& urls, int64_t version);
  // Has one engine load the latest version written (a restarted engine catching up). No-op before
  // the first send().
  void catch_up(const std::string& url);
  // Has one engine load `version_dir` (tagged `version`).
  void load_on(const std::string& url, const std::filesystem::path& version_dir,
               const std::string& version);

 private:
  DiskSyncOptions options_;
  std::filesystem::path latest_;
  std::string latest_version_;
  std::mutex mutex_;
  std::set<std::string> initialized_;   // engines whose disk backend answered init
  std::set<std::string> rpc_fallback_;  // engines that reload through /collective_rpc
};

}  // namespace vime::weight_sync
