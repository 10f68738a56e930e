// What the GPU tests of a builder with a CPU run and a GPU run of the same per-item code (the linear
// builder, lbvh.hpp; the device builder, ploc.hpp) check, once for both: the GPU's tree equals the
// CPU run's byte for byte in every layout, every GPU run alike, the tree is valid, and the builder's
// own checks (its tracing against the SAH tree's) pass; on random scenes at each leaf size, a
// hairball, coincident triangles and the shipped scenes. Skipped without a device.
#pragma once

#include <bvh/bvh.hpp>
#include <bvh/lbvh.hpp>
#include <scene/load.hpp>

#include <sieve/compaction/cuda.hpp>

#include "hairball.hpp"
#include "layout_bytes.hpp"
#include "lbvh_check.hpp"
#include "scenes_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

namespace sieve::render {

// build(tris, options, device, Timing*): the builder; checks(gpu_tree, timing, sah_tree, tris, rays, what): its own.
template <class Timing, class Build, class Checks>
void expect_gpu_equals_cpu(const Build& build, const Checks& checks, const std::vector<triangle>& tris,
                           const std::vector<ray>& rays, std::uint32_t max_leaf, const std::string& what) {
  SCOPED_TRACE(what);
  const bvh_build_options opt{.max_leaf = max_leaf};
  Timing t;
  const bvh g = build(tris, opt, lbvh_device::cuda, &t), c = build(tris, opt, lbvh_device::cpu, nullptr);
  EXPECT_GT(t.device_ms, 0);
  EXPECT_GE(t.with_copies_ms, t.device_ms);
  expect_same_layouts(g, c);
  expect_same_layouts(g, build(tris, opt, lbvh_device::cuda, nullptr));  // and every GPU run alike
  expect_valid(g, tris, max_leaf);
  checks(g, t, build_bvh(tris, opt), tris, rays, what);
}

// Random scenes at each of `leaves`, a hairball and coincident triangles at `leaf`.
template <class Timing, class Build, class Checks>
void expect_gpu_equals_cpu_on_test_scenes(const Build& build, const Checks& checks, std::initializer_list<std::uint32_t> leaves,
                                          std::uint32_t leaf) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  for (unsigned seed : {1U, 2U}) {
    const scene_data s = random_scene(20000 * seed, 3000, seed);
    for (std::uint32_t l : leaves) expect_gpu_equals_cpu<Timing>(build, checks, s.tris, s.rays, l, "random " + std::to_string(seed));
  }
  const auto [tris, rays] = hairball();
  expect_gpu_equals_cpu<Timing>(build, checks, tris, rays, leaf, "hairball");
  const std::vector<triangle> same(3000, triangle{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  expect_gpu_equals_cpu<Timing>(build, checks, same, {ray{{0.2f, 0.2f, -1}, {0, 0, 1}}}, leaf, "coincident");
}

// The shipped Sponza and sphere room at `leaf`.
template <class Timing, class Build, class Checks>
void expect_gpu_equals_cpu_on_shipped_scenes(const Build& build, const Checks& checks, std::uint32_t leaf) {
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description();
  const std::filesystem::path dir = sieve::test::scenes_dir();
  for (const char* name : {"third-party/sponza/sponza.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(dir / name);
    expect_gpu_equals_cpu<Timing>(build, checks, sc.triangles, rays_around(sc.triangles, 20000, 7), leaf, name);
  }
}

}  // namespace sieve::render
