// The wavefront renderer on the GPU (label `gpu`; skipped without a device): the same stage code as
// the CPU's, so the GPU image of a scene must match the CPU image of the same scene and seed, and be
// bit-identical across the CUDA compaction strategies.
#include <trace/trace_cuda.hpp>
#include <trace/wide.hpp>
#include <scene/load.hpp>
#include <run/render.hpp>

#include <sieve/compaction/cuda.hpp>

#include <gtest/gtest.h>

#include "scenes_dir.hpp"
#include "environment_scenes.hpp"
#include "materials_scene.hpp"
#include "microfacet_scenes.hpp"
#include "hairball.hpp"
#include "textured_quad.hpp"
#include "alpha_scene.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: " << sieve::cuda::device_description()

scene cornell(const std::string& file, std::uint32_t w, std::uint32_t h, std::uint32_t spp, std::uint32_t seed,
              const std::string& folder = "cornell-box") {
  return load_scene(sieve::test::scenes_dir() + "/" + folder + "/" + file,
                    {"film.width=" + std::to_string(w), "film.height=" + std::to_string(h),
                     "film.spp=" + std::to_string(spp), "film.seed=" + std::to_string(seed)});
}

struct comparison {
  double mean_a = 0, mean_b = 0, mean_diff = 0, stderr_diff = 0;
  double close_fraction = 0;  // pixels whose channels agree within 1e-3 relative (or 1e-5 absolute)
  bool identical = false;
};

comparison compare(const render_result& a, const render_result& b) {
  comparison c;
  const auto ma = a.mean(), mb = b.mean();
  double sa = 0, sb = 0, sd = 0, sq = 0;
  std::size_t close = 0;
  for (std::size_t i = 0; i < ma.size(); ++i) {
    const double x = (ma[i].x + ma[i].y + ma[i].z) / 3, y = (mb[i].x + mb[i].y + mb[i].z) / 3;
    sa += x;
    sb += y;
    sd += x - y;
    sq += (x - y) * (x - y);
    bool near = true;
    for (int k = 0; k < 3; ++k)
      near = near && std::fabs(ma[i][k] - mb[i][k]) <= std::max(1e-5f, 1e-3f * std::fabs(ma[i][k]));
    close += near;
  }
  const double n = static_cast<double>(ma.size());
  c.mean_a = sa / n;
  c.mean_b = sb / n;
  c.mean_diff = sd / n;
  c.stderr_diff = std::sqrt(std::max(0.0, sq / n - c.mean_diff * c.mean_diff) / (n - 1));
  c.close_fraction = static_cast<double>(close) / n;
  c.identical = a.sum.size() == b.sum.size() && std::memcmp(a.sum.data(), b.sum.data(), a.sum.size() * sizeof(vec3)) == 0;
  return c;
}

// The CUDA BFS driver's bounded frontier (trace/bfs.hpp): on a hairball its steps are chunks of
// levels, and the hits still equal the GPU's DFS exactly (the same intersection code on the same
// device; ties at equal t go to the lower index on every traversal), for every CUDA strategy the BFS
// can use. The host-driven level loop (the graph loop's hairball: bfs_cuda_test).
TEST(GpuBfs, HairballHitsEqualDfs) {
  SKIP_WITHOUT_GPU();
  const auto [tris, rays] = hairball();
  const bvh b = build_bvh(tris);
  const bvh_view v = view_of(b, tris);
  const gpu_trace dfs = trace_cuda(b, tris, rays, parse_mode<traversal>("dfs"), "", 0);
  ASSERT_EQ(dfs.hits.size(), rays.size());
  // The GPU's DFS against the CPU's: the same surfaces, except a few grazing rays where the rounding
  // of the two compilers lands on different sides of an edge (bench trace counts these too).
  std::size_t differing = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const hit cpu = closest_hit(pairs_of(v), rays[i]);
    differing += dfs.hits[i].found() != cpu.found() ||
                 (cpu.found() && std::abs(dfs.hits[i].t - cpu.t) > 1e-3F * cpu.t);
  }
  EXPECT_LE(differing, rays.size() / 100) << "of " << rays.size() << " rays";
  for (const auto& s : sieve::compaction_strategies()) {
    bool fits = false;
    for (const auto f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
      fits = fits || s.takes(sieve::backend::cuda, f);
    if (!fits) continue;
    SCOPED_TRACE(s.name);
    const gpu_trace got = trace_cuda(b, tris, rays, parse_mode<traversal>("bfs"), std::string(s.name), 0, bfs_tracer_cuda::loop::host);
    ASSERT_EQ(got.hits.size(), rays.size());
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const hit& want = dfs.hits[i];
      ASSERT_EQ(got.hits[i].prim, want.prim) << "ray " << i;
      ASSERT_EQ(got.hits[i].t, want.t) << "ray " << i;
    }
  }
}

