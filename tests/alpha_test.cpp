// Alpha (core/alpha.hpp) in every traversal on the CPU: a cut-out quad (glTF MASK through a texture,
// and BLEND's stochastic opacity) in front of an opaque one. Each traversal (pair DFS closest and
// any hit, the resumable walk, the 8-wide tree by octant order, the CPU's nearest-first wide
// traversal on both box tests, the compressed wide tree (the GPU's code), the BFS over both trees) must keep exactly the hits the predicate
// accepts: the same hits as brute force with the predicate, and, for the mask, the analytic answer.
#include <trace/bfs.hpp>
#include <trace/tracers.hpp>

#include <gtest/gtest.h>

#include "alpha_scene.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

using testing::alpha_scene;
using testing::make_alpha_scene;

hit brute_force(const alpha_scene& s, const ray& r) {
  hit best;
  best.t = r.tmax;
  for (std::uint32_t i = 0; i < s.triangles.size(); ++i) {
    tri_hit h;
    if (hit_triangle(s.triangles[i], r, best.t, h) && closer(h.t, i, best) && accept_hit(s.view(), r, i, h.u, h.v))
      best = {h.t, i, h.u, h.v};
  }
  if (!best.found()) best.t = 1e30f;
  return best;
}

// Every traversal's closest hits of the scene's rays (named), the alpha view set on the BVH's.
std::vector<std::pair<std::string, std::vector<hit>>> every_traversal(const alpha_scene& s, const bvh& b) {
  bvh_view v = view_of(b, s.triangles);
  v.alpha = s.view();
  std::vector<std::pair<std::string, std::vector<hit>>> out;
  auto each = [&](const std::string& name, const std::function<hit(const ray&)>& f) {
    std::vector<hit> hits;
    for (const ray& r : s.rays) hits.push_back(f(r));
    out.emplace_back(name, std::move(hits));
  };
  each("dfs", [&](const ray& r) { return closest_hit(pairs_of(v), r); });
  each("trace_closest", [&](const ray& r) { return trace_closest(v, cpu_traversals.bounce, r); });
  for (const auto& [t, name] : mode_names<traversal>::table)  // every depth-first traversal by its tracer
    if (!t.breadth_first() && t.boxes != wide_path::avx512)
      each(std::string(name), [&, t = t](const ray& r) { return visit_tracer(v, t, [&](const auto& x) { return x.closest(r); }); });
  each("wide octant", [&](const ray& r) { return wide_closest_hit(v.wide, r, scalar_boxes{}, v.alpha); });
  each("wide portable", [&](const ray& r) { return wide_closest_hit_cpu(v.wide, r, wide_path::portable, v.alpha); });
  if (cpu_has_avx2())
    each("wide avx2", [&](const ray& r) { return wide_closest_hit_cpu(v.wide, r, wide_path::avx2, v.alpha); });
  if (cpu_has_avx512())
    each("wide avx512", [&](const ray& r) { return wide_closest_hit_cpu(v.wide, r, wide_path::avx512, v.alpha); });
  each("compressed wide", [&](const ray& r) { return cw_closest_hit(cw_of(v), r); });
  for (const trace_tree tree : {trace_tree::binary, trace_tree::wide, trace_tree::compressed}) {
    bfs_tracer tracer("auto", tree);
    std::vector<hit> hits(s.rays.size());
    tracer.closest(v, s.rays, hits);
    out.emplace_back(tree == trace_tree::wide ? "bfs wide" : tree == trace_tree::compressed ? "bfs compressed" : "bfs binary",
                     std::move(hits));
  }
  return out;
}

// Any hit, up to t = 1.5 (the front quad only): every traversal's answer per ray.
std::vector<std::pair<std::string, std::vector<bool>>> every_any_hit(const alpha_scene& s, const bvh& b) {
  bvh_view v = view_of(b, s.triangles);
  v.alpha = s.view();
  std::vector<std::pair<std::string, std::vector<bool>>> out;
  auto each = [&](const std::string& name, const std::function<bool(const ray&)>& f) {
    std::vector<bool> blocked;
    for (ray r : s.rays) {
      r.tmax = 1.5f;
      blocked.push_back(f(r));
    }
    out.emplace_back(name, std::move(blocked));
  };
  each("dfs", [&](const ray& r) { return any_hit(pairs_of(v), r); });
  each("trace_any", [&](const ray& r) { return trace_any(v, cpu_traversals.shadow, r); });
  for (const auto& [t, name] : mode_names<traversal>::table)
    if (!t.breadth_first() && t.boxes != wide_path::avx512)
      each(std::string(name), [&, t = t](const ray& r) { return visit_tracer(v, t, [&](const auto& x) { return x.any(r); }); });
  each("wide octant", [&](const ray& r) { return wide_any_hit(v.wide, r, scalar_boxes{}, v.alpha); });
  each("wide portable", [&](const ray& r) { return wide_any_hit_cpu(v.wide, r, wide_path::portable, v.alpha); });
  if (cpu_has_avx2()) each("wide avx2", [&](const ray& r) { return wide_any_hit_cpu(v.wide, r, wide_path::avx2, v.alpha); });
  if (cpu_has_avx512())
    each("wide avx512", [&](const ray& r) { return wide_any_hit_cpu(v.wide, r, wide_path::avx512, v.alpha); });
  each("compressed wide", [&](const ray& r) { return cw_any_hit(cw_of(v), r); });
  return out;
}

