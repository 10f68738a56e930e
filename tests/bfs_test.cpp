// BFS traversal = DFS traversal, hit for hit, for every CPU compaction strategy that can compact
// its frontier (by bit mask, byte flags or removal list; stable or not, in place or not), over the
// binary tree and over the 8-wide one.
#include <trace/bfs.hpp>
#include <trace/bfs_driver.hpp>
#include <trace/dfs.hpp>

#include <gtest/gtest.h>

#include "hairball.hpp"

#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace sieve::render {
namespace {

// Every library strategy the frontier can use, and producer-side append.
std::vector<std::string> bfs_strategies() {
  std::vector<std::string> names = {std::string(bfs_append)};
  for (const auto& s : sieve::compaction_strategies())
    for (const auto f : {sieve::form::bit_mask, sieve::form::byte_flags, sieve::form::removal_list})
      if (s.takes(sieve::backend::cpu, f)) {
        names.emplace_back(s.name);
        break;
      }
  return names;
}

class BfsEqualsDfs : public ::testing::TestWithParam<std::tuple<std::string, trace_tree>> {};

TEST_P(BfsEqualsDfs, EveryHit) {
  const auto& [strategy, tree] = GetParam();
  const scene_data s = random_scene(3000, 20000, 11);
  const bvh b = build_bvh(s.tris);
  const bvh_view v = view_of(b, s.tris);
  bfs_tracer tracer(strategy, tree);
  std::vector<hit> got(s.rays.size());
  bfs_stats stats;
  for (int round = 0; round < 2; ++round) {  // the second round reuses the tracer's buffers
    tracer.closest(v, s.rays, got, &stats);
    std::size_t hits = 0;
    for (std::size_t i = 0; i < s.rays.size(); ++i) {
      const hit want = closest_hit(pairs_of(v), s.rays[i]);
      ASSERT_EQ(got[i].prim, want.prim) << "ray " << i;
      ASSERT_EQ(got[i].t, want.t) << "ray " << i;
      EXPECT_EQ(got[i].u, want.u);
      EXPECT_EQ(got[i].v, want.v);
      hits += want.found();
    }
    EXPECT_GT(hits, s.rays.size() / 4);
  }
  ASSERT_FALSE(stats.levels.empty());
  EXPECT_EQ(stats.levels.front().frontier, s.rays.size());
  // A level, or chunks of one, per step: the wide tree has as many levels as its depth.
  const std::size_t depth = tree == trace_tree::wide         ? b.wide.depth
                            : tree == trace_tree::compressed ? b.cw.depth
                                                           : b.stats.max_depth;
  EXPECT_GE(stats.levels.size(), depth);
  if (tree != trace_tree::binary) {
    EXPECT_LT(depth, b.stats.max_depth / 2);  // the wide trees' levels: fewer
  }
  std::size_t expanded = 0;
  for (const auto& l : stats.levels) expanded += l.frontier;
  EXPECT_EQ(stats.pairs, expanded);
  EXPECT_LE(stats.peak_pairs, bfs_stack_bound(s.rays.size(), bfs_arity(tree)));
  EXPECT_EQ(stats.form, tracer.form());
  EXPECT_GT(stats.expand_ms, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Cpu, BfsEqualsDfs,
                         ::testing::Combine(::testing::ValuesIn(bfs_strategies()),
                                            ::testing::Values(trace_tree::binary, trace_tree::wide, trace_tree::compressed)),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param);
                           std::replace(name.begin(), name.end(), '-', '_');
                           const trace_tree tree = std::get<1>(info.param);
                           return name + (tree == trace_tree::wide ? "_wide" : tree == trace_tree::compressed ? "_compressed" : "");
                         });

