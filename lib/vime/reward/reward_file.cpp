#include "vime/reward/reward_file.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "vime/core/atomic_file.hpp"
#include "vime/error.hpp"
#include "vime/reward/reward_dispatch.hpp"

namespace vime::reward {
namespace {

struct Line {
  int64_t number = 0;
  std::string text;
  std::optional<Json> object;  // parsed input
  std::optional<Json> reward;
  std::string error;
};

Sample sample_from(const Json& obj, const std::string& where) {
  if (!obj.is_object()) throw Error(where + ": expected a JSON object, got " + obj.type_name());
  const Json* response = obj.find("response");
  if (response == nullptr || !response->is_string()) {
    throw Error(where + ": needs \"response\" (a string)");
  }
  const Json* label = obj.find("label");
  if (label == nullptr) throw Error(where + ": needs \"label\" (any JSON value)");
  Sample s;
  s.response = response->as_string();
  s.label = *label;
  if (const Json* p = obj.find("prompt")) s.prompt = *p;
  if (const Json* m = obj.find("metadata"); m && !m->is_null()) {
    if (!m->is_object()) throw Error(where + ": \"metadata\" must be an object");
    s.metadata = *m;
  }
  if (const Json* g = obj.find("group_index"); g && g->is_int()) s.group_index = g->as_int();
  if (const Json* i = obj.find("index"); i && i->is_int()) s.index = i->as_int();
  return s;
}

// The number training would use: the reward itself, or reward[--reward-key].
std::optional<double> reward_value(const std::optional<std::string>& reward_key, const Json& reward,
                                   std::string& error) {
  if (reward_key) {
    const std::string& key = *reward_key;
    const Json* v = reward.is_object() ? reward.find(key) : nullptr;
    if (v == nullptr || !(v->is_number() || v->is_bool())) {
      error = "the reward " + reward.dump() + " has no number under --reward-key " + key;
      return std::nullopt;
    }
    return v->is_bool() ? (v->as_bool() ? 1.0 : 0.0) : v->as_double();
  }
  if (reward.is_number()) return reward.as_double();
  if (reward.is_bool()) return reward.as_bool() ? 1.0 : 0.0;
  return std::nullopt;
}

void write_atomically(const std::string& path, const std::vector<Line>& lines,
                      const std::optional<std::string>& reward_key) {
  std::optional<AtomicFile> out;
  try {
    out.emplace(path);
  } catch (const Error& e) {
    throw UsageError("--output " + path + ": cannot write there (" + e.what() + ")");
  }
  for (const auto& line : lines) {
    if (!line.reward) continue;
    Json obj = *line.object;
    obj["reward"] = *line.reward;
    std::string error;
    if (reward_key) {
      obj["reward_value"] = *reward_value(reward_key, *line.reward, error);
    }
    const std::string text = obj.dump() + "\n";
    out->write(text.data(), text.size());
  }
  out->commit();
}

}  // namespace

RewardFileReport grade_file(const Args& args, const RewardFileOptions& options) {
  std::ifstream in(options.input, std::ios::binary);
  if (!in) throw UsageError("--input " + options.input + ": cannot open it (does it exist?)");
  RewardDispatcher dispatcher(args);
  const std::optional<std::string> reward_key = RewardOptions::from(args).reward_key;

  std::vector<Line> lines;
  RewardFileReport report;
  std::string text;
  int64_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (number == 1 && text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);  // a UTF-8 BOM
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) {
      ++report.blank;
      continue;
    }
    lines.push_back({number, std::move(text), std::nullopt, std::nullopt, {}});
  }

  // Groups for --group-rm: consecutive lines with the same group_index (none: the whole file).
  std::vector<std::pair<size_t, size_t>> units;  // [begin, end) into lines
  const bool grouped = dispatcher.uses_group_rm();
  std::vector<Sample> samples(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string where = options.input + ":" + std::to_string(lines[i].number);
    try {
      lines[i].object = Json::parse(lines[i].text, where);
      samples[i] = sample_from(*lines[i].object, where);
    } catch (const Error& e) {
      lines[i].object.reset();
      lines[i].error = e.what();
    }
  }
  for (size_t i = 0; i < lines.size();) {
    size_t j = i + 1;
    if (grouped) {
      while (j < lines.size() && samples[j].group_index == samples[i].group_index) ++j;
    }
    units.emplace_back(i, j);
    i = j;
  }

  auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  auto work = [&] {
    while (true) {
      size_t u = next.fetch_add(1);
      if (u >= units.size()) return;
      auto [b, e] = units[u];
      try {
        if (grouped) {
          std::vector<Sample> group;
          for (size_t k = b; k < e; ++k)
            if (lines[k].object) group.push_back(samples[k]);
          auto rewards = dispatcher.group_reward(group);
          size_t r = 0;
          for (size_t k = b; k < e; ++k)
            if (lines[k].object) lines[k].reward = rewards[r++];
        } else if (lines[b].object) {
          lines[b].reward = dispatcher.reward(samples[b]);
        }
      } catch (const std::exception& ex) {
        for (size_t k = b; k < e; ++k)
          if (lines[k].object) lines[k].error = std::string("reward model failed: ") + ex.what();
      }
    }
  };
  int workers = options.workers > 0
                    ? options.workers
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers = static_cast<int>(
      std::min<size_t>(static_cast<size_t>(workers), std::max<size_t>(1, units.size())));
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  for (auto& line : lines) {
    if (line.reward) {
      std::string error;
      auto value = reward_value(reward_key, *line.reward, error);
      if (!error.empty()) {
        line.reward.reset();
        line.error = error;
      } else {
        ++report.graded;
        if (value) {
          report.reward_sum += *value;
          ++report.numeric;
        }
      }
    }
    if (!line.reward) report.bad.push_back({line.number, line.error});
  }
  if (report.graded == 0 && !lines.empty()) {
    write_atomically(options.output, lines, reward_key);
    throw Error("--input " + options.input + ": no line could be graded; line " +
                std::to_string(report.bad.front().line) + ": " + report.bad.front().reason);
  }
  write_atomically(options.output, lines, reward_key);
  return report;
}

}  // namespace vime::reward
