// The wavefront path tracer on the CPU: physics (white furnace, direct light only), statistics (the
// Cornell box's mean across seeds within its Monte Carlo error), and its strongest invariant: the
// image is bit-identical whatever the compaction strategy, traversal or ray reordering. Also the
// image writers (PNG and EXR read back).
#include <core/bounds.hpp>
#include <core/image_io.hpp>
#include <core/memory.hpp>
#include <exec/walk.hpp>
#include <scene/load.hpp>
#include <run/render.hpp>
#include <frame/tiles.hpp>
#include <frame/waves.hpp>
#include <trace/tracers.hpp>
#include <frame/prepared_scene.hpp>

#include <gtest/gtest.h>

#include "microfacet_scenes.hpp"
#include "alpha_scene.hpp"
#include "hairball.hpp"

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>
#include <tinyexr.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace sieve::render {
namespace {

namespace fs = std::filesystem;
const fs::path scenes_dir = SIEVE_SCENES_DIR;

// A closed UV sphere of radius 1 around the origin, faces wound so their normals point inwards.
scene furnace(float albedo, float emission, std::uint32_t bounces) {
  scene s;
  s.name = "furnace";
  s.materials.push_back({"inside", material_kind::diffuse, {albedo, albedo, albedo}, {emission, emission, emission}, 1.5f});
  constexpr int rings = 24, segments = 48;
  auto at = [](int ring, int seg) {
    const float th = 3.14159265f * static_cast<float>(ring) / rings, ph = 6.2831853f * static_cast<float>(seg % segments) / segments;
    return vec3{std::sin(th) * std::cos(ph), std::cos(th), std::sin(th) * std::sin(ph)};
  };
  auto add = [&](vec3 a, vec3 b, vec3 c) {
    if (length(cross(b - a, c - a)) <= 0) return;  // the poles' degenerate halves
    if (dot(cross(b - a, c - a), a + b + c) > 0) std::swap(b, c);  // normal towards the centre
    s.triangles.push_back({a, b, c});
    s.material_of.push_back(0);
  };
  for (int r = 0; r < rings; ++r)
    for (int g = 0; g < segments; ++g) {
      add(at(r, g), at(r + 1, g), at(r + 1, g + 1));
      add(at(r, g), at(r + 1, g + 1), at(r, g + 1));
    }
  for (std::uint32_t i = 0; i < s.triangles.size(); ++i) s.emissive.push_back(i);
  s.camera = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, 60};
  s.film = {16, 16, 64, bounces, 1};
  return s;
}

struct pixel_stats {
  double mean = 0, stderr_mean = 0;
};

// Mean of the pixels' green channel and its standard error (pixels as independent estimates).
pixel_stats stats_of(const std::vector<vec3>& image) {
  double sum = 0, sq = 0;
  for (const vec3& p : image) {
    sum += p.y;
    sq += double{p.y} * p.y;
  }
  const double n = static_cast<double>(image.size()), mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sq / n - mean * mean) / (n - 1))};
}


// The scene's box reduced on every thread: the serial loop's box exactly, far vertices anywhere in
// the list (first, last, a block's edge) included; an empty list gives the empty box.
TEST(Bounds, ParallelBoxIsTheSerialBox) {
  std::vector<triangle> tris(200000);
  std::uint32_t x = 12345;
  const auto next = [&x] { return (x = x * 1664525U + 1013904223U) / 4294967296.0f * 2.0f - 1.0f; };
  for (auto& t : tris) t = {{next(), next(), next()}, {next(), next(), next()}, {next(), next(), next()}};
  tris.front().v1 = {-90, 3, 0};
  tris.back().v2 = {0, 77, 0};
  tris[1 << 14].v0 = {0, 0, -55};
  tris[(1 << 14) - 1].v2 = {0, -66, 88};
  aabb serial;
  for (const triangle& t : tris) serial.grow(t.v0), serial.grow(t.v1), serial.grow(t.v2);
  const aabb parallel = bounds_of(tris);
  EXPECT_EQ(parallel.lo.x, -90.0f);
  EXPECT_EQ(parallel.hi.y, 77.0f);
  EXPECT_EQ(parallel.lo.z, -55.0f);
  EXPECT_EQ(parallel.hi.z, 88.0f);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(parallel.lo[a], serial.lo[a]) << a;
    EXPECT_EQ(parallel.hi[a], serial.hi[a]) << a;
  }
  const aabb none = bounds_of({});
  EXPECT_TRUE(none.empty());
}

TEST(WhiteFurnace, RadianceConvergesToEmissionOverOneMinusAlbedo) {
  for (const float albedo : {0.5f, 0.8f}) {
    SCOPED_TRACE("albedo " + std::to_string(albedo));
    const scene s = furnace(albedo, 1.0f, 1024);
    const prepared_scene ps(s);
    const render_result r = render_cpu(ps, render_settings::from(s));
    const pixel_stats st = stats_of(r.mean());
    const double expected = 1.0 / (1.0 - albedo);
    EXPECT_LT(st.stderr_mean, 0.02 * expected) << "too noisy to judge";
    EXPECT_NEAR(st.mean, expected, 4 * st.stderr_mean + 0.002 * expected) << "stderr " << st.stderr_mean;
  }
}

TEST(WhiteFurnace, BounceLimitTruncatesTheSeries) {
  // With n bounces the radiance is Le (1 + a + ... + a^n): NEE and BSDF hits together give each term.
  const float albedo = 0.5f;
  for (const std::uint32_t bounces : {0U, 1U, 2U}) {
    const scene s = furnace(albedo, 1.0f, bounces);
    const prepared_scene ps(s);
    const pixel_stats st = stats_of(render_cpu(ps, render_settings::from(s)).mean());
    double expected = 0, term = 1;
    for (std::uint32_t b = 0; b <= bounces; ++b, term *= albedo) expected += term;
    EXPECT_NEAR(st.mean, expected, 4 * st.stderr_mean + 1e-3) << bounces << " bounces";
  }
}

// The furnace with a microfacet material, one bounce: seen from the centre every first hit is at
// normal incidence, and every direction from it meets the emitting sphere, so the radiance is
// E (1 + a), a the BSDF's albedo at normal incidence (from its own evaluation, by quadrature). Next-
// event estimation and BSDF sampling share the second term by MIS: a weight off would show.
TEST(WhiteFurnace, MicrofacetMaterialsOneBounce) {
  struct row {
    material_kind kind;
    float roughness, metallic;
    vec3 albedo;
  };
  for (const row r : {row{material_kind::conductor, 0.5f, 0, {1, 1, 1}}, row{material_kind::gltf, 0.4f, 0, {0.5f, 0.5f, 0.5f}},
                      row{material_kind::gltf, 0.7f, 0.5f, {0.9f, 0.9f, 0.9f}}}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(r.kind)) + " roughness " + std::to_string(r.roughness));
    scene s = furnace(0.5f, 1.0f, 1);
    s.film.spp = 256;
    material& m = s.materials[0];
    m.kind = r.kind;
    m.roughness = r.roughness;
    m.metallic = r.metallic;
    m.albedo = r.albedo;
    const prepared_scene ps(s);
    const pixel_stats st = stats_of(render_cpu(ps, render_settings::from(s)).mean());
    surface sf;
    sf.kind = r.kind == material_kind::conductor ? surface_kind::conductor : surface_kind::pbr;
    sf.roughness = r.roughness;
    sf.metallic = r.metallic;
    sf.albedo = r.albedo;
    const vec3 n{0, 0, 1};
    double a = 0;
    const int nt = 400, np = 200;
    for (int i = 0; i < nt; ++i)
      for (int j = 0; j < np; ++j) {
        const float ct = (i + 0.5f) / nt, st_ = std::sqrt(1 - ct * ct), ph = (j + 0.5f) * 6.2831853f / np;
        float pdf = 0;
        a += eval_bsdf(sf, n, {st_ * std::cos(ph), st_ * std::sin(ph), ct}, n, pdf).y * (1.0 / nt) * (6.2831853 / np);
      }
    EXPECT_NEAR(st.mean, 1.0 + a, 4 * st.stderr_mean + 0.005) << "a " << a << " stderr " << st.stderr_mean;
  }
}

