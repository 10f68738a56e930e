// The compressed 8-wide traversal on the GPU (label `gpu`; skipped without a device): by persistent
// warps with dynamic ray fetch (exec::parallel_walk, as the renderer's extend stage runs it) and one
// ray a thread, closest and any hit, hit for hit the GPU's binary DFS on a random scene, a hairball
// and a tree of big leaves (split into nodes by the encoder); the walk's count read from device memory.
#include <trace/cwbvh.hpp>
#include <trace/dfs.hpp>
#include <exec/cuda.cuh>
#include <exec/walk_cuda.cuh>
#include <frame/device_scene.hpp>
#include <scene/load.hpp>

#include "cuda_support.cuh"
#include "hairball.hpp"
#include "scenes_dir.hpp"

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

using sieve::test::device_array;


std::vector<ray> rays_checked;  // the rays of the check under way, for the message of a difference

std::string ray_text(std::size_t i) {
  if (i >= rays_checked.size()) return "";
  const ray& r = rays_checked[i];
  char text[200];
  std::snprintf(text, sizeof text, " (origin %.9g %.9g %.9g, direction %.9g %.9g %.9g, tmax %.9g)", r.origin.x, r.origin.y,
                r.origin.z, r.direction.x, r.direction.y, r.direction.z, r.tmax);
  return text;
}

void expect_same(const std::vector<hit>& got, const std::vector<hit>& want, std::size_t n, const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].prim, want[i].prim) << what << " ray " << i << ray_text(i) << ": t " << got[i].t << " against " << want[i].t;
    ASSERT_EQ(got[i].t, want[i].t) << what << " ray " << i;
    ASSERT_EQ(got[i].u, want[i].u) << what << " ray " << i;
    ASSERT_EQ(got[i].v, want[i].v) << what << " ray " << i;
  }
}

void expect_matches_dfs(const scene_data& s, const bvh_build_options& opt, const std::string& name) {
  SCOPED_TRACE(name);
  const bvh tree = build_bvh(s.tris, opt);
  ASSERT_FALSE(tree.cw.nodes.empty());
  const device_bvh on_device(tree, s.tris);
  const bvh_view v = on_device.view();
  const cw_view c = v.cw;
  rays_checked = s.rays;
  const device_array<ray> rays(s.rays);
  const device_array<hit> hits(s.rays.size());
  device_array<std::uint32_t> count(1), cursor(1);
  const std::size_t n = s.rays.size();
  const ray* r = rays.data;
  hit* h = hits.data;
  auto run = [&](auto kernel) {
    SIEVE_CUDA_CHECK(cudaMemset(h, 0xff, n * sizeof(hit)));
    kernel();
    SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
    return hits.host();
  };
  const std::vector<hit> dfs = run([&] { exec::parallel_for(exec::cuda{}, "dfs", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = closest_hit(pairs_of(v), r[i]); }); });
  const std::vector<hit> dfs_any = run([&] {
    exec::parallel_for(exec::cuda{}, "dfs", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = any_hit(pairs_of(v), r[i]) ? hit{0, 0, 0, 0} : hit{}; });
  });
  std::size_t found = 0;
  for (const hit& x : dfs) found += x.found();
  EXPECT_GT(found, n / 10) << "the rays should hit something";

  expect_same(run([&] { exec::parallel_for(exec::cuda{}, "cw", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = cw_closest_hit(c, r[i]); }); }),
              dfs, n, "one ray a thread");
  expect_same(run([&] {
                exec::parallel_for(exec::cuda{}, "cw", n, [=] SIEVE_HD(std::uint32_t i) { h[i] = cw_any_hit(c, r[i]) ? hit{0, 0, 0, 0} : hit{}; });
              }),
              dfs_any, n, "any hit, one ray a thread");
  for (const std::size_t live : {n, std::size_t{0}, std::size_t{33}, n - 17}) {
    SCOPED_TRACE("live " + std::to_string(live));
    count.upload({static_cast<std::uint32_t>(live)});
    const std::vector<hit> closest =
        run([&] { exec::parallel_walk(exec::cuda{}, "cw", make_cw_walk<false>(c, ray_at{r}, count_at{count.data}, h), cursor.data); });
    expect_same(closest, dfs, live, "walk");
    for (std::size_t i = live; i < n; ++i) ASSERT_EQ(closest[i].prim, 0xffffffffU) << "ray " << i << " past the count";
    const std::vector<hit> any =
        run([&] { exec::parallel_walk(exec::cuda{}, "cw", make_cw_walk<true>(c, ray_at{r}, count_at{count.data}, h), cursor.data); });
    expect_same(any, dfs_any, live, "any-hit walk");
  }
}

TEST(GpuCwBvh, MatchesTheBinaryDfs) {
  REQUIRE_DEVICE();
  expect_matches_dfs(random_scene(3000, 8000, 11), {}, "random scene");
  const auto [tris, rays] = hairball();
  expect_matches_dfs({tris, rays}, {}, "hairball");
  expect_matches_dfs(random_scene(5000, 8000, 3), {8, 16, 1.0f}, "leaves of up to 16 triangles");
}

// The shipped scenes' trees as the renderer builds them, on rays such as a path tracer casts.
TEST(GpuCwBvh, MatchesTheBinaryDfsOnTheShippedScenes) {
  REQUIRE_DEVICE();
  for (const char* file : {"cornell-box/cornell-box.toml", "procedural/sphere-room.toml"}) {
    const scene sc = load_scene(std::filesystem::path(sieve::test::scenes_dir()) / file);
    expect_matches_dfs({sc.triangles, rays_around(sc.triangles, 4000000, 7)}, {}, file);
  }
}

}  // namespace
}  // namespace sieve::render
