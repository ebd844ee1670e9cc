#include "vime/engine/engine_balancer.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <list>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "vime/engine/vllm_engine.hpp"
#include "vime/error.hpp"

namespace vime::engine {
namespace {

using Clock = std::chrono::steady_clock;

struct Member {
  std::string name;
  EngineClient* engine = nullptr;
  std::unique_ptr<EngineClient> owned;
  int64_t in_flight = 0;
  int64_t served = 0;
  int64_t groups = 0;
  int64_t failures = 0;
  Clock::time_point avoid_until{};
};

GenerateResponse aborted() {
  GenerateResponse r;
  r.finish_reason = "abort";
  return r;
}

const std::string& affinity_key(const GenerateRequest& request) {
  return request.group_id.empty() ? request.session_id : request.group_id;
}

}  // namespace

struct EngineBalancer::Impl {
  explicit Impl(EngineBalancerOptions o) : options(o) {}

  // The engine of `key`'s group while it is usable; else the least loaded usable one (recorded as
  // the group's). Skips `tried` (engines that failed this request). Null when all were tried.
  Member* pick(const std::string& key, const std::set<Member*>& tried);
  void remember(const std::string& key, Member* member);

  EngineBalancerOptions options;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Member>> members;
  // Group -> engine, most recent first (bounded by options.remembered_groups).
  std::list<std::pair<std::string, Member*>> recent;
  std::unordered_map<std::string, std::list<std::pair<std::string, Member*>>::iterator> groups;
  uint64_t epoch = 0;  // bumped by abort_all()
};

Member* EngineBalancer::Impl::pick(const std::string& key, const std::set<Member*>& tried) {
  const auto now = Clock::now();
  auto usable = [&](Member* m) { return !tried.count(m) && m->avoid_until <= now; };
  if (!key.empty()) {
    if (auto it = groups.find(key); it != groups.end()) {
      Member* owner = it->second->second;
      recent.splice(recent.begin(), recent, it->second);
      if (usable(owner)) return owner;
    }
  }
  // Least loaded among the healthy engines; among all untried ones when every engine failed lately.
  Member* best = nullptr;
  for (bool healthy_only : {true, false}) {
    for (const auto& m : members) {
      if (tried.count(m.get()) || (healthy_only && m->avoid_until > now)) continue;
      if (!best || std::tie(m->in_flight, m->groups) < std::tie(best->in_flight, best->groups)) {
        best = m.get();
      }
    }
    if (best) break;
  }
  if (best && !key.empty()) remember(key, best);
  return best;
}

void EngineBalancer::Impl::remember(const std::string& key, Member* member) {
  ++member->groups;
  if (auto it = groups.find(key); it != groups.end()) {
    it->second->second = member;
    return;
  }
  recent.emplace_front(key, member);
  groups[key] = recent.begin();
  while (recent.size() > std::max<size_t>(options.remembered_groups, 1)) {
    groups.erase(recent.back().first);
    recent.pop_back();
  }
}

EngineBalancer::EngineBalancer(EngineBalancerOptions options)
    : impl_(std::make_unique<Impl>(options)) {}

EngineBalancer::~EngineBalancer() = default;

void EngineBalancer::add(std::string name, EngineClient& engine) {
  auto m = std::make_unique<Member>();
  m->name = std::move(name);
  m->engine = &engine;
  std::lock_guard lock(impl_->mutex);
  impl_->members.push_back(std::move(m));
}

void EngineBalancer::add(std::string name, std::unique_ptr<EngineClient> engine) {
  EngineClient& e = *engine;
  add(std::move(name), e);
  std::lock_guard lock(impl_->mutex);
  impl_->members.back()->owned = std::move(engine);
}

GenerateResponse EngineBalancer::generate(const GenerateRequest& request) {
  Impl& s = *impl_;
  const std::string& key = affinity_key(request);
  std::set<Member*> tried;
  std::unique_lock lock(s.mutex);
  if (s.members.empty()) throw Error("EngineBalancer: generate with no engines added");
  const uint64_t epoch = s.epoch;
  for (;;) {
    Member* m = s.pick(key, tried);
    ++m->in_flight;
    lock.unlock();
    try {
      GenerateResponse r = m->engine->generate(request);
      lock.lock();
      --m->in_flight;
      ++m->served;
      return r;
    } catch (const EnginesUnreachable&) {
      lock.lock();
      --m->in_flight;
      ++m->failures;
      m->avoid_until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(s.options.avoid_failed_s));
      tried.insert(m);
      if (s.epoch != epoch) return aborted();
      if (tried.size() == s.members.size()) throw;
      // The next pick moves the group off `m`.
    } catch (...) {
      lock.lock();
      --m->in_flight;
      throw;
    }
  }
}

void EngineBalancer::abort_all() {
  std::vector<EngineClient*> engines;
  {
    std::lock_guard lock(impl_->mutex);
    ++impl_->epoch;
    for (const auto& m : impl_->members) engines.push_back(m->engine);
  }
  std::vector<std::future<void>> pending;
  for (EngineClient* e : engines) {
    pending.push_back(std::async(std::launch::async, [e] { e->abort_all(); }));
  }
  std::exception_ptr first;
  for (auto& p : pending) {
    try {
      p.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::vector<BalancerMemberStats> EngineBalancer::stats() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<BalancerMemberStats> out;
  for (const auto& m : impl_->members) {
    out.push_back(BalancerMemberStats{m->name, m->in_flight, m->served, m->groups, m->failures});
  }
  return out;
}

}  // namespace vime::engine