// Next-event estimation picks light triangles by power: two quads of equal area, emissions 1 and 3,
// are picked a quarter and three quarters of the time; a black one never.
TEST(Lights, PickedByPower) {
  const fs::path dir = fs::temp_directory_path() / ("sieve_lights_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "tri.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    std::ofstream(dir / "s.toml") << "[[objects]]\nobj = \"tri.obj\"\n"
                                     "[[lights]]\ncorner = [0, 5, 0]\nedge1 = [2, 0, 0]\nedge2 = [0, 0, 3]\nemission = [1, 1, 1]\n"
                                     "[[lights]]\ncorner = [5, 5, 0]\nedge1 = [2, 0, 0]\nedge2 = [0, 0, 3]\nemission = [3, 2, 4]\n";
  }
  const scene s = load_scene(dir / "s.toml");
  fs::remove_all(dir);
  const prepared_scene ps(s);
  const scene_view v = ps.view(8, 8);
  ASSERT_EQ(v.lights.count, 4u);
  double first = 0, second = 0;
  for (std::uint32_t i = 0; i < v.lights.count; ++i) {
    const std::uint32_t t = v.lights.triangles[i];
    (s.materials[s.material_of[t]].emission.x == 1 ? first : second) += light_pick_chance(v.lights, t);
  }
  EXPECT_NEAR(first, 0.25, 1e-6);
  EXPECT_NEAR(second, 0.75, 1e-6);
  EXPECT_EQ(light_pick_chance(v.lights, 0), 0.0f) << "the triangle is no light";
}

scene small_cornell(const std::string& file, std::uint32_t w, std::uint32_t h, std::uint32_t spp, std::uint32_t seed) {
  return load_scene(scenes_dir / "cornell-box" / file,
                    {"film.width=" + std::to_string(w), "film.height=" + std::to_string(h), "film.spp=" + std::to_string(spp),
                     "film.seed=" + std::to_string(seed)});
}

double image_mean(const std::vector<vec3>& image) {
  double sum = 0;
  for (const vec3& p : image) sum += p.x + p.y + p.z;
  return sum / (3.0 * static_cast<double>(image.size()));
}

TEST(CornellBox, MeanIsStableAcrossSeedsWithinMonteCarloError) {
  // Two groups of 8 seeds: each render is an independent estimate of the image mean; the groups'
  // averages must agree within 4 standard errors, and different seeds must give different images.
  auto group = [](std::uint32_t first_seed, std::vector<double>& means) {
    for (std::uint32_t seed = first_seed; seed < first_seed + 8; ++seed) {
      const scene s = small_cornell("cornell-box.toml", 48, 48, 2, seed);
      const prepared_scene ps(s);
      means.push_back(image_mean(render_cpu(ps, render_settings::from(s)).mean()));
    }
  };
  std::vector<double> a, b;
  group(1, a);
  group(101, b);
  auto mean_se = [](const std::vector<double>& v) {
    double m = 0, q = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) q += (x - m) * (x - m);
    return std::pair{m, std::sqrt(q / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()))};
  };
  const auto [ma, sa] = mean_se(a);
  const auto [mb, sb] = mean_se(b);
  EXPECT_GT(sa, 0) << "every seed gave the same mean: the seed is not used";
  EXPECT_GT(ma, 0.01) << "the box is black";
  EXPECT_NEAR(ma, mb, 4 * std::sqrt(sa * sa + sb * sb)) << "seeds 1..8: " << ma << " +- " << sa << ", 101..108: " << mb
                                                          << " +- " << sb;
}

// The pixels that are not black, each expected to read `value` in red (an emitter seen head-on,
// no bounce: no other term exists).
std::size_t lit_pixels(const std::vector<vec3>& image, float value, float tolerance) {
  std::size_t lit = 0;
  for (const vec3& p : image) {
    if (max_component(p) == 0) continue;
    ++lit;
    EXPECT_NEAR(p.x, value, tolerance);
  }
  return lit;
}

TEST(CornellBox, NoBouncesShowsOnlyTheLight) {
  scene s = small_cornell("cornell-box.toml", 64, 64, 1, 1);
  s.film.max_bounces = 0;
  const prepared_scene ps(s);
  const render_result r = render_cpu(ps, render_settings::from(s));
  const std::size_t lit = lit_pixels(r.sum, 17.0f, 1e-3f);  // the light's Ke
  EXPECT_GT(lit, 0U);
  EXPECT_LT(lit, r.sum.size() / 20) << "only the light (a small quad) may be lit";
  EXPECT_EQ(r.stats.bounces.size(), 1U);
}

// film.sides: an emitting quad that faces the camera, seen obliquely, its vertex normals tilted
// 60 degrees the other way from its geometric normal (so the camera is behind them). By the
// geometric normal (the default) the camera sees the emission; by the interpolated normal
// (Mitsuba's convention, "shading") it sees the quad's back: nothing.
TEST(Sides, EmissionByTheGeometricOrTheInterpolatedNormal) {
  scene s;
  s.name = "sides";
  s.materials.push_back({"lamp", material_kind::diffuse, {0, 0, 0}, {1, 1, 1}, 1.5f});
  const vec3 a{-1, -1, 0}, b{1, -1, 0}, c{1, 1, 0}, d{-1, 1, 0};
  s.triangles = {{a, c, b}, {a, d, c}};  // wound so the geometric normal is -z
  s.material_of = {0, 0};
  s.emissive = {0, 1};
  const vec3 n{-0.8660254f, 0, -0.5f};  // 60 degrees from -z, away from the camera
  s.normals = {{n, n, n}, {n, n, n}};
  s.camera = {{3 * 0.8660254f, 0, -3 * 0.5f}, {0, 0, 0}, {0, 1, 0}, 10};
  s.film = {16, 16, 1, 0, 1};
  for (const bool shading : {false, true}) {
    s.film.shading_sides = shading;
    const prepared_scene ps(s);
    const render_result r = render_cpu(ps, render_settings::from(s));
    const std::size_t lit = lit_pixels(r.sum, 1.0f, 1e-6f);
    if (shading) EXPECT_EQ(lit, 0U);
    else EXPECT_EQ(lit, r.sum.size()) << "the quad fills the view";
  }
}

// Every way of running the queue must give the same bits: random numbers are keyed by pixel, each
// pixel's sums happen in the same order, and closest hits break ties by primitive index. On the
// Cornell box with a mirror and glass, and on a terrain under the HDR sky map (next-event
// estimation towards the map, shadow rays that leave the scene).
void expect_identical_for_every_way(const scene& s);

TEST(Wavefront, ImageIsBitIdenticalForEveryStrategyTraversalAndReordering) {
  expect_identical_for_every_way(small_cornell("cornell-mirror-glass.toml", 40, 30, 3, 7));
}

TEST(Wavefront, ImageUnderAnEnvironmentMapIsBitIdenticalForEveryWay) {
  const scene s = load_scene(scenes_dir / "sky" / "sky-terrain.toml",
                             {"film.width=40", "film.height=30", "film.spp=3", "procedural.grid=32",
                              "camera.position=[16, 12, -4]", "camera.look_at=[16, 3, 20]"});
  ASSERT_FALSE(s.environment_map.empty());
  expect_identical_for_every_way(s);
  // The terrain is in view and lit through the map: shadow rays towards it (the scene has no lights),
  // and the megakernel's image is the wavefront's.
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  const render_result wavefront = render_cpu(ps, r);
  EXPECT_GT(wavefront.stats.shadow_rays, 40U * 30 * 3 / 4);
  r.integrator = integrator_kind::megakernel;
  const render_result mega = render_cpu(ps, r);
  EXPECT_EQ(std::memcmp(mega.sum.data(), wavefront.sum.data(), mega.sum.size() * sizeof(vec3)), 0);
}

