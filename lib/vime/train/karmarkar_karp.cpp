#include "vime/train/karmarkar_karp.hpp"

#include <algorithm>
#include <queue>
#include <string>

#include "vime/error.hpp"

namespace vime::train {
namespace {

struct Part {
  double sum = 0;
  std::vector<int64_t> items;
};

// A partial solution: k parts kept sorted by sum, largest first; its spread (largest - smallest
// sum) is what the method reduces by merging the two most spread states in opposite order.
struct State {
  std::vector<Part> parts;
  double spread() const { return parts.front().sum - parts.back().sum; }
  void sort() {
    std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
      if (a.sum != b.sum) return a.sum > b.sum;
      return a.items < b.items;
    });
  }
  // Pairs this state's largest part with the other's smallest, and so on.
  void merge(State& other) {
    const size_t k = parts.size();
    for (size_t i = 0; i < k; ++i) {
      auto& from = other.parts[k - 1 - i];
      parts[i].sum += from.sum;
      parts[i].items.insert(parts[i].items.end(), from.items.begin(), from.items.end());
    }
    sort();
  }
};

struct MostSpreadFirst {
  bool operator()(const State& a, const State& b) const {
    if (a.spread() != b.spread()) return a.spread() < b.spread();
    return a.parts.front().items > b.parts.front().items;  // deterministic ties
  }
};

}  // namespace

std::vector<std::vector<int64_t>> karmarkar_karp(const std::vector<double>& weights, int64_t k,
                                                 bool equal_size) {
  if (k <= 0) throw Error("karmarkar_karp: k must be positive");
  const auto n = static_cast<int64_t>(weights.size());
  if (equal_size && n % k != 0) {
    throw Error("karmarkar_karp: " + std::to_string(n) + " items do not split into " +
                std::to_string(k) + " equal parts");
  }
  std::vector<int64_t> order(weights.size());
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return weights[a] < weights[b]; });
  std::priority_queue<State, std::vector<State>, MostSpreadFirst> states;
  const int64_t step = equal_size ? k : 1;
  for (int64_t offset = 0; offset < n; offset += step) {
    State s;
    s.parts.resize(k);
    for (int64_t i = 0; i < step; ++i) {
      const int64_t item = order[offset + i];
      s.parts[i].sum = weights[item];
      s.parts[i].items.push_back(item);
    }
    s.sort();
    states.push(std::move(s));
  }
  if (states.empty()) return std::vector<std::vector<int64_t>>(k);
  while (states.size() > 1) {
    State a = states.top();
    states.pop();
    State b = states.top();
    states.pop();
    a.merge(b);
    states.push(std::move(a));
  }
  std::vector<std::vector<int64_t>> out;
  State final_state = states.top();
  for (auto& part : final_state.parts) {
    std::sort(part.items.begin(), part.items.end());
    out.push_back(std::move(part.items));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.empty() || b.empty()) return !a.empty() && b.empty();
    return a.front() < b.front();
  });
  return out;
}

}  // namespace vime::train
