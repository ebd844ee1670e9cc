// Karmarkar-Karp's largest differencing method for k-way number partitioning, as verl and slime
// balance sequences over data-parallel ranks (get_seqlen_balanced_partitions). With equal_size,
// every part gets the same number of items (the count must divide by k). Torch-free.
#pragma once

#include <cstdint>
#include <vector>

namespace vime::train {

// Parts of item indices (each part sorted ascending, parts ordered by their smallest index).
std::vector<std::vector<int64_t>> karmarkar_karp(const std::vector<double>& weights, int64_t k,
                                                 bool equal_size);

}  // namespace vime::train