// Cut-outs (core/alpha.hpp) in a render: the same image for every strategy, traversal, queue and
// reordering and for the megakernel (one predicate, one hash of the ray), shadow rays through them;
// the cut-out half shows the blended quad behind it and the sky, the opaque half does not.
TEST(Wavefront, CutOutsRenderTheSameForEveryWay) {
  const scene s = testing::cutout_scene(24, 4);
  expect_identical_for_every_way(s);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  const render_result wavefront = render_cpu(ps, r);
  r.integrator = integrator_kind::megakernel;
  const render_result mega = render_cpu(ps, r);
  EXPECT_EQ(std::memcmp(mega.sum.data(), wavefront.sum.data(), mega.sum.size() * sizeof(vec3)), 0);
  // Columns left of the centre see through the mask (x < 0 in the scene is the image's right: the
  // camera looks along +z with +y up): the two halves differ.
  const std::vector<vec3> img = wavefront.mean();
  double left = 0, right = 0;
  for (std::uint32_t y = 6; y < 18; ++y)
    for (std::uint32_t x = 0; x < 10; ++x) {
      left += img[y * 24 + x].x;
      right += img[y * 24 + 23 - x].x;
    }
  EXPECT_GT(std::fabs(left - right), 0.1 * (left + right)) << left << " " << right;
}

void expect_identical_for_every_way(const scene& s) {
  const prepared_scene ps(s);
  render_settings base = render_settings::from(s);
  base.strategy = "std";
  base.max_queue = 500;  // several chunks per sample pass
  const render_result want = render_cpu(ps, base);
  ASSERT_GT(image_mean(want.mean()), 0.0);

  std::vector<render_settings> runs;
  for (const auto& info : sieve::compaction_strategies()) {
    const bool fits = info.takes(sieve::backend::cpu, sieve::form::bit_mask) ||
                      info.takes(sieve::backend::cpu, sieve::form::byte_flags) ||
                      info.takes(sieve::backend::cpu, sieve::form::removal_list);
    if (!fits) continue;
    for (const auto traversal : {traversal_kind::dfs, traversal_kind::bfs}) {
      render_settings r = base;
      r.strategy = std::string(info.name);
      r.traversal = traversal;
      runs.push_back(r);
    }
  }
  for (const auto key : {reorder_key::morton, reorder_key::octant, reorder_key::termination}) {
    render_settings r = base;
    r.reorder = key;
    runs.push_back(r);
    r.strategy = "redzone";  // unstable and reordered: the queue's order is far from the pixels'
    runs.push_back(r);
  }
  // The other queues: compacted 4-byte indices (state in place), and producer-side append.
  for (const auto queue : {queue_mode::index, queue_mode::append})
    for (const char* strategy : {"std", "redzone", "billeter"})
      for (const auto traversal : {traversal_kind::dfs, traversal_kind::bfs})
        for (const auto key : {reorder_key::none, reorder_key::octant}) {
          render_settings r = base;
          r.queue = queue;
          r.strategy = strategy;
          r.traversal = traversal;
          r.reorder = key;
          runs.push_back(r);
        }
  render_settings whole = base;
  whole.max_queue = 1U << 20;  // one wave of all samples
  runs.push_back(whole);
  whole.max_queue = 2 * 40 * 30;  // waves of two samples, then one
  runs.push_back(whole);

  for (const auto& r : runs) {
    SCOPED_TRACE(std::string(to_string(r.queue)) + " queue, " + r.strategy + ", " + std::string(to_string(r.traversal)) + ", reorder " +
                 std::string(to_string(r.reorder)) + ", max_queue " + std::to_string(r.max_queue));
    const render_result got = render_cpu(ps, r);
    ASSERT_EQ(got.sum.size(), want.sum.size());
    EXPECT_EQ(std::memcmp(got.sum.data(), want.sum.data(), want.sum.size() * sizeof(vec3)), 0);
    for (std::size_t b = 0; b < want.stats.bounces.size(); ++b)
      EXPECT_EQ(got.stats.bounces[b].live, want.stats.bounces[b].live) << "bounce " << b;
    EXPECT_EQ(got.stats.shadow_rays, want.stats.shadow_rays);
  }
}

// The image as the renderer made it: FNV-1a of the sums' bytes (x86-64, g++), recorded at commit
// 2834b53 when the one driver (integrator.hpp's wavefront_driver) replaced the CPU's own loop, and
// again when next-event estimation began to pick lights by power (the light pdf's arithmetic
// changed its rounding; the Cornell checks above bound the image itself). Every strategy, traversal
// and reordering gives these bits (the test above), so one does here.
std::uint64_t fnv1a(const std::vector<vec3>& v) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto* b = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(vec3); ++i) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

TEST(Wavefront, ImageIsUnchangedByTheOneDriver) {
  const scene s = small_cornell("cornell-mirror-glass.toml", 40, 30, 3, 7);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.strategy = "redzone";
  r.max_queue = 1000;
  EXPECT_EQ(fnv1a(render_cpu(ps, r).sum), 0xe54b530d568e86baULL);
  r.integrator = integrator_kind::megakernel;
  EXPECT_EQ(fnv1a(render_cpu(ps, r).sum), 0xe54b530d568e86baULL);
}

// The mirror/glass box with microfacet blocks (a rough tinted glTF metal, a rough glass, thick and
// thin) renders the same bits with the megakernel as with the wavefront, and not the smooth box's.
TEST(Wavefront, MicrofacetBoxIsTheSameOnTheMegakernel) {
  for (const bool thin : {false, true}) {
    const scene s =
        load_scene(scenes_dir / "cornell-box" / "cornell-mirror-glass.toml", test_scenes::microfacet_box(thin, 24, 2));
    const prepared_scene ps(s);
    render_settings r = render_settings::from(s);
    const std::vector<vec3> wavefront = render_cpu(ps, r).sum;
    r.integrator = integrator_kind::megakernel;
    EXPECT_EQ(fnv1a(render_cpu(ps, r).sum), fnv1a(wavefront)) << "thin " << thin;
    const scene smooth = small_cornell("cornell-mirror-glass.toml", 24, 24, 2, 5);
    const prepared_scene pss(smooth);
    EXPECT_NE(fnv1a(render_cpu(pss, render_settings::from(smooth)).sum), fnv1a(wavefront));
  }
}

// The path record's columns are listed once (path_columns::columns()): the allocation, the record
// compaction moves and the reorder's gather all cover every column of that list.
TEST(PathColumns, AllocationRecordAndGatherFollowTheOneList) {
  constexpr std::size_t n = 37, columns = std::tuple_size_v<decltype(path_columns::columns())>;
  std::size_t bytes = 0;
  path_columns::for_each_column([&](auto m) { bytes += sizeof(*(path_columns{}.*m)); });
  const std::size_t item_bytes = bytes;
  // slot, ray, throughput, the last BSDF pdf, the ray cone's spread
  EXPECT_EQ(item_bytes, sizeof(std::uint32_t) + sizeof(ray) + sizeof(vec3) + sizeof(float) + sizeof(float));
  EXPECT_GE(path_columns::column_bytes(n), n * item_bytes);
  std::vector<std::byte> a(path_columns::column_bytes(n)), b(path_columns::column_bytes(n));
  const path_columns p = path_columns::carve(a.data(), n), q = path_columns::carve(b.data(), n);
  const sieve::record r = p.record(n);
  EXPECT_EQ(r.columns(), columns);
  EXPECT_EQ(r.item_bytes(), item_bytes);
  EXPECT_EQ(r.size(), n);
  // The columns do not overlap: every byte of each is written, and the last column ends in the block.
  for (std::uint32_t i = 0; i < n; ++i) {
    p.slot[i] = i;
    p.rays[i] = ray{{float(i), 1, 2}, {0, 0, 1}, 1e30f};
    p.throughput[i] = {float(i), 0.5f, 0.25f};
    p.bsdf_pdf[i] = 0.5f * float(i);
    p.cone[i] = 0.125f * float(i);
  }
  EXPECT_LE(reinterpret_cast<std::byte*>(p.bsdf_pdf + n), a.data() + a.size());
  EXPECT_LE(reinterpret_cast<std::byte*>(p.cone + n), a.data() + a.size());
  for (std::uint32_t i = 0; i < n; ++i) q.copy_from(i, p, n - 1 - i);  // what gather_paths runs per path
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t j = n - 1 - i;
    EXPECT_EQ(q.slot[i], j);
    EXPECT_EQ(q.rays[i].origin.x, float(j));
    EXPECT_EQ(q.throughput[i].x, float(j));
    EXPECT_EQ(q.bsdf_pdf[i], 0.5f * float(j));
    EXPECT_EQ(q.cone[i], 0.125f * float(j));
  }
}