// The GPU's DFS over the 8-wide compressed tree: closest hits equal to the GPU's binary DFS (the
// same triangle test on the same device; both find the least (t, primitive); at most 1 ray in 10^4
// may differ, should the compiler contract the two inlined copies differently), and to the CPU's
// wide traversal but for grazing rays; any hits likewise.
TEST(GpuWide, HairballHitsEqualDfs) {
  SKIP_WITHOUT_GPU();
  const auto [tris, rays] = hairball();
  const bvh b = build_bvh(tris);
  const bvh_view v = view_of(b, tris);
  const gpu_trace dfs = trace_cuda(b, tris, rays, parse_mode<traversal>("dfs"), "", 0);
  const gpu_trace wide = trace_cuda(b, tris, rays, parse_mode<traversal>("wide"), "", 0);
  ASSERT_EQ(wide.hits.size(), rays.size());
  std::size_t found = 0, differing = 0, differing_from_cpu = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    differing += wide.hits[i].prim != dfs.hits[i].prim || wide.hits[i].t != dfs.hits[i].t;
    found += wide.hits[i].found();
    const hit cpu = wide_closest_hit_cpu(v.wide, rays[i]);
    differing_from_cpu += cpu.found() != wide.hits[i].found() || (cpu.found() && std::abs(cpu.t - wide.hits[i].t) > 1e-3F * cpu.t);
  }
  EXPECT_GT(found, rays.size() / 10);
  EXPECT_LE(differing, rays.size() / 10000) << "of " << rays.size() << " rays";
  EXPECT_LE(differing_from_cpu, rays.size() / 100) << "of " << rays.size() << " rays";
  const gpu_trace dfs_any = trace_cuda(b, tris, rays, parse_mode<traversal>("dfs"), "", 0, bfs_tracer_cuda::loop::graph, true);
  const gpu_trace wide_any = trace_cuda(b, tris, rays, parse_mode<traversal>("wide"), "", 0, bfs_tracer_cuda::loop::graph, true);
  std::size_t any_differing = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) any_differing += wide_any.hits[i].found() != dfs_any.hits[i].found();
  EXPECT_LE(any_differing, rays.size() / 10000) << "of " << rays.size() << " rays";
  EXPECT_THROW(trace_cuda(b, tris, rays, parse_mode<traversal>("bfs"), "auto", 0, bfs_tracer_cuda::loop::graph, true), sieve::error);
}

// Same stages, same random numbers: most paths are the same on both, and the few that part ways
// (GPU rounding differs: FMA contraction, sinf/cosf/powf to within 2 ulp) only add Monte Carlo
// noise of mean zero. So: the mean difference is within 4 standard errors of the per-pixel
// differences, and at least 99 % of the pixels agree to 1e-3 (on the H100: 100 %, means equal to
// 1e-9; the images are not bit-identical).
TEST(GpuRender, MatchesTheCpuImage) {
  SKIP_WITHOUT_GPU();
  for (const char* file : {"cornell-box.toml", "cornell-mirror-glass.toml"}) {
    SCOPED_TRACE(file);
    const scene s = cornell(file, 96, 96, 4, 3);
    const prepared_scene ps(s);
    const render_settings rs = render_settings::from(s);
    const comparison c = compare(render_cuda(ps, rs), render_cpu(ps, rs));
    std::printf("%s: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g, %.2f %% of pixels within 1e-3, %s\n", file,
                c.mean_a, c.mean_b, c.mean_diff, c.stderr_diff, 100 * c.close_fraction,
                c.identical ? "bit-identical" : "not bit-identical");
    EXPECT_GT(c.mean_a, 0.01);
    EXPECT_LE(std::fabs(c.mean_diff), 4 * c.stderr_diff + 1e-6 * c.mean_b);
    EXPECT_GE(c.close_fraction, 0.99);
  }
}

// Every tree the GPU's extension rays can walk (`--bvh`: the binary pair nodes, the compressed 8-wide
// tree by persistent warps or one ray a thread, and the measured choice) gives the binary tree's image
// bit for bit with as many rays traced, in the wavefront (routed by a branch or by the extend stage's
// family queues) and in the megakernel.
TEST(GpuRender, EveryBvhLayoutGivesTheSameImage) {
  SKIP_WITHOUT_GPU();
  for (const char* file : {"cornell-box.toml", "cornell-mirror-glass.toml"}) {
    const scene s = cornell(file, 96, 96, 4, 3);
    const prepared_scene ps(s);
    render_settings rs = render_settings::from(s);
    rs.bvh = bvh_layout::binary;
    const render_result want = render_cuda(ps, rs);
    for (const routing_kind routing : {routing_kind::branch, routing_kind::queues, routing_kind::megakernel})
      for (const bvh_layout layout : {bvh_layout::binary, bvh_layout::cwbvh, bvh_layout::cwbvh_thread, bvh_layout::automatic}) {
        render_settings r = rs;
        r.routing = routing;
        r.bvh = layout;
        const render_result got = render_cuda(ps, r);
        const bool same = compare(got, want).identical;
        std::printf("%s, routing %s, bvh %s: %llu extension rays (binary %llu), %s\n", file,
                    std::string(to_string(routing)).c_str(), std::string(to_string(layout)).c_str(),
                    static_cast<unsigned long long>(got.stats.extension_rays),
                    static_cast<unsigned long long>(want.stats.extension_rays), same ? "identical" : "DIFFERENT");
        EXPECT_TRUE(same) << file << " " << to_string(routing) << " " << to_string(layout);
        EXPECT_EQ(got.stats.extension_rays, want.stats.extension_rays) << file << " " << to_string(routing) << " " << to_string(layout);
      }
  }
}

