#include "vime/dist/parallel_groups.hpp"

#include <string>
#include <vector>

#include "vime/error.hpp"

namespace vime::dist {

namespace {

// Expert-parallel groups of consecutive data-parallel ranks (tensor and context size 1: the
// data-parallel ranks are the world's).
void make_expert_groups(ParallelGroups& g, ProcessGroup* world, int size, int rank, int ep_size) {
  const std::string flag = "--expert-model-parallel-size " + std::to_string(ep_size);
  if (ep_size < 1) throw UsageError(flag + ": must be >= 1");
  if (ep_size == 1) return;
  if (g.tp_size > 1 || g.cp_size > 1) {
    throw UsageError(flag + " with " +
                     (g.tp_size > 1 ? "--tensor-model-parallel-size " + std::to_string(g.tp_size)
                                    : "--context-parallel-size " + std::to_string(g.cp_size)) +
                     " is not supported yet: vime's expert parallelism runs with tensor and "
                     "context parallel size 1 (--expert-tensor-parallel-size 1)");
  }
  if (size % ep_size != 0) {
    throw UsageError(flag + " does not divide the data-parallel size " + std::to_string(size) +
                     "; the expert-parallel ranks lie inside the data-parallel group");
  }
  g.ep_size = ep_size;
  g.ep_rank = rank % ep_size;
  const int first = rank - g.ep_rank;
  std::vector<int> ranks;
  for (int e = 0; e < ep_size; ++e) ranks.push_back(first + e);
  g.ep = world->new_group(ranks, "ep" + std::to_string(first / ep_size));
  if (size / ep_size == 1) return;
  ranks.clear();
  for (int r = g.ep_rank; r < size; r += ep_size) ranks.push_back(r);
  g.ep_dp = world->new_group(ranks, "epdp" + std::to_string(g.ep_rank));
}

}  // namespace

ParallelGroups make_parallel_groups(ProcessGroup* world, int tp_size, int cp_size, int ep_size) {
  ParallelGroups g;
  g.world = world;
  const int size = world != nullptr ? world->size() : 1;
  const int rank = world != nullptr ? world->rank() : 0;
  if (tp_size < 1 || size % tp_size != 0) {
    throw UsageError("--tensor-model-parallel-size " + std::to_string(tp_size) +
                     " does not divide the " + std::to_string(size) +
                     " trainer ranks; give a divisor of the world size");
  }
  if (cp_size < 1 || size % (tp_size * cp_size) != 0) {
    throw UsageError("--context-parallel-size " + std::to_string(cp_size) + " x " +
                     "--tensor-model-parallel-size " + std::to_string(tp_size) +
                     " does not divide the " + std::to_string(size) +
                     " trainer ranks; give sizes whose product divides the world size");
  }
  const int model = tp_size * cp_size;  // ranks of one model replica
  g.tp_size = tp_size;
  g.cp_size = cp_size;
  g.tp_rank = rank % tp_size;
  g.cp_rank = (rank / tp_size) % cp_size;
  g.dp_rank = rank / model;
  make_expert_groups(g, world, size, rank, ep_size);
  if (model == 1) return g;
  auto global = [&](int dp, int cp, int tp) { return (dp * cp_size + cp) * tp_size + tp; };
  const std::string cp_tag = std::to_string(g.cp_rank), tp_tag = std::to_string(g.tp_rank),
                    dp_tag = std::to_string(g.dp_rank);
  // Every rank makes its groups in this order (tp, cp, dp, dp x cp).
  if (tp_size > 1) {
    std::vector<int> ranks;
    for (int t = 0; t < tp_size; ++t) ranks.push_back(global(g.dp_rank, g.cp_rank, t));
    g.tp = world->new_group(ranks, "tp" + dp_tag + "." + cp_tag);
  }
  if (cp_size > 1) {
    std::vector<int> ranks;
    for (int c = 0; c < cp_size; ++c) ranks.push_back(global(g.dp_rank, c, g.tp_rank));
    g.cp = world->new_group(ranks, "cp" + dp_tag + "." + tp_tag);
  }
  std::vector<int> dp_ranks;
  for (int d = 0; d < size / model; ++d) dp_ranks.push_back(global(d, g.cp_rank, g.tp_rank));
  g.dp = world->new_group(dp_ranks, "dp" + cp_tag + "." + tp_tag);
  if (cp_size > 1 && tp_size > 1) {
    std::vector<int> ranks;  // ascending: dp-major, then cp
    for (int d = 0; d < size / model; ++d)
      for (int c = 0; c < cp_size; ++c) ranks.push_back(global(d, c, g.tp_rank));
    g.dp_cp = world->new_group(ranks, "dpcp" + tp_tag);
  }
  return g;
}

}  // namespace vime::dist