TEST(Megakernel, ImageEqualsTheWavefrontsBitForBit) {
  const scene s = small_cornell("cornell-mirror-glass.toml", 40, 30, 3, 11);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  const render_result wavefront = render_cpu(ps, r);
  r.integrator = integrator_kind::megakernel;
  r.profile_stages = true;
  const render_result mega = render_cpu(ps, r);
  ASSERT_EQ(mega.sum.size(), wavefront.sum.size());
  EXPECT_GT(image_mean(mega.mean()), 0.0);
  EXPECT_EQ(std::memcmp(mega.sum.data(), wavefront.sum.data(), mega.sum.size() * sizeof(vec3)), 0);
  EXPECT_GT(mega.stats.stage_ms("megakernel"), 0.0);
  EXPECT_EQ(mega.stats.extension_rays, wavefront.stats.extension_rays);
  EXPECT_EQ(mega.stats.shadow_rays, wavefront.stats.shadow_rays);
}

// Every mode has one name table: names round-trip, and an unknown name is one error that lists the
// valid ones (the only place a name is checked; inside the renderer only the enums travel).
template <class E>
void expect_names_round_trip(std::initializer_list<E> all, const std::string& unknown_message) {
  for (const E e : all) EXPECT_EQ(parse_mode<E>(to_string(e)), e) << to_string(e);
  EXPECT_EQ(mode_name_list<E>().size(), all.size());
  EXPECT_FALSE(find_mode<E>("sideways").has_value());
  try {
    parse_mode<E>("sideways");
    ADD_FAILURE() << "expected an error";
  } catch (const sieve::error& e) {
    EXPECT_EQ(std::string(e.what()), unknown_message);
  }
}

TEST(Modes, OneNameTableEach) {
  expect_names_round_trip({integrator_kind::wavefront, integrator_kind::megakernel},
                          "unknown integrator 'sideways'; integrators: wavefront, megakernel");
  expect_names_round_trip({traversal_kind::dfs, traversal_kind::bfs}, "unknown traversal 'sideways'; traversals: dfs, bfs");
  expect_names_round_trip({queue_mode::pass, queue_mode::index, queue_mode::append},
                          "unknown queue 'sideways'; queues: pass, index, append");
  expect_names_round_trip({sort_kind::onesweep, sort_kind::cub}, "unknown radix sort 'sideways'; sorts: onesweep, cub");
  expect_names_round_trip({reorder_key::none, reorder_key::morton, reorder_key::octant, reorder_key::termination},
                          "unknown reorder key 'sideways'; keys: none, morton, octant, termination");
}

// Stage times only when asked (render_settings::profile_stages): the default adds nothing between
// the stages and reports the frame time alone; profiling changes no pixel and no count.
TEST(Wavefront, StageTimesOnlyWhenProfiling) {
  const scene s = small_cornell("cornell-box.toml", 32, 24, 2, 3);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.reorder = reorder_key::morton;
  r.max_queue = 32 * 24;  // two waves
  const render_result plain = render_cpu(ps, r);
  EXPECT_TRUE(plain.stats.stages.empty());
  EXPECT_EQ(plain.stats.compaction_ms(), 0.0);
  EXPECT_GT(plain.stats.seconds, 0.0);
  EXPECT_EQ(plain.stats.waves, 2U);
  EXPECT_EQ(plain.stats.host_syncs, 0U);
  EXPECT_EQ(plain.stats.wave_launch, "cpu");
  r.profile_stages = true;
  const render_result timed = render_cpu(ps, r);
  for (const char* stage : {"generate", "extend", "shade", "connect", "compact", "reorder", "accumulate"})
    EXPECT_GT(timed.stats.stage_ms(stage), 0.0) << stage;
  double per_bounce = 0;
  for (const auto& b : timed.stats.bounces) per_bounce += b.compact_ms;
  EXPECT_DOUBLE_EQ(per_bounce, timed.stats.stage_ms("compact"));
  EXPECT_EQ(std::memcmp(plain.sum.data(), timed.sum.data(), plain.sum.size() * sizeof(vec3)), 0);
  for (std::size_t b = 0; b < plain.stats.bounces.size(); ++b)
    EXPECT_EQ(plain.stats.bounces[b].live, timed.stats.bounces[b].live) << "bounce " << b;
  EXPECT_EQ(plain.stats.bounces[0].live, 2U * 32 * 24);
  EXPECT_EQ(plain.stats.shadow_rays, timed.stats.shadow_rays);
  EXPECT_GT(plain.stats.shadow_rays, 0U);
}

// Sampled stage times (render_settings::profile_every): which waves are timed, how many waves a
// film has, and the figures of the timed waves scaled to all of them.
TEST(Wavefront, SampledStageTimesScaleToAllWaves) {
  render_settings r;
  r.max_queue = 1000;
  EXPECT_EQ(waves_in(80 * 60, 3, r), 15U);  // 5 chunks a pass, 3 passes
  r.max_queue = 1U << 20;
  EXPECT_EQ(waves_in(512 * 512, 64, r), 16U);  // 4 samples a wave
  r.first_sample = 60;
  EXPECT_EQ(waves_in(512 * 512, 64, r), 1U);
  std::vector<std::uint64_t> timed;
  for (std::uint64_t i = 0; i < 20; ++i)
    if (timed_wave(i, 20, 8)) timed.push_back(i);
  EXPECT_EQ(timed, (std::vector<std::uint64_t>{1, 9, 17}));  // not the first, cold wave
  EXPECT_TRUE(timed_wave(0, 1, 8));                          // a render of one wave times it
  EXPECT_FALSE(timed_wave(1, 1, 8));
  for (std::uint64_t i = 0; i < 5; ++i) EXPECT_TRUE(timed_wave(i, 5, 1));

  render_stats st;
  st.bounces.resize(2);
  st.add_stage("compact", 1, 2.0);
  st.add_stage("shade", -1, 3.0);
  st.loops.push_back({"shade", 2, 2000, 1.5});
  st.waves = 16;
  st.measured_waves = 2;
  st.scale_measured();
  EXPECT_DOUBLE_EQ(st.stage_ms("compact"), 16.0);
  EXPECT_DOUBLE_EQ(st.stage_ms("shade"), 24.0);
  EXPECT_DOUBLE_EQ(st.bounces[1].compact_ms, 16.0);
  EXPECT_EQ(st.loops[0].launches, 16U);
  EXPECT_EQ(st.loops[0].items, 16000U);
  EXPECT_DOUBLE_EQ(st.loops[0].ms, 12.0);
  st.measured_waves = 16;  // every wave timed: nothing to scale
  st.scale_measured();
  EXPECT_DOUBLE_EQ(st.stage_ms("compact"), 16.0);

  // The CPU times every wave.
  const scene s = small_cornell("cornell-box.toml", 32, 24, 3, 3);
  const prepared_scene ps(s);
  render_settings cpu = render_settings::from(s);
  cpu.max_queue = 32 * 24;
  cpu.profile_stages = true;
  const render_result got = render_cpu(ps, cpu);
  EXPECT_EQ(got.stats.waves, 3U);
  EXPECT_EQ(got.stats.measured_waves, 3U);
  EXPECT_FALSE(got.stats.sampled_waves);
}