// The HDR environment map on the GPU (the map and its CDFs copied to the device): the white furnace
// (a convex diffuse sphere under a constant map L reflects albedo x L; the background is L), the
// CPU's image matched as above (sphere and a terrain under the shipped sky), and the terrain's image
// identical across CUDA strategies, queues, the BFS and the megakernel.
TEST(GpuEnvironment, WhiteFurnaceAndTheCpuImage) {
  SKIP_WITHOUT_GPU();
  const float albedo = 0.5f, l = 1.5f;
  const scene furnace = test_scenes::sphere_under(
      build_environment(16, 8, std::vector<vec3>(128, vec3{l, l, l}), 10, 1, true), albedo, 64);
  const prepared_scene pf(furnace);
  const render_settings rf = render_settings::from(furnace);
  const render_result gpu = render_cuda(pf, rf);
  const auto image = gpu.mean();
  double sum = 0, sq = 0;
  int n = 0;
  for (int y = 8; y < 16; ++y)  // the sphere covers the film's centre (radius about 8.7 pixels)
    for (int x = 8; x < 16; ++x, ++n) {
      const double v = image[y * 24 + x].y;
      sum += v;
      sq += v * v;
    }
  const double mean = sum / n, err = std::sqrt(std::max(0.0, sq / n - mean * mean) / (n - 1));
  std::printf("furnace on the GPU: %.5f +- %.5f (expected %.5f)\n", mean, err, double{albedo * l});
  EXPECT_NEAR(mean, albedo * l, 4 * err + 1e-3);
  EXPECT_EQ(image[0].y, l);  // a corner: the map seen directly
  {
    const comparison c = compare(gpu, render_cpu(pf, rf));
    std::printf("furnace: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g, %.2f %% of pixels within 1e-3\n", c.mean_a,
                c.mean_b, c.mean_diff, c.stderr_diff, 100 * c.close_fraction);
    EXPECT_LE(std::fabs(c.mean_diff), 4 * c.stderr_diff + 1e-6 * c.mean_b);
    EXPECT_GE(c.close_fraction, 0.95);
  }
  const scene sky = load_scene(sieve::test::scenes_dir() + "/sky/sky-terrain.toml",
                               {"film.width=64", "film.height=48", "film.spp=4", "procedural.grid=32",
                                "camera.position=[16, 12, -4]", "camera.look_at=[16, 3, 20]"});
  const prepared_scene ps(sky);
  render_settings rs = render_settings::from(sky);
  rs.max_queue = 1000;
  rs.strategy = "cub";
  const render_result want = render_cuda(ps, rs);
  render_settings on_cpu = rs;
  on_cpu.strategy = "auto";  // `cub` is GPU-only; every strategy gives the same image
  const comparison c = compare(want, render_cpu(ps, on_cpu));
  std::printf("sky-terrain: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g, %.2f %% of pixels within 1e-3\n", c.mean_a,
              c.mean_b, c.mean_diff, c.stderr_diff, 100 * c.close_fraction);
  EXPECT_GT(want.stats.shadow_rays, 0U);
  EXPECT_LE(std::fabs(c.mean_diff), 4 * c.stderr_diff + 1e-6 * c.mean_b);
  EXPECT_GE(c.close_fraction, 0.95);
  for (const char* strategy : {"space", "redzone", "atomic"})
    for (const char* queue : {"pass", "index", "append"})
      for (const char* traversal : {"dfs", "bfs"}) {
        SCOPED_TRACE(std::string(strategy) + " " + queue + " " + traversal);
        render_settings r = rs;
        r.strategy = strategy;
        r.queue = parse_mode<queue_mode>(queue);
        r.traversal = parse_mode<traversal_kind>(traversal);
        EXPECT_TRUE(compare(render_cuda(ps, r), want).identical);
      }
  rs.integrator = integrator_kind::megakernel;
  EXPECT_TRUE(compare(render_cuda(ps, rs), want).identical);
}

// Textures and vertex normals in device memory: a textured quad under a white sky shows its
// texture's colours, and the shipped textured scene (textures repeated and clamped, a smooth-shaded
// sphere) matches the CPU image and is bit-identical across CUDA strategies, the BFS traversal and
// the megakernel.
TEST(GpuRender, TexturedQuadShowsItsTexturesColours) {
  SKIP_WITHOUT_GPU();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sieve-render-cuda-test-" + std::to_string(::getpid()));
  const scene s = load_scene(testing::write_textured_quad(dir, 16));
  const prepared_scene ps(s);
  const std::vector<vec3> image = render_cuda(ps, render_settings::from(s)).mean();
  for (int q = 0; q < 4; ++q) {
    SCOPED_TRACE("quadrant " + std::to_string(q));
    const vec3 want = testing::stored(testing::quad_colours[static_cast<std::size_t>(q)]);
    const vec3 got = testing::quadrant_mean(image, q);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], want[k], 0.03f * want[k] + 1e-3f);
  }
  std::filesystem::remove_all(dir);
}

