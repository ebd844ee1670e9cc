// One EngineClient over several engines: under data parallelism, rank 0's own NativeEngine and the
// other ranks' NativeEngines behind `vime serve` (a VllmEngine each). A GRPO group
// (GenerateRequest.group_id; else the session_id) goes whole to one engine, so its prompt is
// prefilled there once; a new group goes to the engine with the fewest requests in flight. An
// engine whose generate() throws engine::EnginesUnreachable is avoided for a while and the request
// runs again on another (same request, same seed: the same sample when it is seeded).
// abort_all() reaches every engine. Thread-safe; generate() blocks its caller only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vime/engine_client.hpp"

namespace vime::engine {

struct EngineBalancerOptions {
  double avoid_failed_s = 60;          // an unreachable engine gets no new groups this long
  size_t remembered_groups = 1 << 16;  // group -> engine assignments kept (least recent dropped)
};

struct BalancerMemberStats {
  std::string name;
  int64_t in_flight = 0;
  int64_t served = 0;    // requests answered (any finish reason)
  int64_t groups = 0;    // groups (or sessions) assigned to it
  int64_t failures = 0;  // requests it could not serve and that went elsewhere
};

class EngineBalancer final : public EngineClient {
 public:
  explicit EngineBalancer(EngineBalancerOptions options = {});
  ~EngineBalancer() override;
  EngineBalancer(const EngineBalancer&) = delete;
  EngineBalancer& operator=(const EngineBalancer&) = delete;

  // Adds an engine (before the first generate()). A borrowed one must outlive the fleet.
  void add(std::string name, EngineClient& engine);
  void add(std::string name, std::unique_ptr<EngineClient> engine);

  // Blocking, thread-safe. Throws what the chosen engine throws (an invalid request), except
  // EnginesUnreachable, which sends the request to another engine; it is rethrown only when every
  // engine was tried. Returns "abort" when abort_all() runs before an engine took it back.
  GenerateResponse generate(const GenerateRequest& request) override;
  // abort_all() of every engine at once; returns when all have.
  void abort_all() override;

  std::vector<BalancerMemberStats> stats() const;  // in the order added

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vime::engine