// The loop clock (exec/loop_clock.hpp): an exec tag with a clock times each launch of more than
// zero items under its name; one without records nothing.
TEST(LoopClock, TimesEachLaunchUnderItsName) {
  std::vector<exec::loop_time> rows;
  exec::loop_clock clock(rows);
  std::atomic<std::uint64_t> sum{0};
  for (int k = 0; k < 3; ++k) exec::parallel_for(exec::cpu{&clock}, "sum", 1000, [&](std::uint32_t i) { sum += i; });
  exec::parallel_for(exec::cpu{&clock}, "empty", 0, [&](std::uint32_t) { sum += 1; });
  exec::parallel_for(exec::cpu{}, "untimed", 10, [&](std::uint32_t) { sum += 1; });
  EXPECT_EQ(sum.load(), 3 * 499500U + 10);
  ASSERT_EQ(rows.size(), 1U);  // no launch for zero items, no clock for the untimed one
  EXPECT_EQ(rows[0].name, "sum");
  EXPECT_EQ(rows[0].launches, 3U);
  EXPECT_EQ(rows[0].items, 3000U);
  EXPECT_GE(rows[0].ms, 0.0);
  exec::add_loop_time(rows, {"sum", 2, 5, 1.5});  // how the ranks of a split render merge
  exec::add_loop_time(rows, {"other", 1, 1, 0.5});
  EXPECT_EQ(rows[0].launches, 5U);
  EXPECT_EQ(rows[0].items, 3005U);
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[1].name, "other");
}

// parallel_walk times the same way (over count() items).
TEST(LoopClock, TimesAWalk) {
  struct three_steps {
    struct state {
      int k = 0;
    };
    struct scratch {};
    std::uint32_t n;
    int* out;
    std::uint32_t count() const { return n; }
    bool start(std::uint32_t, state& s) const { return (s.k = 0) == 0; }
    bool step(state& s, scratch&) const { return ++s.k < 3; }
    void finish(std::uint32_t i, const state& s) const { out[i] = s.k; }
  };
  std::vector<exec::loop_time> rows;
  exec::loop_clock clock(rows);
  std::vector<int> out(500, 0);
  exec::parallel_walk(exec::cpu{&clock}, "walk", three_steps{500, out.data()}, nullptr);
  exec::parallel_walk(exec::cpu{&clock}, "walk", three_steps{0, out.data()}, nullptr);
  exec::parallel_walk(exec::cpu{}, "untimed", three_steps{10, out.data()}, nullptr);
  EXPECT_EQ(std::count(out.begin(), out.end(), 3), 500);
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0].name, "walk");
  EXPECT_EQ(rows[0].launches, 1U);
  EXPECT_EQ(rows[0].items, 500U);
}

// A profiled render times every parallel_for loop of its stages by name, the launches and items
// following the bounces (host counts: each bounce's loops run over its live paths); unprofiled,
// nothing is recorded. A loop runs inside its stage, so it cannot take longer than the stage.
TEST(Wavefront, LoopClockNamesTheStagesLoops) {
  const scene s = small_cornell("cornell-box.toml", 32, 24, 2, 3);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.reorder = reorder_key::morton;
  r.max_queue = 32 * 24;  // two waves of one sample each
  EXPECT_TRUE(render_cpu(ps, r).stats.loops.empty());
  r.profile_stages = true;
  const render_result res = render_cpu(ps, r);
  const render_stats& st = res.stats;
  const std::uint64_t waves = st.waves, vertices = s.film.max_bounces + 1;
  ASSERT_EQ(waves, 2U);
  ASSERT_GT(st.bounces.back().live, 0U);  // both waves reach the last vertex (so every bounce ran)
  auto row = [&](const char* name) {
    const exec::loop_time* l = st.loop(name);
    EXPECT_NE(l, nullptr) << name;
    return l ? *l : exec::loop_time{};
  };
  EXPECT_EQ(row("wave.begin").launches, waves);
  EXPECT_EQ(row("wave.begin").items, waves);
  EXPECT_EQ(row("generate").launches, waves);
  EXPECT_EQ(row("generate").items, st.bounces[0].live);
  for (const char* loop : {"extend", "shade", "connect"}) {
    EXPECT_EQ(row(loop).launches, waves * vertices) << loop;
    EXPECT_EQ(row(loop).items, st.extension_rays) << loop;
    EXPECT_LE(row(loop).ms, st.stage_ms(loop)) << loop;
  }
  const std::uint64_t kept = st.extension_rays - st.bounces[0].live;  // live paths entering bounces 1..
  for (const char* loop : {"reorder.keys", "reorder.gather"}) {
    EXPECT_EQ(row(loop).launches, waves * (vertices - 1)) << loop;
    EXPECT_EQ(row(loop).items, kept) << loop;
  }
  EXPECT_EQ(row("accumulate").launches, waves);
  EXPECT_EQ(row("accumulate").items, waves * 32 * 24);
  EXPECT_EQ(st.loop("compact"), nullptr);  // the library's call, not a loop
  EXPECT_EQ(st.loop("bfs.begin"), nullptr);
  EXPECT_EQ(st.loops.size(), 8U);
}

// The BFS tracer's loops time into the render's clock too; the megakernel is one loop.
TEST(Wavefront, LoopClockTimesTheBfsTracerAndTheMegakernel) {
  const scene s = small_cornell("cornell-box.toml", 16, 16, 1, 5);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.profile_stages = true;
  r.traversal = traversal_kind::bfs;
  const render_result bfs = render_cpu(ps, r);
  EXPECT_EQ(bfs.stats.loop("extend"), nullptr);  // the tracer extends
  for (const char* loop : {"bfs.begin", "bfs.finish"}) {
    const exec::loop_time* l = bfs.stats.loop(loop);
    ASSERT_NE(l, nullptr) << loop;
    EXPECT_EQ(l->items, bfs.stats.extension_rays) << loop;
    EXPECT_EQ(l->launches, bfs.stats.loop("shade")->launches) << loop;
  }
  ASSERT_NE(bfs.stats.loop("bfs.expand"), nullptr);
  ASSERT_NE(bfs.stats.loop("bfs.plan"), nullptr);
  EXPECT_GT(bfs.stats.loop("bfs.expand")->launches, bfs.stats.loop("bfs.begin")->launches);  // a step per level

  r.traversal = traversal_kind::dfs;
  r.integrator = integrator_kind::megakernel;
  const render_result mega = render_cpu(ps, r);
  ASSERT_EQ(mega.stats.loops.size(), 2U);
  EXPECT_EQ(mega.stats.loops[0].name, "megakernel");
  EXPECT_EQ(mega.stats.loops[0].items, 16U * 16);
  EXPECT_EQ(mega.stats.loops[1].name, "accumulate");
}

TEST(Wavefront, FeedsEachStrategyTheFormItTakes) {
  const scene s = small_cornell("cornell-box.toml", 16, 16, 1, 1);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  for (const auto& [strategy, form] : {std::pair{"redzone", sieve::form::removal_list},
                                       std::pair{"stencil", sieve::form::byte_flags},
                                       std::pair{"billeter", sieve::form::bit_mask}}) {
    r.strategy = strategy;
    EXPECT_EQ(render_cpu(ps, r).stats.form, form) << strategy;
  }
  r.strategy = "no-such-strategy";
  EXPECT_THROW(render_cpu(ps, r), sieve::error);
}