// A textured scene's GPU image against the CPU's. With the packed texels the GPU filters as the CPU
// does: the means agree within the noise and nearly every pixel within 1e-3 (`close`). With the
// texture unit (`hardware`, the image `gpu`) each lookup may differ by its bound (docs/textures.md:
// 2^-8 of its value plus 3/256 of its texels' range), so pixels differ beyond 1e-3 and the mean
// is held to that bound: within the noise plus 4/256 of the CPU's.
void expect_textures_match_the_cpu(const prepared_scene& ps, const render_settings& rs, const render_result& gpu,
                                   const render_result& cpu, const std::string& name, double close) {
  render_settings packed = rs;
  packed.textures = texture_storage::packed;
  const comparison c = compare(render_cuda(ps, packed), cpu);
  std::printf("%s, packed: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g, %.2f %% of pixels within 1e-3\n", name.c_str(),
              c.mean_a, c.mean_b, c.mean_diff, c.stderr_diff, 100 * c.close_fraction);
  EXPECT_GT(c.mean_a, 0.01);
  EXPECT_LE(std::fabs(c.mean_diff), 4 * c.stderr_diff + 1e-6 * c.mean_b);
  EXPECT_GE(c.close_fraction, close);
  const comparison h = compare(gpu, cpu);
  std::printf("%s, hardware: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g, %.2f %% of pixels within 1e-3\n", name.c_str(),
              h.mean_a, h.mean_b, h.mean_diff, h.stderr_diff, 100 * h.close_fraction);
  EXPECT_LE(std::fabs(h.mean_diff), 4 * h.stderr_diff + 4.0 / 256 * h.mean_b);
}

TEST(GpuRender, TexturedSceneMatchesTheCpuAndEveryStrategy) {
  SKIP_WITHOUT_GPU();
  const scene s = load_scene(sieve::test::scenes_dir() + "/textured/textured.toml",
                             {"film.width=96", "film.height=72", "film.spp=4", "film.seed=3"});
  ASSERT_FALSE(s.normals.empty());
  ASSERT_FALSE(s.textures.empty());
  const prepared_scene ps(s);
  render_settings rs = render_settings::from(s);
  rs.max_queue = 4000;
  const render_result want = render_cuda(ps, rs);
  const render_result cpu = render_cpu(ps, rs);
  expect_textures_match_the_cpu(ps, rs, want, cpu, "textured", 0.99);
  for (const char* strategy : {"cub", "redzone", "space"})
    for (const char* traversal : {"dfs", "bfs"}) {
      SCOPED_TRACE(std::string(strategy) + " " + traversal);
      render_settings r = rs;
      r.strategy = strategy;
      r.traversal = parse_mode<traversal_kind>(traversal);
      EXPECT_TRUE(compare(render_cuda(ps, r), want).identical);
    }
  render_settings mega = rs;
  mega.integrator = integrator_kind::megakernel;
  EXPECT_TRUE(compare(render_cuda(ps, mega), want).identical);
}

