// Dense matrix product for the routing generator and statistics: the only O(experts^2) work
// per record (pushing loads through a transition matrix; correlating every pair of experts).
// Internal to the routing code.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace mfabric::workload::routing_detail {

// C[m x n] = A[m x k] * B[k x n], all row-major. A tile of kRows rows x one 32-byte strip of
// columns of C stays in registers while k runs, so each row of B is loaded once per kRows rows
// of A. Every C[r][c] is still the sum over k in order of separately rounded products (no fused
// multiply-add: the project builds in ISO mode, -ffp-contract=off), so the numbers do not depend
// on the tiling, on the vector width or on the platform.
template <class T>
void multiply(const T* a, const T* b, T* c, std::size_t m, std::size_t k, std::size_t n) {
  constexpr std::size_t kRows = 4;
#if defined(__GNUC__)
  // GCC/Clang vector extension: plain element-wise IEEE arithmetic, SSE2 on any x86-64. Written
  // out because the auto-vectorizer picks the wrong loop of this nest.
  typedef T Vec __attribute__((vector_size(16)));
  constexpr std::size_t kLanes = 16 / sizeof(T);
  constexpr std::size_t kVecs = 2;
  constexpr std::size_t kCols = kLanes * kVecs;
  std::size_t c0 = 0;
  for (; c0 + kCols <= n; c0 += kCols) {
    std::size_t r0 = 0;
    for (; r0 + kRows <= m; r0 += kRows) {
      Vec acc[kRows][kVecs] = {};
      for (std::size_t i = 0; i < k; ++i) {
        Vec bv[kVecs];
        std::memcpy(bv, b + i * n + c0, sizeof bv);
        for (std::size_t rr = 0; rr < kRows; ++rr) {
          const T av = a[(r0 + rr) * k + i];
          for (std::size_t v = 0; v < kVecs; ++v)
            acc[rr][v] += av * bv[v];
        }
      }
      for (std::size_t rr = 0; rr < kRows; ++rr) {
        std::memcpy(c + (r0 + rr) * n + c0, acc[rr], sizeof acc[rr]);
      }
    }
    // Leftover rows of this column strip.
    for (; r0 < m; ++r0) {
      Vec acc[kVecs] = {};
      for (std::size_t i = 0; i < k; ++i) {
        Vec bv[kVecs];
        std::memcpy(bv, b + i * n + c0, sizeof bv);
        const T av = a[r0 * k + i];
        for (std::size_t v = 0; v < kVecs; ++v)
          acc[v] += av * bv[v];
      }
      std::memcpy(c + r0 * n + c0, acc, sizeof acc);
    }
  }
#else
  std::size_t c0 = 0;
#endif
  // Leftover columns (or everything without the vector extension): the same sums, scalar.
  if (c0 < n) {
    for (std::size_t r = 0; r < m; ++r) {
      std::fill(c + r * n + c0, c + r * n + n, T{0});
      for (std::size_t i = 0; i < k; ++i) {
        const T av = a[r * k + i];
        for (std::size_t col = c0; col < n; ++col)
          c[r * n + col] += av * b[i * n + col];
      }
    }
  }
}

}  // namespace mfabric::workload::routing_detail
