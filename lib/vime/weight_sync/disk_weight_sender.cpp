#include "vime/weight_sync/disk_weight_sender.hpp"

#include <exception>
#include <thread>

#include "vime/ckpt/model_io.hpp"
#include "vime/error.hpp"
#include "vime/http/fetch.hpp"
#include "vime/model/model.hpp"

namespace vime::weight_sync {
namespace {

namespace fs = std::filesystem;

// A disk backend that is not there: vLLM without it answers 404 (no route) or 400/500
// ("weight transfer not configured" / unknown backend).
bool backend_missing(const http::Response& r) {
  return r.error.empty() && (r.status == 404 || r.status == 400 || r.status == 500);
}

}  // namespace

DiskWeightSender::DiskWeightSender(DiskSyncOptions options) : options_(std::move(options)) {
  if (options_.dir.empty()) {
    throw UsageError("--update-weight-transport disk needs --update-weight-disk-dir DIR");
  }
  fs::create_directories(options_.dir);
}

void DiskWeightSender::load_on(const std::string& url, const fs::path& version_dir,
                               const std::string& version) {
  const double t = options_.timeout_s;
  auto post = [&](const std::string& path, const Json& body) {
    return http::fetch(http::Request::post_json(url + path, body, t).bearer(options_.api_key));
  };
  auto require = [&](const http::Response& r, const std::string& what) {
    if (!r.ok()) {
      throw Error("disk weight sync: " + url + what + ": " + r.describe() +
                  " (is the engine up, and can it read " + version_dir.string() + "?)");
    }
  };
  bool use_rpc = false;
  bool need_init = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    use_rpc = rpc_fallback_.count(url) > 0;
    need_init = !use_rpc && initialized_.count(url) == 0;
  }
  if (need_init) {
    auto r = post("/init_weight_transfer_engine", Json::Object{{"init_info", Json::object()}});
    if (backend_missing(r)) {
      use_rpc = true;
    } else {
      require(r, "/init_weight_transfer_engine");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    (use_rpc ? rpc_fallback_ : initialized_).insert(url);
  }
  if (use_rpc) {
    Json kwargs = Json::Object{{"weights_path", fs::absolute(version_dir).string()},
                               {"is_checkpoint_format", true}};
    require(post("/collective_rpc", Json::Object{{"method", "reload_weights"}, {"kwargs", kwargs}}),
            "/collective_rpc reload_weights");
    post("/update_weight_version", Json::Object{{"new_version", version}});  // best effort
    return;
  }
  require(post("/start_weight_update", Json::object()), "/start_weight_update");
  require(post("/update_weights",
               Json::Object{
                   {"update_info", Json::Object{{"path", fs::absolute(version_dir).string()}}}}),
          "/update_weights");
  require(post("/finish_weight_update", Json::Object{{"weight_version", version}}),
          "/finish_weight_update");
}

void DiskWeightSender::send(const Model& model, const std::vector<std::string>& urls,
                            int64_t version) {
  const fs::path final_dir = options_.dir / ("weights_v" + std::to_string(version));
  const fs::path tmp_dir = options_.dir / (".weights_v" + std::to_string(version) + ".tmp");
  fs::remove_all(tmp_dir);
  ckpt::save_hf_model(model, tmp_dir);
  fs::remove_all(final_dir);
  fs::rename(tmp_dir, final_dir);
  if (options_.post_write) options_.post_write(final_dir.string(), urls);

  std::vector<std::exception_ptr> errors(urls.size());
  std::vector<std::thread> threads;
  const std::string tag = std::to_string(version);
  for (size_t i = 0; i < urls.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        load_on(urls[i], final_dir, tag);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  fs::path previous;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    previous = latest_;
    latest_ = final_dir;
    latest_version_ = tag;
  }
  if (!options_.keep_files && !previous.empty() && previous != final_dir) {
    std::error_code ignored;
    fs::remove_all(previous, ignored);
  }
}

void DiskWeightSender::catch_up(const std::string& url) {
  fs::path dir;
  std::string version;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dir = latest_;
    version = latest_version_;
    initialized_.erase(url);  // a restarted engine starts without a transfer engine
    rpc_fallback_.erase(url);
  }
  if (!dir.empty()) load_on(url, dir, version);
}

}  // namespace vime::weight_sync
