// Shading by material family (wavefront/route.hpp): every routing renders the same bits as the one
// kernel that branches, on every queue and traversal, and each family's kernel shades its own paths.
#include <exec/exec.hpp>
#include <run/render.hpp>
#include <scene/load.hpp>
#include <wavefront/route.hpp>

#include <gtest/gtest.h>

#include "materials_scene.hpp"

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

const std::filesystem::path scenes_dir = SIEVE_SCENES_DIR;

scene materials_scene() {
  return load_scene(scenes_dir / "materials" / "materials.toml", test_scenes::small_materials(48, 27, 2));
}

constexpr routing_kind routed[] = {routing_kind::multisplit, routing_kind::queues, routing_kind::sort};

TEST(Routing, TheMaterialsSceneHoldsEveryFamily) {
  const scene s = materials_scene();
  const prepared_scene ps(s);
  const scene_view v = ps.view(s.film.width, s.film.height);
  std::vector<int> seen(material_families, 0);
  for (std::uint32_t m = 0; m < v.material_count; ++m) ++seen[static_cast<std::size_t>(family_of(v.surfaces[m].kind))];
  EXPECT_FALSE(s.environment_map.empty());  // misses see the sky
  for (std::uint32_t f = 1; f < material_families; ++f) EXPECT_GE(seen[f], 12) << shade_family_names[f];
  EXPECT_FALSE(s.textures.empty());
}

TEST(Routing, EveryModeRendersTheSameBits) {
  const scene s = materials_scene();
  const prepared_scene ps(s);
  render_settings base = render_settings::from(s);
  base.max_queue = 700;  // several waves, a pass cut into chunks
  const render_result want = render_cpu(ps, base);
  ASSERT_GT(want.stats.shadow_rays, 0U);
  for (const auto queue : {queue_mode::pass, queue_mode::index, queue_mode::append})
    for (const auto traversal : {traversal_kind::dfs, traversal_kind::bfs})
      for (const char* strategy : {"std", "redzone"})
        for (const auto routing : {routing_kind::branch, routing_kind::multisplit, routing_kind::queues,
                                   routing_kind::sort, routing_kind::megakernel}) {
          render_settings r = base;
          r.queue = queue;
          r.traversal = traversal;
          r.strategy = strategy;
          r.routing = routing;
          SCOPED_TRACE(std::string(to_string(routing)) + ", " + std::string(to_string(queue)) + ", " +
                       std::string(to_string(traversal)) + ", " + strategy);
          const render_result got = render_cpu(ps, r);
          ASSERT_EQ(got.sum.size(), want.sum.size());
          EXPECT_EQ(std::memcmp(got.sum.data(), want.sum.data(), want.sum.size() * sizeof(vec3)), 0);
          EXPECT_EQ(got.stats.shadow_rays, want.stats.shadow_rays);
        }
}

// With stage times: a `route` stage, one loop per family, and the family loops together shade each
// live path of each bounce once; the three routings give each family the same paths.
TEST(Routing, EachFamilysKernelShadesItsOwnPaths) {
  const scene s = materials_scene();
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.profile_stages = true;
  const render_result branch = render_cpu(ps, r);
  EXPECT_NE(branch.stats.loop("shade"), nullptr);
  EXPECT_EQ(branch.stats.loop("shade.diffuse"), nullptr);
  EXPECT_EQ(branch.stats.stage_ms("route"), 0.0);
  std::uint64_t live = 0;
  for (const auto& b : branch.stats.bounces) live += b.live;
  std::vector<std::uint64_t> first;
  for (const auto routing : routed) {
    SCOPED_TRACE(std::string(to_string(routing)));
    r.routing = routing;
    const render_result got = render_cpu(ps, r);
    EXPECT_EQ(got.stats.loop("shade"), nullptr);
    EXPECT_GT(got.stats.stage_ms("route"), 0.0);
    std::vector<std::uint64_t> items;
    std::uint64_t shaded = 0;
    for (const char* name : shade_family_names) {
      const exec::loop_time* l = got.stats.loop(name);
      ASSERT_NE(l, nullptr) << name;
      EXPECT_GT(l->items, 0U) << name;  // every family is hit (and missed: the sky)
      items.push_back(l->items);
      shaded += l->items;
    }
    EXPECT_EQ(shaded, live);
    if (first.empty()) first = items;
    EXPECT_EQ(items, first);
  }
}