TEST(Wavefront, CancelKeepsTheCompletedSamples) {
  const scene s = small_cornell("cornell-box.toml", 16, 16, 50, 1);
  const prepared_scene ps(s);
  std::atomic<bool> cancel{false};
  render_settings r = render_settings::from(s);
  r.max_queue = 256;  // one sample per wave
  render_controls c;
  c.cancel = &cancel;
  c.progress = [&](std::uint32_t done, std::uint32_t) {
    if (done == 3) cancel.store(true);
  };
  const render_result got = render_cpu(ps, r, c);
  EXPECT_EQ(got.samples, 3U);
  EXPECT_TRUE(got.partial());
  // The same as a 3-sample render.
  scene three = s;
  three.film.spp = 3;
  const prepared_scene p3(three);
  const render_result want = render_cpu(p3, render_settings::from(three));
  EXPECT_EQ(std::memcmp(got.sum.data(), want.sum.data(), want.sum.size() * sizeof(vec3)), 0);
}

// Ctrl-C within a pass of several chunks (a large frame): the render stops at the next bounce; the
// wave it cut counts nowhere, the chunks completed before it hold one sample more (result.ahead),
// and every pixel's sum is exactly that of a render of its own sample count.
TEST(Wavefront, CancelWithinAPassKeepsWholeSamplesPerPixel) {
  const scene s = small_cornell("cornell-box.toml", 64, 48, 2000, 1);
  const prepared_scene ps(s);
  bool cut_between_chunks = false;
  for (int delay_ms = 20; delay_ms <= 320 && !cut_between_chunks; delay_ms *= 2) {
    std::atomic<bool> cancel{false};
    render_settings r = render_settings::from(s);
    r.max_queue = 512;  // 6 chunks per pass
    render_controls c;
    c.cancel = &cancel;
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      cancel.store(true);
    });
    const render_result got = render_cpu(ps, r, c);
    stopper.join();
    ASSERT_TRUE(got.partial());
    ASSERT_LT(got.ahead, 64U * 48U);
    cut_between_chunks = got.ahead > 0;
    scene fewer = s, more = s;
    fewer.film.spp = got.samples;
    more.film.spp = got.samples + 1;
    const prepared_scene pf(fewer), pm(more);
    render_settings plain = render_settings::from(s);
    // No sample completed: nothing to render for `fewer` (a film of 0 samples is refused).
    const render_result want_fewer = got.samples ? render_cpu(pf, plain) : render_result{};
    const render_result want_more = render_cpu(pm, plain);
    for (std::size_t i = 0; i < got.sum.size(); ++i) {
      const vec3 want = i < got.ahead ? want_more.sum[i] : (got.samples ? want_fewer.sum[i] : vec3{0, 0, 0});
      ASSERT_EQ(std::memcmp(&got.sum[i], &want, sizeof(vec3)), 0) << "pixel " << i << ", ahead " << got.ahead;
    }
    const std::vector<vec3> mean = got.mean();
    if (got.ahead > 0) {
      EXPECT_EQ(mean[0].x, want_more.mean()[0].x);
    }
  }
  EXPECT_TRUE(cut_between_chunks) << "no cancel landed after the first chunk of a pass";
}

// A sample range renders those samples exactly: samples [0, k) are a k-sample render bit for bit,
// and a later range is the same whatever the wave shape (one sample per wave, several, chunks).
TEST(SampleRange, RendersThoseSamplesWhateverTheWaves) {
  const scene s = small_cornell("cornell-mirror-glass.toml", 40, 30, 7, 5);
  const prepared_scene ps(s);
  render_settings r = render_settings::from(s);
  r.sample_count = 3;
  const render_result head = render_cpu(ps, r);
  EXPECT_EQ(head.spp, 3U);
  EXPECT_EQ(head.samples, 3U);
  EXPECT_FALSE(head.partial());
  scene three = s;
  three.film.spp = 3;
  const prepared_scene p3(three);
  const render_result want = render_cpu(p3, render_settings::from(three));
  EXPECT_EQ(std::memcmp(head.sum.data(), want.sum.data(), want.sum.size() * sizeof(vec3)), 0);

  r.first_sample = 3;
  r.sample_count = 0;  // to the end: samples 3..6
  const render_result tail = render_cpu(ps, r);
  EXPECT_EQ(tail.spp, 4U);
  EXPECT_NE(std::memcmp(tail.sum.data(), head.sum.data(), head.sum.size() * sizeof(vec3)), 0);
  for (const std::uint32_t queue : {1200U * 4, 1200U * 3, 1200U, 500U}) {
    r.max_queue = queue;
    const render_result again = render_cpu(ps, r);
    EXPECT_EQ(std::memcmp(again.sum.data(), tail.sum.data(), tail.sum.size() * sizeof(vec3)), 0) << "queue " << queue;
  }
  r.first_sample = 7;
  EXPECT_THROW(render_cpu(ps, r), sieve::error);  // past the film's samples
  r.first_sample = 5;
  r.sample_count = 3;
  EXPECT_THROW(render_cpu(ps, r), sieve::error);
}

TEST(Tiles, PlansCoverTheFilm) {
  for (const std::uint32_t pixels : {1U, 7U, 1200U, 1U << 20})
    for (const std::uint32_t renderers : {1U, 3U, 8U}) {
      const tile_plan plan = plan_tiles(pixels, 64, 1U << 20, renderers);
      EXPECT_GE(plan.tile_pixels, 1U);
      EXPECT_GE(plan.count(), std::min(pixels, 8 * renderers)) << pixels << " pixels, " << renderers << " renderers";
      std::uint32_t next = 0;
      for (std::uint32_t i = 0; i < plan.count(); ++i) {
        std::uint32_t first = 0, n = 0;
        plan.tile(i, first, n);
        EXPECT_EQ(first, next);
        EXPECT_GE(n, 1U);
        next += n;
      }
      EXPECT_EQ(next, pixels);
    }
  EXPECT_EQ(plan_tiles(1000, 4, 1U << 20, 2, 300).count(), 4U);  // asked: 300 pixels a tile
  EXPECT_EQ(plan_tiles(1000, 4, 1U << 20, 2, 5000).tile_pixels, 1000U);
  // A GPU's waves stay full: a tile holds about two waves of paths.
  EXPECT_EQ(plan_tiles(1U << 20, 512, 1U << 20, 4).tile_pixels, 4096U);
}

// A slow renderer stops taking tiles when the others would finish those left before it finishes one.
TEST(Tiles, ASlowRendererLeavesTheLastTilesToTheOthers) {
  EXPECT_TRUE(take_another(100, 1, 31, 3));    // 30 tiles a second elsewhere: 100 left outlast its one second
  EXPECT_FALSE(take_another(20, 1, 31, 3));    // 20 left: the others need 0.67 s, it needs 1 s for one
  EXPECT_TRUE(take_another(1, 10, 21, 3));     // the fastest of three takes the last tile
  EXPECT_TRUE(take_another(1, 10, 20, 2));     // two alike: both take it
  EXPECT_TRUE(take_another(1, 5, 5, 1));       // alone: always
  EXPECT_FALSE(take_another(0, 5, 10, 2));     // none left
}

