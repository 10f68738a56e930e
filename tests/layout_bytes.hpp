// Two builds are the same tree: the arrays of every layout (bvh.hpp's for_each_part lists them),
// byte for byte. The SAH build on any number of threads, the device builder on the CPU and on the GPU.
#pragma once

#include <bvh/bvh.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>
#include <vector>

namespace sieve::render {

// Each array of b's layouts as bytes, in for_each_part's order.
inline std::vector<std::vector<unsigned char>> layout_bytes(const bvh& b) {
  std::vector<std::vector<unsigned char>> out;
  for_each_part(b, [&](const auto& part) {
    using part_type = std::decay_t<decltype(part)>;
    if constexpr (requires { part.data(); part.size(); }) {
      const auto* p = reinterpret_cast<const unsigned char*>(part.data());
      out.emplace_back(p, p + part.size() * sizeof(typename part_type::value_type));
    }
  });
  return out;
}

inline void expect_same_layouts(const bvh& a, const bvh& b) {
  const auto x = layout_bytes(a), y = layout_bytes(b);
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i].size(), y[i].size()) << "array " << i << " of the layouts (for_each_part's order)";
    EXPECT_TRUE(x[i] == y[i]) << "array " << i << " of the layouts (for_each_part's order) differs";
  }
}

}  // namespace sieve::render