// The sort routing's bounds from sorted keys (family above 2 material bits; padding sorts last).
TEST(Routing, BoundsFromSortedKeys) {
  const std::uint32_t pad = (1U << 5) - 1;
  auto bounds_of = [&](std::vector<std::uint32_t> keys, std::uint32_t live) {
    std::vector<std::uint64_t> b(material_families + 1, 99);
    route_bounds(exec::cpu{}, static_cast<std::uint32_t>(keys.size()), &live, keys.data(), 2, b.data());
    return b;
  };
  EXPECT_EQ(bounds_of({0 << 2, 0 << 2 | 3, 2 << 2, 2 << 2 | 1, 2 << 2 | 1, 4 << 2, pad}, 6),
            (std::vector<std::uint64_t>{0, 2, 2, 5, 5, 6}));
  EXPECT_EQ(bounds_of({pad, pad}, 0), (std::vector<std::uint64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(bounds_of({3 << 2, 3 << 2}, 2), (std::vector<std::uint64_t>{0, 0, 0, 0, 2, 2}));
}

// Per-family queues: each entry appended once, to its hit's family.
TEST(Routing, QueuesHoldEachEntryInItsFamily) {
  const surface kinds[] = {{surface_kind::diffuse}, {surface_kind::mirror}, {surface_kind::rough_dielectric},
                           {surface_kind::pbr}, {surface_kind::conductor}};
  const std::uint32_t material_of[] = {0, 1, 2, 3, 4};
  constexpr std::uint32_t n = 1000;
  std::vector<hit> hits(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    hits[i].t = i % 6 == 5 ? hit{}.t : 1.0f;
    hits[i].prim = i % 6 == 5 ? hit{}.prim : i % 6;
  }
  std::vector<std::uint32_t> entries(material_families * n);
  std::vector<std::uint64_t> counts(material_families, 0);
  const family_queues q{entries.data(), counts.data(), n, kinds, material_of};
  route_append(exec::cpu{}, n, &n, hits.data(), q);
  const family_lists lists = q.lists();
  std::vector<int> seen(n, 0);
  for (std::uint32_t f = 0; f < material_families; ++f)
    for (std::uint64_t k = lists.begin(f); k < lists.end(f); ++k) {
      const std::uint32_t i = entries[k];
      ++seen[i];
      EXPECT_EQ(static_cast<std::uint32_t>(family_at({.surfaces = kinds, .material_of = material_of}, hits[i])), f);
    }
  for (std::uint32_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << i;
  EXPECT_EQ(counts[static_cast<std::size_t>(material_family::miss)], n / 6);
  EXPECT_EQ(counts[static_cast<std::size_t>(material_family::conductor)], 2 * n / 6);  // mirror and conductor
}

TEST(Routing, SceneKeyAndNames) {
  EXPECT_EQ(load_scene(scenes_dir / "cornell-box" / "cornell-box.toml", {"compaction.routing=sort"}).compaction.routing,
            routing_kind::sort);
  EXPECT_EQ(load_scene(scenes_dir / "cornell-box" / "cornell-box.toml").compaction.routing, routing_kind::branch);
  try {
    load_scene(scenes_dir / "cornell-box" / "cornell-box.toml", {"compaction.routing=bucket"});
    FAIL() << "an unknown routing loads";
  } catch (const sieve::error& e) {
    EXPECT_NE(std::string(e.what()).find("branch, multisplit, queues, sort, megakernel"), std::string::npos) << e.what();
  }
  render_settings r;
  r.routing = routing_kind::megakernel;
  EXPECT_TRUE(r.uses_megakernel());
}

}  // namespace
}  // namespace sieve::render