// A hairball (hairball.hpp): a ray's frontier holds a large part of the tree. Unbounded, a level of
// it would hold far more pairs than bfs_stack_bound; chunked, the stack stays under it and the hits
// still equal DFS's.
TEST(Bfs, HairballFrontierIsBounded) {
  const auto [tris, rays] = hairball();
  const bvh b = build_bvh(tris);
  const bvh_view v = view_of(b, tris);
  for (const trace_tree tree : {trace_tree::binary, trace_tree::wide, trace_tree::compressed})
  for (const std::string strategy : {"billeter", "redzone", "append"}) {  // out of place, in place, append
    SCOPED_TRACE(tree == trace_tree::wide ? "wide" : tree == trace_tree::compressed ? "compressed" : "binary");
    const unsigned arity = bfs_arity(tree);
    bfs_tracer tracer(strategy, tree);
    std::vector<hit> got(rays.size());
    bfs_stats stats;
    tracer.closest(v, rays, got, &stats);
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const hit want = closest_hit(pairs_of(v), rays[i]);
      ASSERT_EQ(got[i].prim, want.prim) << strategy << " ray " << i;
      ASSERT_EQ(got[i].t, want.t) << strategy << " ray " << i;
    }
    std::size_t expanded = 0;
    for (const auto& l : stats.levels) expanded += l.frontier;
    // Level by level, some level would have held at least this many pairs (pairs sit at inner
    // nodes: at most max_depth levels).
    const std::size_t depth = tree == trace_tree::wide         ? b.wide.depth
                              : tree == trace_tree::compressed ? b.cw.depth
                                                             : b.stats.max_depth;
    EXPECT_LE(stats.peak_pairs, bfs_stack_bound(rays.size(), arity)) << strategy;
    EXPECT_GT(stats.levels.size(), depth + 1) << strategy << ": expected chunked steps";
    if (tree != trace_tree::binary) continue;
    EXPECT_GT(expanded / depth, bfs_stack_bound(rays.size(), arity)) << "not a hairball";
  }
}

TEST(Bfs, ChunkSizes) {
  EXPECT_EQ(bfs_chunk(1000, 1000), 1000U);            // a whole level while it fits
  EXPECT_EQ(bfs_chunk(100000, 100), 1024U);           // few rays: bfs_min_chunk pairs
  EXPECT_EQ(bfs_chunk(3'000'000, 1'000'000), 2'000'000U);  // 2n per step
  EXPECT_EQ(bfs_chunk(7'500'000, 1'000'000), 500'000U);    // what is left of 8n
  EXPECT_EQ(bfs_chunk(9'000'000, 1'000'000), 1024U);       // past 8n: the least step
  EXPECT_EQ(bfs_chunk(std::size_t{1} << 36, std::size_t{1} << 36), std::size_t{1} << 30);  // 2c fits 32 bits
  // Eight children a pair: room for 7 more pairs per pair expanded; 8c fits 32 bits.
  EXPECT_EQ(bfs_chunk(1'000'000, 1'000'000, 8), 1'000'000U);  // the first level whole: (8n - n) / 7
  EXPECT_EQ(bfs_chunk(4'500'000, 1'000'000, 8), 500'000U);    // (8n - stack) / 7
  EXPECT_EQ(bfs_chunk(7'999'000, 1'000'000, 8), 1024U);
  EXPECT_EQ(bfs_chunk(std::size_t{1} << 36, std::size_t{1} << 36, 8), std::size_t{1} << 28);
  EXPECT_EQ(bfs_chunk_bound(1'000'000, 8), 1'142'857U);  // 8n / 7: a step never takes more
  EXPECT_EQ(bfs_sizes::for_rays(1'000'000, 8).frontier, 8U * 1'142'857U);
  EXPECT_EQ(bfs_stack_bound(1000, 8) - bfs_stack_bound(1000), 6 * (dfs_depth_limit() + 1) * bfs_min_chunk);
  // Capacities: a step's children, the spill stack; more rays than the buffers can index are refused.
  const bfs_sizes z = bfs_sizes::for_rays(1'000'000);
  EXPECT_EQ(z.frontier, 4'000'000U);
  EXPECT_EQ(z.stack, bfs_stack_bound(1'000'000));
  EXPECT_EQ(bfs_sizes::for_rays(10).frontier, 2 * bfs_min_chunk);
  EXPECT_THROW(bfs_sizes::for_rays((std::size_t{1} << 30) + 1), sieve::error);
}

// The step plan (bfs_driver.hpp, the same on the device): a frontier larger than the chunk spills its
// bottom onto the spill stack; a smaller one takes pairs from the spill stack's top.
TEST(Bfs, PlanSpillsAndPops) {
  bfs_state s;
  s.rays = 1000;
  s.kept = 5000;  // the last step's survivors: the frontier
  bfs_plan_step(s, 2);
  EXPECT_EQ(s.m, 2000U);  // 2n
  EXPECT_EQ(s.spilled, 3000U);
  EXPECT_EQ(s.spill_base, 0U);
  EXPECT_EQ(s.stack, 3000U);
  EXPECT_EQ(s.popped, 0U);
  EXPECT_EQ(s.work, 3000U);
  EXPECT_EQ(s.slots, 4000U);
  EXPECT_EQ(s.kept, 0U);
  EXPECT_EQ(s.peak, 5000U);
  s.kept = 100;
  bfs_plan_step(s, 2);
  EXPECT_EQ(s.m, 2000U);
  EXPECT_EQ(s.popped, 1900U);
  EXPECT_EQ(s.pop_base, 1100U);
  EXPECT_EQ(s.stack, 1100U);
  EXPECT_EQ(s.spilled, 0U);
  EXPECT_EQ(s.work, 2000U);
  s.kept = 0;
  s.stack = 0;
  bfs_plan_step(s, 2);
  EXPECT_EQ(s.m, 0U);
  EXPECT_EQ(s.work, 0U);
  EXPECT_EQ(s.steps, 2U);
}

TEST(ParallelFor, IndexRange) {
  // A 32-bit index refuses a loop it cannot count (before running any of it); a 64-bit one takes it.
  bool ran = false;
  EXPECT_THROW(exec::parallel_for(exec::cpu{}, "big", (std::size_t{1} << 32) + 1, [&](std::uint32_t) { ran = true; }),
               sieve::error);
  EXPECT_FALSE(ran);
  std::vector<std::uint64_t> seen(5000);
  exec::parallel_for<std::uint64_t>(exec::cpu{}, "wide", seen.size(), [&](std::uint64_t i) { seen[i] = i + 1; });
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], i + 1);
}