// Takes of several tiles: one range each, up to the film's end; their sizes follow the renderer's
// speed (guided self-scheduling) and shrink as the film runs out.
TEST(Tiles, TakesOfSeveralTilesCoverTheFilm) {
  const tile_plan plan = plan_tiles(1000, 4, 1U << 20, 2, 300, 4);
  EXPECT_EQ(plan.tile_pixels, 75U);
  EXPECT_EQ(plan.largest(), 300U);
  EXPECT_EQ(plan.count(), 14U);
  std::uint32_t first = 0, n = 0;
  plan.tile(12, 4, first, n);  // the last two tiles: the film ends
  EXPECT_EQ(first, 900U);
  EXPECT_EQ(n, 100U);
  EXPECT_EQ(plan_tiles(10, 4, 1U << 20, 2, 3, 8).units, 3U);  // never more units than pixels a take
  EXPECT_EQ(take_size(100, 10, 11, 8), 8U);   // fast, much left: whole takes
  EXPECT_EQ(take_size(100, 1, 11, 8), 4U);    // slow: what it renders in half the time left (4.5 tiles)
  EXPECT_EQ(take_size(10, 10, 11, 8), 4U);    // fast, little left: smaller takes
  EXPECT_EQ(take_size(3, 1, 11, 8), 1U);      // at least one
  EXPECT_EQ(take_size(100, 0, 11, 8), 1U);    // its speed not known yet: one
  EXPECT_EQ(take_size(100, 10, 11, 1), 1U);   // takes of one tile
}

// A render by tiles hands each tile's sums on as it ends (tile_rendered), every pixel once, with
// the bits the render keeps in its result: what a rank sends rank 0 while it renders the next.
TEST(Tiles, EachTileIsHandedOnAsItEnds) {
  const scene s = small_cornell("cornell-mirror-glass.toml", 40, 30, 5, 3);
  const prepared_scene ps(s);
  const std::uint32_t pixels = s.film.width * s.film.height;
  const tile_plan plan = plan_tiles(pixels, s.film.spp, 1U << 20, 1, 100);
  std::uint32_t next = 0;
  render_settings rs = render_settings::from(s);
  rs.tile_pixels = plan.tile_pixels;
  rs.max_queue = 200;
  render_controls c;
  c.next_tile = [&](std::uint32_t& first, std::uint32_t& n) {
    if (next >= plan.count()) return false;
    plan.tile(next++, first, n);
    return true;
  };
  std::vector<vec3> handed(pixels, vec3{-1, -1, -1});
  std::vector<std::uint32_t> order;
  c.tile_rendered = [&](std::uint32_t first, std::span<const vec3> sums) {
    order.push_back(first);
    std::copy(sums.begin(), sums.end(), handed.begin() + first);
  };
  const render_result r = render_cpu(ps, rs, c);
  ASSERT_EQ(order.size(), plan.count());
  for (std::uint32_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i * plan.tile_pixels);
  EXPECT_EQ(std::memcmp(handed.data(), r.sum.data(), pixels * sizeof(vec3)), 0);
  const render_result whole = render_cpu(ps, render_settings::from(s));
  EXPECT_EQ(std::memcmp(handed.data(), whole.sum.data(), pixels * sizeof(vec3)), 0);
}

// Tiles rendered in any order by any number of renderers, put together: the one-process film bit for
// bit (each pixel's samples summed in sample order by one renderer), and a cut tile's pixels
// counted with their own samples.
TEST(Tiles, TiledFilmIsTheOneProcessFilmBitForBit) {
  const scene s = small_cornell("cornell-mirror-glass.toml", 40, 30, 11, 3);
  const prepared_scene ps(s);
  const render_result whole = render_cpu(ps, render_settings::from(s));
  const std::uint32_t pixels = s.film.width * s.film.height;
  for (const std::uint32_t renderers : {1U, 2U, 3U}) {
    const tile_plan plan = plan_tiles(pixels, s.film.spp, 1U << 20, renderers, 37);
    tiled_film film(pixels);
    for (std::uint32_t r = 0; r < renderers; ++r) {
      // Renderer r takes tiles count-1-r, count-1-r-renderers, ...: from the end, interleaved.
      std::int64_t next = static_cast<std::int64_t>(plan.count()) - 1 - r;
      render_settings rs = render_settings::from(s);
      rs.tile_pixels = plan.tile_pixels;
      rs.max_queue = 200;  // several waves per tile, and tiles of more pixels than a wave
      render_controls c;
      c.next_tile = [&](std::uint32_t& first, std::uint32_t& n) {
        if (next < 0) return false;
        plan.tile(static_cast<std::uint32_t>(next), first, n);
        next -= renderers;
        return true;
      };
      const render_result part = render_cpu(ps, rs, c);
      for (const tile_done& t : part.tiles) film.add(t, std::span<const vec3>(part.sum.data() + t.first_pixel, t.pixels));
    }
    EXPECT_EQ(film.samples(), s.film.spp);
    EXPECT_EQ(std::memcmp(film.sum().data(), whole.sum.data(), whole.sum.size() * sizeof(vec3)), 0) << renderers << " renderers";
    const std::vector<vec3> a = film.mean(), b = whole.mean();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(vec3)), 0);
  }
  tiled_film f(4);
  const std::vector<vec3> ones(2, vec3{1, 1, 1});
  f.add({0, 2, 3, 1}, ones);  // pixel 0 one sample ahead
  EXPECT_EQ(f.samples_of(0), 4U);
  EXPECT_EQ(f.samples_of(1), 3U);
  EXPECT_EQ(f.samples(), 0U);  // pixels 2 and 3 never came
  EXPECT_FLOAT_EQ(f.mean()[0].x, 0.25f);
  EXPECT_FLOAT_EQ(f.mean()[3].x, 0.0f);
  EXPECT_THROW(f.add({1, 2, 3, 0}, ones), sieve::error);  // pixel 1 twice
  EXPECT_THROW(f.add({3, 2, 3, 0}, ones), sieve::error);  // past the film
  EXPECT_THROW(f.add({2, 2, 3, 0}, std::span<const vec3>(ones.data(), 1)), sieve::error);  // too few sums
  f.add({2, 2, 5, 0}, ones);
  EXPECT_EQ(f.samples(), 3U);  // every pixel now: the least of its tiles
  EXPECT_EQ(f.samples_of(3), 5U);
}

// Every builder's tree gives the same image: the traversals find the least (t, primitive) whatever
// the tree, and the counter RNG ties every sample to its pixel.
TEST(Builders, EveryTreeRendersTheSameImage) {
  const scene s = load_scene(scenes_dir / "cornell-box/cornell-box.toml",
                             {"film.width=48", "film.height=36", "film.spp=4", "film.max_bounces=3"});
  const render_settings settings = render_settings::from(s);
  const prepared_scene sah(s);
  const std::vector<vec3> want = render_cpu(sah, settings).sum;
  for (const bvh_builder b : {bvh_builder::sah, bvh_builder::lbvh, bvh_builder::ploc, bvh_builder::automatic}) {
    const prepared_scene ps(s, b, false);
    EXPECT_EQ(ps.device(), nullptr) << "the CPU render's tree is built on the host";
    EXPECT_FALSE(ps.tree().binary.nodes.empty());
    const std::vector<vec3> got = render_cpu(ps, settings).sum;
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(vec3)), 0) << to_string(b);
  }
  EXPECT_TRUE(builds_on_device(bvh_builder::automatic, true, 2));
  EXPECT_TRUE(builds_on_device(bvh_builder::ploc, true, 2));
  EXPECT_FALSE(builds_on_device(bvh_builder::sah, true, 2));
  EXPECT_FALSE(builds_on_device(bvh_builder::ploc, false, 2));
  EXPECT_FALSE(builds_on_device(bvh_builder::ploc, true, 1));
}