TEST(GpuRender, IdenticalForEveryCudaStrategy) {
  SKIP_WITHOUT_GPU();
  const scene s = cornell("cornell-mirror-glass.toml", 80, 60, 3, 5);
  const prepared_scene ps(s);
  render_settings rs = render_settings::from(s);
  rs.max_queue = 1000;  // several chunks per pass
  rs.strategy = "cub";
  const render_result want = render_cuda(ps, rs);
  ASSERT_GT(want.stats.extension_rays, 0U);
  int ran = 0;
  for (const auto& info : sieve::compaction_strategies()) {
    bool fits = false;
    for (const auto f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
      fits = fits || info.takes(sieve::backend::cuda, f);
    if (!fits) continue;
    SCOPED_TRACE(std::string(info.name));
    rs.strategy = std::string(info.name);
    const render_result got = render_cuda(ps, rs);
    ++ran;
    EXPECT_TRUE(compare(got, want).identical);
    for (std::size_t b = 0; b < want.stats.bounces.size(); ++b)
      EXPECT_EQ(got.stats.bounces[b].live, want.stats.bounces[b].live) << "bounce " << b;
    EXPECT_EQ(got.stats.shadow_rays, want.stats.shadow_rays);
  }
  EXPECT_GE(ran, 4);
  // Reordering by the GPU radix sorts changes the queue's order, never the image.
  for (const char* sort : {"onesweep", "cub"})
    for (const auto key : {reorder_key::morton, reorder_key::octant, reorder_key::termination}) {
      SCOPED_TRACE(std::string(sort) + " " + std::string(to_string(key)));
      render_settings r = rs;
      r.strategy = "atomic";  // unstable too
      r.reorder = key;
      r.sort = parse_mode<sort_kind>(sort);
      r.profile_stages = true;
      const render_result got = render_cuda(ps, r);
      EXPECT_TRUE(compare(got, want).identical);
      EXPECT_GT(got.stats.stage_ms("reorder"), 0.0);
    }
  // The index queue (compacted 4-byte indices, state in place) and producer-side append (warp_append
  // in shade, no pass): the same image, with and without reordering, DFS and BFS.
  for (const char* queue : {"index", "append"})
    for (const char* strategy : {"space", "redzone", "cub", "thrust"})
      for (const char* traversal : {"dfs"})
        for (const auto key : {reorder_key::none, reorder_key::morton}) {
          if (std::string(queue) == "append" && std::string(strategy) != "space") continue;  // no strategy runs
          SCOPED_TRACE(std::string(queue) + " " + strategy + " " + traversal + " " + std::string(to_string(key)));
          render_settings r = rs;
          r.queue = parse_mode<queue_mode>(queue);
          r.strategy = strategy;
          r.traversal = parse_mode<traversal_kind>(traversal);
          r.reorder = key;
          const render_result got = render_cuda(ps, r);
          EXPECT_TRUE(compare(got, want).identical);
          for (std::size_t b = 0; b < want.stats.bounces.size(); ++b)
            EXPECT_EQ(got.stats.bounces[b].live, want.stats.bounces[b].live) << "bounce " << b;
          const bool graph = std::string(queue) == "append" || std::string(strategy) != "thrust";
          EXPECT_EQ(got.stats.wave_launch, graph ? "graph" : "stream");
        }
  rs.max_queue = 1U << 20;  // one chunk: the same image
  rs.strategy = "redzone";
  EXPECT_TRUE(compare(render_cuda(ps, rs), want).identical);
}

// The BFS traversal renders the DFS's image: in the wave's graph (closest_async, its level loop a
// WHILE node; one synchronisation a wave) for a strategy of each form and every queue, and with stage
// times (the synchronous path, the tracer's host-driven loop timing its compaction). Two tests, so that
// scripts/gpu-check can run the second under synccheck and racecheck, which misreport barrier kernels
// inside a WHILE node (tests/sanitizer_while_probe.cu).
// Both tests' scene, their BFS settings and what those must reproduce: the DFS's image (cub).
struct bfs_case {
  scene s = cornell("cornell-mirror-glass.toml", 80, 60, 3, 5);
  prepared_scene ps{s};
  render_settings rs = render_settings::from(s);
  render_result want;
  bfs_case() {
    rs.max_queue = 1000;  // several chunks per pass
    rs.traversal = traversal_kind::bfs;
    render_settings dfs = rs;
    dfs.traversal = traversal_kind::dfs;
    dfs.strategy = "cub";
    want = render_cuda(ps, dfs);
  }
};

TEST(GpuRender, BfsInTheWaveGraphIsIdentical) {
  SKIP_WITHOUT_GPU();
  const bfs_case c;
  for (const char* queue : {"pass", "index", "append"})
    for (const char* strategy : {"space", "redzone", "cub"})
      for (const auto key : {reorder_key::none, reorder_key::morton}) {
        if (std::string(queue) != "pass" && std::string(strategy) == "redzone") continue;
        if (std::string(queue) == "append" && std::string(strategy) != "space") continue;  // no strategy runs
        SCOPED_TRACE(std::string(queue) + " bfs " + strategy + " " + std::string(to_string(key)));
        render_settings r = c.rs;
        r.queue = parse_mode<queue_mode>(queue);
        r.strategy = strategy;
        r.reorder = key;
        const render_result got = render_cuda(c.ps, r);
        EXPECT_TRUE(compare(got, c.want).identical);
        EXPECT_EQ(got.stats.wave_launch, "graph");
        EXPECT_EQ(got.stats.host_syncs, got.stats.waves);
      }
}

TEST(GpuRender, BfsWithStageTimesIsIdentical) {
  SKIP_WITHOUT_GPU();
  const bfs_case c;
  for (const char* strategy : {"space", "redzone", "cub", "thrust"}) {
    SCOPED_TRACE(std::string("bfs ") + strategy);
    render_settings r = c.rs;
    r.strategy = strategy;
    r.profile_stages = true;
    const render_result timed = render_cuda(c.ps, r);
    EXPECT_TRUE(compare(timed, c.want).identical);
    EXPECT_EQ(timed.stats.wave_launch, "stream");
    EXPECT_GT(timed.stats.bfs_compact_ms, 0.0);
  }
}

// The loop clock on the GPU: the same loop names as the CPU's render, every loop with a positive
// time, in the wave's graph (event record nodes, read after each replay: no synchronisation added)
// and on the stream (launched over the live counts, as on the CPU); the BFS tracer's host-driven
// loop and the megakernel too.
TEST(GpuRender, LoopClockNamesTheSameLoopsAsTheCpu) {
  SKIP_WITHOUT_GPU();
  const scene s = cornell("cornell-mirror-glass.toml", 80, 60, 3, 5);
  const prepared_scene ps(s);
  render_settings rs = render_settings::from(s);
  rs.max_queue = 1000;  // 15 waves of (at most) 1000 paths
  rs.strategy = "atomic";
  rs.reorder = reorder_key::octant;
  const render_result fast = render_cuda(ps, rs);
  EXPECT_TRUE(fast.stats.loops.empty());
  rs.profile_stages = true;
  render_settings on_cpu = rs;
  on_cpu.strategy = "auto";  // atomic is a GPU strategy; the loops do not depend on it
  const render_result cpu = render_cpu(ps, on_cpu);
  auto names = [](const render_stats& st) {
    std::vector<std::string> n;
    for (const auto& l : st.loops) n.push_back(l.name);
    return n;
  };
  ASSERT_EQ(names(cpu.stats),
            (std::vector<std::string>{"wave.begin", "generate", "extend", "shade", "connect", "reorder.keys",
                                      "reorder.gather", "accumulate"}));
  const std::uint64_t waves = 15, vertices = s.film.max_bounces + 1, capacity = 1000;

  const render_result graph = render_cuda(ps, rs);
  EXPECT_EQ(graph.stats.wave_launch, "graph");
  EXPECT_EQ(graph.stats.host_syncs, graph.stats.waves);  // the clock waits for nothing
  // Waves 1 and 9 of 15 enqueued on the stream with their events, the rest replayed from the bare
  // graph; the timed waves' figures scaled to all 15 waves.
  EXPECT_TRUE(graph.stats.sampled_waves);
  EXPECT_EQ(graph.stats.measured_waves, 2U);
  EXPECT_EQ(graph.stats.graphs, 1U);
  EXPECT_TRUE(compare(graph, fast).identical);
  EXPECT_EQ(names(graph.stats), names(cpu.stats));
  for (const auto& l : graph.stats.loops) EXPECT_GT(l.ms, 0.0) << l.name;
  ASSERT_NE(graph.stats.loop("extend"), nullptr);
  EXPECT_EQ(graph.stats.loop("extend")->launches, waves * vertices);  // every bounce, over the capacity
  EXPECT_EQ(graph.stats.loop("extend")->items, waves * vertices * capacity);
  EXPECT_LE(graph.stats.loop("shade")->ms, graph.stats.stage_ms("shade"));
  render_settings every = rs;  // every wave timed: one graph, the same counts unscaled
  every.profile_every = 1;
  const render_result all = render_cuda(ps, every);
  EXPECT_TRUE(compare(all, fast).identical);
  EXPECT_EQ(all.stats.measured_waves, waves);
  EXPECT_EQ(all.stats.graphs, 1U);
  EXPECT_EQ(all.stats.loop("extend")->launches, waves * vertices);

  rs.wave_graph = false;  // on the stream: over the live counts
  const render_result stream = render_cuda(ps, rs);
  EXPECT_EQ(stream.stats.wave_launch, "stream");
  EXPECT_EQ(names(stream.stats), names(cpu.stats));
  for (const auto& l : stream.stats.loops) EXPECT_GT(l.ms, 0.0) << l.name;
  ASSERT_NE(stream.stats.loop("extend"), nullptr);
  EXPECT_EQ(stream.stats.loop("extend")->items, stream.stats.extension_rays);
  EXPECT_EQ(stream.stats.loop("generate")->items, stream.stats.bounces[0].live);

  rs.wave_graph = true;
  rs.reorder = reorder_key::none;
  rs.traversal = traversal_kind::bfs;  // profiled: the tracer's host-driven loop
  rs.strategy = "cub";
  const render_result bfs = render_cuda(ps, rs);
  EXPECT_EQ(bfs.stats.wave_launch, "stream");
  for (const char* loop : {"bfs.plan", "bfs.begin", "bfs.expand", "bfs.finish"}) {
    const exec::loop_time* l = bfs.stats.loop(loop);
    ASSERT_NE(l, nullptr) << loop;
    EXPECT_GT(l->ms, 0.0) << loop;
  }
  EXPECT_EQ(bfs.stats.loop("bfs.begin")->launches, bfs.stats.loop("shade")->launches);

  rs.traversal = traversal_kind::dfs;
  rs.integrator = integrator_kind::megakernel;
  const render_result mega = render_cuda(ps, rs);
  EXPECT_EQ(names(mega.stats), (std::vector<std::string>{"megakernel", "accumulate"}));
  for (const auto& l : mega.stats.loops) EXPECT_GT(l.ms, 0.0) << l.name;
}

// No host round trip inside a wave: the wave is captured once as a CUDA graph and replayed for
// every wave (the last, smaller one too), one synchronisation per wave; thrust and the BFS take the
// per-bounce synchronous path. Stage times (events inside the graph) change no pixel.
TEST(GpuRender, OneGraphPerRenderAndOneSyncPerWave) {
  SKIP_WITHOUT_GPU();
  const scene s = cornell("cornell-mirror-glass.toml", 80, 60, 3, 5);
  const prepared_scene ps(s);
  render_settings rs = render_settings::from(s);
  rs.max_queue = 1000;  // 5 chunks per pass, the last of 800 pixels
  rs.strategy = "atomic";
  const render_result fast = render_cuda(ps, rs);
  EXPECT_EQ(fast.stats.wave_launch, "graph");
  EXPECT_EQ(fast.stats.graphs, 1U);
  EXPECT_EQ(fast.stats.waves, 15U);
  EXPECT_EQ(fast.stats.host_syncs, fast.stats.waves);
  EXPECT_TRUE(fast.stats.stages.empty());
  EXPECT_EQ(fast.stats.bounces[0].live, 3U * 80 * 60);
  rs.profile_stages = true;
  rs.reorder = reorder_key::octant;
  const render_result timed = render_cuda(ps, rs);
  EXPECT_EQ(timed.stats.host_syncs, timed.stats.waves);
  EXPECT_TRUE(compare(timed, fast).identical);
  for (const char* stage : {"generate", "extend", "shade", "connect", "compact", "reorder", "accumulate"})
    EXPECT_GT(timed.stats.stage_ms(stage), 0.0) << stage;
  for (std::size_t b = 0; b < fast.stats.bounces.size(); ++b)
    EXPECT_EQ(timed.stats.bounces[b].live, fast.stats.bounces[b].live) << "bounce " << b;
  rs.reorder = reorder_key::none;
  rs.profile_stages = false;
  rs.strategy = "thrust";  // reads its counts back: the synchronous path
  const render_result thrust = render_cuda(ps, rs);
  EXPECT_EQ(thrust.stats.wave_launch, "stream");
  EXPECT_GT(thrust.stats.host_syncs, thrust.stats.waves);
  EXPECT_TRUE(compare(thrust, fast).identical);
  rs.strategy = "atomic";
  rs.wave_graph = false;  // the same loop on the stream, a count read back per bounce
  const render_result stream = render_cuda(ps, rs);
  EXPECT_EQ(stream.stats.wave_launch, "stream");
  EXPECT_GT(stream.stats.host_syncs, stream.stats.waves);
  EXPECT_TRUE(compare(stream, fast).identical);
}

// The same device functions in two kernels, built without multiply-add contraction (renderer/
// CMakeLists.txt): bit-identical, on the Cornell box and on the sphere room's million triangles
// (where contraction left to the compiler made the two differ).
// The microfacet materials on the GPU: the mirror/glass box with its blocks a rough tinted metal
// (the glTF model) and a rough glass, and the walls' white a glTF plastic. The GPU's image matches
// the CPU's within the Monte Carlo error, and the megakernel's equals the wavefront's bit for bit.
TEST(GpuRender, MicrofacetMaterialsMatchTheCpuAndTheMegakernel) {
  SKIP_WITHOUT_GPU();
  for (const bool thin : {false, true}) {
    SCOPED_TRACE(thin ? "thin" : "thick");
    const scene s = load_scene(sieve::test::scenes_dir() + "/cornell-box/cornell-mirror-glass.toml",
                               test_scenes::microfacet_box(thin, 96, 4));
    const prepared_scene ps(s);
    render_settings rs = render_settings::from(s);
    const render_result gpu = render_cuda(ps, rs);
    const comparison c = compare(gpu, render_cpu(ps, rs));
    std::printf("microfacet box: GPU mean %.6f, CPU mean %.6f, diff %.3g +- %.3g\n", c.mean_a, c.mean_b, c.mean_diff,
                c.stderr_diff);
    EXPECT_GT(c.mean_a, 0.01);
    EXPECT_LE(std::fabs(c.mean_diff), 4 * c.stderr_diff + 1e-6 * c.mean_b);
    EXPECT_GE(c.close_fraction, 0.99);
    rs.integrator = integrator_kind::megakernel;
    EXPECT_TRUE(compare(render_cuda(ps, rs), gpu).identical);
  }
}

// Alpha on the GPU: a cut-out (MASK through a texture) in front of a blended quad, lit by a light
// whose shadow rays cross both: the GPU's image matches the CPU's, and is identical for the DFS, the
// BFS, the index queue and the megakernel (every traversal asks the same predicate
// with the same hash). The DamagedHelmet under the sky (the glTF model with base colour,
// metallic-roughness, normal and emissive textures) likewise.
TEST(GpuRender, CutOutsAndThePbrHelmetMatchTheCpuAndEveryTraversal) {
  SKIP_WITHOUT_GPU();
  std::vector<scene> scenes{testing::cutout_scene(64, 8)};
  // JPEG is read in every build (libjpeg-turbo), one without OpenImageIO too: the helmet is never left out.
  scenes.push_back(load_scene(sieve::test::scenes_dir() + "/helmet/helmet.toml",
                              {"film.width=64", "film.height=64", "film.spp=4", "film.seed=3"}));
  ASSERT_FALSE(scenes.back().tangents.empty());
  for (const scene& each : scenes) {
    const scene* s = &each;
    SCOPED_TRACE(s->name);
    const prepared_scene ps(*s);
    const render_settings rs = render_settings::from(*s);
    const render_result want = render_cuda(ps, rs);
    // A blended cut-out's decision hashes the ray's bits: a ray a rounding apart on the GPU decides
    // anew (noise of mean zero, which the mean's test bounds): 97 % of the pixels agree on the H200.
    expect_textures_match_the_cpu(ps, rs, want, render_cpu(ps, rs), s->name, s == &scenes.front() ? 0.95 : 0.98);
    render_settings r = rs;
    r.traversal = traversal_kind::bfs;
    EXPECT_TRUE(compare(render_cuda(ps, r), want).identical) << "bfs";
    render_settings q = rs;
    q.queue = queue_mode::index;
    EXPECT_TRUE(compare(render_cuda(ps, q), want).identical) << "index queue";
    render_settings mega = rs;
    mega.integrator = integrator_kind::megakernel;
    EXPECT_TRUE(compare(render_cuda(ps, mega), want).identical) << "megakernel";
  }
}

TEST(GpuRender, MegakernelMatchesTheWavefront) {
  SKIP_WITHOUT_GPU();
  for (const scene& s : {cornell("cornell-mirror-glass.toml", 96, 96, 4, 9), cornell("sphere-room.toml", 64, 48, 2, 3, "procedural")}) {
    const prepared_scene ps(s);
    render_settings rs = render_settings::from(s);
    const render_result wavefront = render_cuda(ps, rs);
    rs.integrator = integrator_kind::megakernel;
    const render_result mega = render_cuda(ps, rs);
    const comparison c = compare(mega, wavefront);
    std::printf("megakernel vs wavefront on the GPU, %zu triangles: %s, %.2f %% of pixels within 1e-3\n", s.triangles.size(),
                c.identical ? "bit-identical" : "not bit-identical", 100 * c.close_fraction);
    EXPECT_TRUE(c.identical);
    EXPECT_EQ(mega.stats.extension_rays, wavefront.stats.extension_rays);
    EXPECT_EQ(mega.stats.shadow_rays, wavefront.stats.shadow_rays);
  }
}

// Shading by material family on the GPU (wavefront/route.hpp): on the heavy-material scene every
// routing gives the branching kernel's bits, inside the wave's graph and on the stream, for every
// queue and both traversals, and the megakernel's too; with stage times the family kernels and the
// route stage are in the tables.
TEST(GpuRender, EveryRoutingIsIdentical) {
  SKIP_WITHOUT_GPU();
  const scene s = load_scene(sieve::test::scenes_dir() + "/materials/materials.toml",
                             test_scenes::small_materials(96, 54, 4));
  const prepared_scene ps(s);
  render_settings base = render_settings::from(s);
  base.max_queue = 96 * 54 * 3;  // waves of three samples, then one
  const render_result want = render_cuda(ps, base);
  EXPECT_GT(want.stats.shadow_rays, 0U);
  for (const auto queue : {queue_mode::pass, queue_mode::index, queue_mode::append})
    for (const auto traversal : {traversal_kind::dfs, traversal_kind::bfs})
      for (const bool graph : {true, false})
        for (const auto routing : {routing_kind::multisplit, routing_kind::queues, routing_kind::sort,
                                   routing_kind::megakernel}) {
          render_settings r = base;
          r.queue = queue;
          r.traversal = traversal;
          r.wave_graph = graph;
          r.routing = routing;
          SCOPED_TRACE(std::string(to_string(routing)) + ", " + std::string(to_string(queue)) + ", " +
                       std::string(to_string(traversal)) + (graph ? ", graph" : ", stream"));
          const render_result got = render_cuda(ps, r);
          EXPECT_TRUE(compare(got, want).identical);
          EXPECT_EQ(got.stats.shadow_rays, want.stats.shadow_rays);
        }
  for (const auto routing : {routing_kind::multisplit, routing_kind::queues, routing_kind::sort}) {
    render_settings r = base;
    r.routing = routing;
    r.profile_stages = true;
    const render_result got = render_cuda(ps, r);
    EXPECT_TRUE(compare(got, want).identical) << to_string(routing);
    EXPECT_GT(got.stats.stage_ms("route"), 0.0) << to_string(routing);
    for (const char* name : {"shade.miss", "shade.diffuse", "shade.conductor", "shade.dielectric", "shade.pbr"})
      EXPECT_NE(got.stats.loop(name), nullptr) << to_string(routing) << " " << name;
    EXPECT_EQ(got.stats.loop("shade"), nullptr);
  }
}


// The tree the GPU builds (PLOC, every layout on the device, the default when the GPU renders) gives
// the image the SAH tree uploaded from the host gives, bit for bit, on every depth-first tree choice.
TEST(RenderCuda, DeviceBuiltTreeRendersAsTheSahTree) {
  SKIP_WITHOUT_GPU();
  for (const char* name : {"cornell-box/cornell-box.toml", "third-party/sponza/sponza.toml"}) {
    SCOPED_TRACE(name);
    const scene s = load_scene(sieve::test::scenes_dir() + "/" + name,
                               {"film.width=64", "film.height=48", "film.spp=4", "film.max_bounces=3"});
    const prepared_scene sah(s), built(s, bvh_builder::automatic, true);
    ASSERT_NE(built.device(), nullptr);
    EXPECT_TRUE(built.tree().binary.nodes.empty()) << "nothing of the tree on the host";
    for (const bvh_layout layout : {bvh_layout::automatic, bvh_layout::binary, bvh_layout::cwbvh}) {
      render_settings settings = render_settings::from(s);
      settings.bvh = layout;
      const render_result a = render_cuda(sah, settings), b = render_cuda(built, settings);
      ASSERT_EQ(a.sum.size(), b.sum.size());
      EXPECT_EQ(std::memcmp(a.sum.data(), b.sum.data(), a.sum.size() * sizeof(vec3)), 0) << to_string(layout);
    }
    render_settings bfs = render_settings::from(s);
    bfs.traversal = traversal_kind::bfs;
    const render_result a = render_cuda(sah, bfs), b = render_cuda(built, bfs);
    EXPECT_EQ(std::memcmp(a.sum.data(), b.sum.data(), a.sum.size() * sizeof(vec3)), 0) << "bfs";
  }
}

}  // namespace
}  // namespace sieve::render