TEST(Bfs, EmptySceneAndNoRays) {
  const std::vector<triangle> none;
  const bvh b = build_bvh(none);
  bfs_tracer tracer("billeter");
  std::vector<ray> rays = {{{0, 0, 0}, {0, 0, 1}}};
  std::vector<hit> hits(1);
  hits[0].prim = 7;
  tracer.closest(view_of(b, none), rays, hits);
  EXPECT_FALSE(hits[0].found());
  std::vector<ray> no_rays;
  std::vector<hit> no_hits;
  EXPECT_NO_THROW(tracer.closest(view_of(b, none), no_rays, no_hits));
}

TEST(Bfs, BadArgumentsAreErrors) {
  EXPECT_THROW(bfs_tracer("no-such-strategy"), sieve::error);
  EXPECT_THROW(bfs_tracer("tile", trace_tree::compressed), sieve::error);  // the tile frontier: GPU only
  if (sieve::compaction_strategy("atomic").runs_on(sieve::backend::cuda)) {
    EXPECT_THROW(bfs_tracer("atomic"), sieve::error);  // CUDA only
  }
  const scene_data s = random_scene(10, 4, 1);
  const bvh b = build_bvh(s.tris);
  bfs_tracer tracer("std");
  std::vector<hit> too_few(2);
  EXPECT_THROW(tracer.closest(view_of(b, s.tris), s.rays, too_few), sieve::error);
  const bvh binary_only = build_bvh(s.tris, {.wide = false});  // no compressed layout to walk
  std::vector<hit> hits(s.rays.size());
  bfs_tracer compressed("append", trace_tree::compressed);
  EXPECT_THROW(compressed.closest(view_of(binary_only, s.tris), s.rays, hits), sieve::error);
}

}  // namespace
}  // namespace sieve::render