// MASK through the texture: alpha = 0 left of x = 0 and 1 right of it (bilinear in between,
// crossing the cut-off 0.5 at x = 0): rays on the left pass the front quad and hit the back one.
TEST(Alpha, MaskCutsOutTheSameHoleInEveryTraversal) {
  alpha_scene s;
  alpha_material front;
  front.mode = alpha_mode::mask;
  front.texture = 0;
  make_alpha_scene(s, front);
  const bvh b = build_bvh(s.triangles);
  for (const auto& [name, hits] : every_traversal(s, b)) {
    SCOPED_TRACE(name);
    for (std::size_t i = 0; i < s.rays.size(); ++i) {
      const bool left = s.rays[i].origin.x < 0;
      ASSERT_TRUE(hits[i].found()) << "ray " << i;
      ASSERT_EQ(hits[i].prim >= 2, left) << "ray " << i << " at x = " << s.rays[i].origin.x;
      ASSERT_NEAR(hits[i].t, left ? 2.0f : 1.0f, 1e-5f);
      const hit want = brute_force(s, s.rays[i]);
      ASSERT_EQ(hits[i].prim, want.prim) << "ray " << i;
    }
  }
  for (const auto& [name, blocked] : every_any_hit(s, b)) {
    SCOPED_TRACE(name);
    for (std::size_t i = 0; i < s.rays.size(); ++i) ASSERT_EQ(blocked[i], s.rays[i].origin.x > 0) << "shadow ray " << i;
  }
  // Without the alpha view the front quad is opaque everywhere (the predicate is the only change).
  const bvh_view opaque = view_of(b, s.triangles);
  for (const ray& r : s.rays) ASSERT_LT(closest_hit(pairs_of(opaque), r).prim, 2U);
}

// BLEND: the front quad stops a ray with probability 0.3, decided by a hash of the ray and the
// triangle, so every traversal (and its shadow ray) meets the same decision per ray, and about 30 %
// of the rays stop there (within 5 standard deviations of the binomial).
TEST(Alpha, BlendIsAStochasticOpacityThatEveryTraversalAgreesOn) {
  alpha_scene s;
  alpha_material front;
  front.mode = alpha_mode::blend;
  front.factor = 0.3f;
  make_alpha_scene(s, front);
  const bvh b = build_bvh(s.triangles);
  const auto all = every_traversal(s, b);
  std::size_t stopped = 0;
  for (std::size_t i = 0; i < s.rays.size(); ++i) {
    const hit want = brute_force(s, s.rays[i]);
    stopped += want.prim < 2;
    for (const auto& [name, hits] : all) ASSERT_EQ(hits[i].prim, want.prim) << name << ", ray " << i;
  }
  const double n = static_cast<double>(s.rays.size()), p = static_cast<double>(stopped) / n;
  EXPECT_NEAR(p, 0.3, 5 * std::sqrt(0.3 * 0.7 / n)) << stopped << " of " << n;
  for (const auto& [name, blocked] : every_any_hit(s, b))
    for (std::size_t i = 0; i < s.rays.size(); ++i)
      ASSERT_EQ(blocked[i], all.front().second[i].prim < 2) << name << ", shadow ray " << i;
}

// Opaque, and the two limits of each mode: factor 0 passes everything, factor 1 nothing.
TEST(Alpha, ModesAndLimits) {
  alpha_scene s;
  make_alpha_scene(s, alpha_material{}, 4);
  const ray r = s.rays[0];
  const alpha_view v = s.view();
  EXPECT_TRUE(accept_hit(v, r, 0, 0.2f, 0.2f));
  EXPECT_TRUE(accept_hit(alpha_view{}, r, 0, 0.2f, 0.2f));  // no table: opaque
  for (const alpha_mode m : {alpha_mode::mask, alpha_mode::blend}) {
    s.materials[0] = {m, 0.0f, 0.5f, -1, {}};
    EXPECT_FALSE(accept_hit(s.view(), r, 0, 0.2f, 0.2f));
    s.materials[0].factor = 1;
    EXPECT_TRUE(accept_hit(s.view(), r, 0, 0.2f, 0.2f));
    EXPECT_TRUE(accept_hit(s.view(), r, 2, 0.2f, 0.2f));  // the back quad's material is opaque
  }
  // The hash is a function of the ray and the triangle: the same twice, different for another triangle often.
  int differ = 0;
  for (const ray& q : s.rays) {
    EXPECT_EQ(ray_hash_uniform(q, 0), ray_hash_uniform(q, 0));
    differ += ray_hash_uniform(q, 0) != ray_hash_uniform(q, 1);
  }
  EXPECT_GT(differ, 12);
}

}  // namespace
}  // namespace sieve::render
