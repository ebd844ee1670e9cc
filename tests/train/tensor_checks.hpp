// Helpers the training-math tests share: a double tensor from a list, and an element-wise
// comparison.
#pragma once

#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <vector>

namespace vime::test {

inline at::Tensor t(std::vector<double> v) { return at::tensor(v, at::kDouble); }

inline void check_close(const at::Tensor& actual, std::vector<double> expected, double tol = 1e-6) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  auto a = actual.to(at::kDouble).contiguous();
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].item<double>() == Approx(expected[i]).margin(tol));
  }
}

}  // namespace vime::test