// A tree the GPU builds needs more GPU memory at its build's peak than a tree uploaded from the host:
// the check counts it and names it before any device allocation.
TEST(Memory, GpuBuiltTreeIsCountedBeforeTheBuild) {
  scene sc;
  sc.triangles.resize(1'000'000);
  sc.film.width = 1024;
  sc.film.height = 1024;
  sc.film.spp = 4;
  render_settings settings;
  memory::counts c{1'000'000, 1U << 20, 1U << 20, false};
  const std::uint64_t uploaded = memory::gpu_bytes(c);
  c.gpu_triangle_bytes = ploc_device_bytes_per_triangle;
  const std::uint64_t built = memory::gpu_bytes(c), host = memory::host_bytes(c);
  ASSERT_GT(built, uploaded);
  settings.build = bvh_builder::sah;
  EXPECT_NO_THROW(check_render_memory(sc, settings, true, host, uploaded));
  settings.build = bvh_builder::automatic;  // the GPU builds it
  try {
    check_render_memory(sc, settings, true, host, built - 1);
    ADD_FAILURE() << "expected an error";
  } catch (const sieve::error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("the tree built on the GPU: " + std::to_string(ploc_device_bytes_per_triangle) + " bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("of GPU memory ("), std::string::npos) << msg;
  }
  EXPECT_NO_THROW(check_render_memory(sc, settings, true, host, built));
  EXPECT_NO_THROW(check_render_memory(sc, settings, false, host, std::uint64_t{1}));  // the CPU path is unaffected
}

// The memory model (core/memory.hpp) is checked before the BVH is built: a render too large for
// the memory given fails naming what it needs and what is free, of the host and of the GPU.
TEST(Memory, RenderTooLargeIsNamedBeforeTheBvh) {
  scene sc;
  sc.triangles.resize(1'000'000);
  sc.film.width = 1024;
  sc.film.height = 1024;
  sc.film.spp = 4;
  render_settings settings;
  const std::uint64_t need = memory::host_bytes({1'000'000, 1U << 20, 1U << 20, false});
  EXPECT_EQ(need, memory::host_base + 1'000'000 * memory::host_per_triangle + (1U << 20) * (memory::host_per_pixel + memory::host_per_path));
  EXPECT_NO_THROW(check_render_memory(sc, settings, false, need));
  try {
    check_render_memory(sc, settings, false, need - 1);
    ADD_FAILURE() << "expected an error";
  } catch (const sieve::error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("1000000 triangles, 1048576 pixels, 1048576 paths in flight need about"), std::string::npos) << msg;
    EXPECT_NE(msg.find("available"), std::string::npos) << msg;
  }
  settings.traversal = traversal_kind::bfs;  // the frontier's bound counts too
  EXPECT_THROW(check_render_memory(sc, settings, false, need), sieve::error);
  // The GPU: host memory enough, GPU memory short; the message names both.
  settings.traversal = traversal_kind::dfs;
  try {
    check_render_memory(sc, settings, true, need, memory::gpu_bytes({1'000'000, 1U << 20, 1U << 20, false}) - 1);
    ADD_FAILURE() << "expected an error";
  } catch (const sieve::error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("of memory ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("of GPU memory ("), std::string::npos) << msg;
    EXPECT_NE(msg.find(" free)"), std::string::npos) << msg;
  }
}

TEST(ImageIo, PngAndExrReadBack) {
  const fs::path dir = fs::temp_directory_path() / ("sieve_image_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::uint32_t w = 5, h = 3;
  std::vector<vec3> img(w * h);
  for (std::uint32_t i = 0; i < w * h; ++i) img[i] = {static_cast<float>(i) / 14.0f, 0.5f, i == 0 ? 7.0f : 0.0f};
  write_png(dir / "a.png", w, h, img);
  write_exr(dir / "a.exr", w, h, img);
  int pw = 0, ph = 0, pc = 0;
  unsigned char* png = stbi_load((dir / "a.png").c_str(), &pw, &ph, &pc, 3);
  ASSERT_NE(png, nullptr);
  EXPECT_EQ(pw, 5);
  EXPECT_EQ(ph, 3);
  for (std::uint32_t i = 0; i < w * h; ++i) {
    EXPECT_EQ(png[3 * i], srgb8(img[i].x));
    EXPECT_EQ(png[3 * i + 1], 188);  // sRGB(0.5) = 0.7354 -> 188
    EXPECT_EQ(png[3 * i + 2], i == 0 ? 255 : 0);
  }
  stbi_image_free(png);
  float* exr = nullptr;
  int ew = 0, eh = 0;
  const char* err = nullptr;
  ASSERT_EQ(LoadEXR(&exr, &ew, &eh, (dir / "a.exr").c_str(), &err), TINYEXR_SUCCESS);
  EXPECT_EQ(ew, 5);
  for (std::uint32_t i = 0; i < w * h; ++i) {
    EXPECT_EQ(exr[4 * i], img[i].x);
    EXPECT_EQ(exr[4 * i + 2], img[i].z);
  }
  std::free(exr);
  EXPECT_EQ(srgb8(0.0f), 0);
  EXPECT_EQ(srgb8(1.0f), 255);
  EXPECT_EQ(srgb8(std::nanf("")), 0);
  EXPECT_THROW(write_png(dir / "b.png", 4, 4, img), sieve::error);  // 15 pixels for 16
  EXPECT_THROW(write_png(dir / "no-such-dir-file" / "x" / "\0bad", w, h, img), sieve::error);
  fs::remove_all(dir);
}

// The compressed 8-wide tree the renderer builds for the shipped scenes (prepared_scene: the
// renderer's build options) traces what the binary DFS traces, hit for hit, closest and any hit, on
// rays such as a path tracer casts (rays_around).
TEST(CwBvh, TracesTheShippedScenesAsTheBinaryDfs) {
  for (const char* file : {"cornell-box/cornell-box.toml", "cornell-box/cornell-mirror-glass.toml", "sky/sky-terrain.toml",
                           "materials/materials.toml", "procedural/sphere-room.toml"}) {
    SCOPED_TRACE(file);
    const scene s = load_scene(scenes_dir / file);
    const prepared_scene ps(s);
    const bvh_view v = ps.view(8, 8).bvh;
    ASSERT_NE(v.cw.node_count, 0u);
    const cw_view c = cw_of(v);
    std::size_t found = 0, i = 0;
    const std::vector<ray> rays = rays_around(s.triangles, 20000, 12345);
    for (const ray& r : rays) {
      const hit want = closest_hit(pairs_of(v), r), got = cw_closest_hit(c, r);
      found += want.found();
      ASSERT_EQ(got.prim, want.prim) << "ray " << i;
      ASSERT_EQ(got.t, want.t) << "ray " << i;
      ASSERT_EQ(cw_any_hit(c, r), any_hit(pairs_of(v), r)) << "ray " << i++;
    }
    EXPECT_GT(found, rays.size() / 4) << "the rays should hit the scene";
  }
}

}  // namespace
}  // namespace sieve::render

// The wave the renderer picks: 2^20 on the CPU or without the memory figures; on the GPU the largest
// power of two up to 2^24 whose queues take at most a quarter of the GPU's free and the host's
// available memory, never below 2^20.
TEST(Waves, DefaultWavePathsFollowTheMemory) {
  namespace m = sieve::render::memory;
  using sieve::render::default_wave_paths;
  constexpr std::uint64_t gib = std::uint64_t{1} << 30;
  EXPECT_EQ(default_wave_paths(false, 141 * gib, 128 * gib), 1U << 20);
  EXPECT_EQ(default_wave_paths(true, std::nullopt, 128 * gib), 1U << 20);
  EXPECT_EQ(default_wave_paths(true, 141 * gib, std::nullopt), 1U << 20);
  EXPECT_EQ(default_wave_paths(true, 141 * gib, 128 * gib), 1U << 24);
  // 2^22 paths' queues fit a quarter of the GPU's free memory exactly, one byte less does not.
  const std::uint64_t gpu_22 = 4 * m::gpu_per_path * (std::uint64_t{1} << 22);
  EXPECT_EQ(default_wave_paths(true, gpu_22, 128 * gib), 1U << 22);
  EXPECT_EQ(default_wave_paths(true, gpu_22 - 4, 128 * gib), 1U << 21);
  // The host's memory bounds it too.
  const std::uint64_t host_21 = 4 * m::host_per_path * (std::uint64_t{1} << 21);
  EXPECT_EQ(default_wave_paths(true, 141 * gib, host_21), 1U << 21);
  EXPECT_EQ(default_wave_paths(true, gib / 8, gib / 8), 1U << 20);  // little of either: the floor
}
