// The HDR environment map: its importance sampling (the pdf integrates to one and matches the
// histogram of samples, a single bright texel is where every sample goes, rotation rotates), and
// rendering under it (the alias tables it draws by: each outcome's chance is its weight's within
// a count per slot of the 2^24 numbers a uniform takes), and rendering under it (white furnace: a diffuse convex object under a constant map has radiance
// albedo x constant; under a sky of one hemisphere, albedo (1 + n.y) / 2; MIS against BSDF-only).
#include <core/alias_table.hpp>
#include <core/environment.hpp>
#include <core/environment_data.hpp>
#include <core/rng.hpp>
#include <scene/environment_map.hpp>
#include <scene/sky.hpp>
#include <run/render.hpp>

#include "environment_scenes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sieve::render {
namespace {

using test_scenes::sphere_under;
constexpr double pi_d = 3.14159265358979323846;

// Every one of the 2^24 numbers uniform() can return, through tables of 1, 7 and 1000 outcomes (one
// of weight 0, one heavy): outcome i comes up w_i / total of the time to within one number per slot
// (the table decides in integers), the zero weight never, and the rest stays in [0, 1).
TEST(AliasTable, ChancesAreTheWeightsToWithinOneNumberPerSlot) {
  for (const std::uint32_t n : {1U, 7U, 1000U}) {
    std::vector<double> w(n);
    double total = 0;
    for (std::uint32_t i = 0; i < n; ++i) total += w[i] = i == 2 ? 0.0 : i == 5 ? 50.0 : 1.0 + uniform({i, 0, 0, 7}, 0);
    const std::vector<alias_entry> t = build_alias_table(w);
    ASSERT_EQ(t.size(), n);
    std::vector<double> count(n, 0);
    float rest_max = 0;
    for (std::uint32_t k = 0; k < alias_one; ++k) {
      const alias_pick p = pick_alias(t.data(), n, static_cast<float>(k) * (1.0f / 16777216.0f));
      ASSERT_LT(p.index, n);
      count[p.index] += 1;
      rest_max = std::max(rest_max, p.rest);
    }
    EXPECT_LT(rest_max, 1.0f);
    for (std::uint32_t i = 0; i < n; ++i) {
      EXPECT_NEAR(count[i], w[i] / total * alias_one, n + 1.0) << n << " outcomes, outcome " << i;
      if (w[i] == 0) EXPECT_EQ(count[i], 0) << n << " outcomes";
    }
  }
}

// A w x h map of numbers from the counter RNG in [0, 2), with texel `zero` black.
environment_data random_map(std::uint32_t w, std::uint32_t h, float rotation, std::uint32_t zero) {
  std::vector<vec3> t(std::size_t{w} * h);
  for (std::uint32_t i = 0; i < t.size(); ++i) {
    const rng_key k{i, 0, 0, 99};
    t[i] = {2 * uniform(k, 0), 2 * uniform(k, 1), 2 * uniform(k, 2)};
  }
  t[zero] = {0, 0, 0};
  return build_environment(w, h, std::move(t), rotation, 1.0f, true);
}

// The map's solid-angle density over the sphere, midpoint rule on a grid aligned with the texels.
TEST(EnvironmentSampling, PdfIntegratesToOne) {
  for (const float rotation : {0.0f, 30.0f}) {
    const environment_data d = random_map(16, 8, rotation, 5);
    const environment_map m = d.view();
    ASSERT_TRUE(m.sampled);
    const int nt = 8 * 64, np = 16 * 64;
    double sum = 0;
    for (int i = 0; i < nt; ++i)
      for (int j = 0; j < np; ++j) {
        const double theta = pi_d * (i + 0.5) / nt, phi = 2 * pi_d * (j + 0.5) / np;
        const vec3 local{static_cast<float>(std::sin(theta) * std::sin(phi)), static_cast<float>(std::cos(theta)),
                         static_cast<float>(-std::sin(theta) * std::cos(phi))};
        sum += environment_pdf(m, m.to_world(local)) * std::sin(theta) * (pi_d / nt) * (2 * pi_d / np);
      }
    EXPECT_NEAR(sum, 1.0, 2e-3) << "rotation " << rotation;
  }
}

// Samples fall in each texel with probability weight / sum of weights (a black texel never), and
// each sample's pdf and radiance are what the lookups by its direction give.
TEST(EnvironmentSampling, HistogramMatchesThePdf) {
  const std::uint32_t w = 8, h = 4, zero = 13;
  const environment_data d = random_map(w, h, 20.0f, zero);
  const environment_map m = d.view();
  double total = 0;
  for (const float x : d.weight) total += x;
  const std::uint32_t n = 400000;
  std::vector<double> count(w * h, 0);
  std::uint32_t pdf_off = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const rng_key k{i, 1, 2, 3};
    const environment_sample s = sample_environment(m, uniform(k, 0), uniform(k, 1));
    ASSERT_GT(s.pdf, 0.0f);
    ASSERT_NEAR(length(s.wi), 1.0f, 1e-5f);
    const std::uint32_t t = environment_texel_of(m, s.wi).index;
    count[t] += 1;
    const float p = environment_pdf(m, s.wi);
    const vec3 le = environment_radiance(m, s.wi);
    pdf_off += std::fabs(p - s.pdf) > 1e-3f * s.pdf || le.x != s.radiance.x;  // only on texel borders
  }
  EXPECT_LT(pdf_off, n / 1000);
  EXPECT_LE(count[zero], 2.0);
  for (std::uint32_t t = 0; t < w * h; ++t) {
    if (t == zero) continue;
    const double p = d.weight[t] / total, expect = n * p, sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(count[t], expect, 5 * sigma + 2) << "texel " << t;
  }
}

// A black map but for one texel: every sample lands in it, and the direction is where the mapping
// puts it (the image's centre, row h/2 - 1 just above the equator, looks along +z).
TEST(EnvironmentSampling, OneBrightTexelIsWhereSamplesGo) {
  const std::uint32_t w = 16, h = 8;
  std::vector<vec3> t(w * h, vec3{0, 0, 0});
  const std::uint32_t bright = (h / 2 - 1) * w + w / 2;
  t[bright] = {100, 50, 25};
  const environment_data d = build_environment(w, h, t, 0, 2.0f, true);
  const environment_map m = d.view();
  std::uint32_t inside = 0;
  const std::uint32_t n = 10000;
  for (std::uint32_t i = 0; i < n; ++i) {
    const rng_key k{i, 0, 0, 5};
    const environment_sample s = sample_environment(m, uniform(k, 0), uniform(k, 1));
    inside += environment_texel_of(m, s.wi).index == bright;
    EXPECT_EQ(s.radiance.x, 200.0f);  // scale applied
    EXPECT_GT(s.wi.z, 0.85f);         // +z, a little above the horizon
    EXPECT_GE(s.wi.y, 0.0f);
    EXPECT_LT(s.wi.y, std::sin(pi_d / 8) + 1e-5);
    EXPECT_LT(std::fabs(s.wi.x), std::sin(2 * pi_d / 16) + 1e-5);
    EXPECT_LT(s.wi.x, 1e-5f);  // u grows to the right of a camera looking along +z, which is -x
  }
  EXPECT_GE(inside, n - 10);
  // And what a ray sees: the texel, times the scale; black elsewhere.
  EXPECT_EQ(environment_radiance(m, normalize(vec3{0.05f, 0.1f, 1})).y, 0.0f);
  EXPECT_EQ(environment_radiance(m, normalize(vec3{-0.05f, 0.1f, 1})).y, 100.0f);
}

// Rotation by 90 degrees about +y takes every sample and lookup from d to (d.z, d.y, -d.x): what
// was along +z is along +x.
TEST(EnvironmentSampling, RotationRotates) {
  const environment_data a = random_map(16, 8, 0.0f, 3), b = random_map(16, 8, 90.0f, 3);
  const environment_map ma = a.view(), mb = b.view();
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const rng_key k{i, 4, 0, 5};
    const float u1 = uniform(k, 0), u2 = uniform(k, 1);
    const environment_sample sa = sample_environment(ma, u1, u2), sb = sample_environment(mb, u1, u2);
    const vec3 turned{sa.wi.z, sa.wi.y, -sa.wi.x};
    EXPECT_NEAR(sb.wi.x, turned.x, 1e-5f);
    EXPECT_NEAR(sb.wi.y, turned.y, 1e-5f);
    EXPECT_NEAR(sb.wi.z, turned.z, 1e-5f);
    EXPECT_NEAR(sb.pdf, sa.pdf, 1e-4f * sa.pdf);
    EXPECT_EQ(sb.radiance.x, sa.radiance.x);
  }
  const vec3 z{0.01f, 0.2f, 1}, x{1, 0.2f, -0.01f};
  EXPECT_EQ(environment_radiance(mb, normalize(x)).x, environment_radiance(ma, normalize(z)).x);
}

TEST(EnvironmentSampling, BlackOrSwitchedOffMapIsNotSampled) {
  EXPECT_FALSE(build_environment(4, 2, std::vector<vec3>(8, vec3{0, 0, 0}), 0, 1, true).view().sampled);
  EXPECT_FALSE(build_environment(4, 2, std::vector<vec3>(8, vec3{1, 1, 1}), 0, 1, false).view().sampled);
  EXPECT_TRUE(build_environment(4, 2, std::vector<vec3>(8, vec3{1, 1, 1}), 0, 1, true).view().sampled);
  EXPECT_FALSE(build_environment(4, 2, std::vector<vec3>(8, vec3{1, 1, 1}), 0, 0, true).view().sampled);
}

// ------------------------------------------------------------------------------------------------
// Rendering under a map.

// The pixels whose centre ray passes the sphere's centre at less than `inner` (on the sphere, away
// from its outline), or at more than `outer` (background); the unit normal where it hits.
struct pixel_class {
  std::vector<std::size_t> on, off;
  std::vector<vec3> normal;
};
pixel_class classify(const scene& s, float inner, float outer) {
  pixel_class c;
  const camera cam = camera::look_at(s.camera.position, s.camera.look_at, s.camera.up, s.camera.vfov_degrees, 1.0f);
  for (std::uint32_t y = 0; y < s.film.height; ++y)
    for (std::uint32_t x = 0; x < s.film.width; ++x) {
      const ray r = cam.generate((x + 0.5f) / s.film.width, (y + 0.5f) / s.film.height);
      const float tc = -dot(r.origin, r.direction);
      const vec3 closest = r.origin + r.direction * tc;
      const float dist = length(closest);
      const std::size_t i = std::size_t{y} * s.film.width + x;
      if (dist < inner) {
        c.on.push_back(i);
        const float t = tc - std::sqrt(1 - dist * dist);
        c.normal.push_back(normalize(r.origin + r.direction * t));
      } else if (dist > outer) {
        c.off.push_back(i);
      }
    }
  return c;
}

struct mean_and_error {
  double mean = 0, stderr_mean = 0;
};
mean_and_error stats(const std::vector<double>& v) {
  double sum = 0, sq = 0;
  for (const double x : v) {
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(v.size()), mean = sum / n;
  return {mean, std::sqrt(std::max(0.0, sq / n - mean * mean) / (n - 1))};
}

// White furnace: a convex diffuse object under a constant map L reflects a L (one bounce; every
// further ray leaves); the background is L exactly.
TEST(EnvironmentRender, WhiteFurnaceConvexSphereReflectsAlbedoTimesConstant) {
  for (const float albedo : {0.5f, 0.9f}) {
    SCOPED_TRACE("albedo " + std::to_string(albedo));
    const float l = 1.5f;
    const scene s = sphere_under(build_environment(16, 8, std::vector<vec3>(128, vec3{l, l, l}), 10, 1, true), albedo, 32);
    const prepared_scene ps(s);
    const render_result r = render_cpu(ps, render_settings::from(s));
    const auto image = r.mean();
    const pixel_class c = classify(s, 0.9f, 1.1f);
    ASSERT_GT(c.on.size(), 100U);
    ASSERT_GT(c.off.size(), 100U);
    std::vector<double> on;
    for (const std::size_t i : c.on) on.push_back(image[i].y);
    for (const std::size_t i : c.off) EXPECT_EQ(image[i].y, l);
    const mean_and_error st = stats(on);
    EXPECT_LT(st.stderr_mean, 0.01 * albedo * l) << "too noisy to judge";
    EXPECT_NEAR(st.mean, albedo * l, 4 * st.stderr_mean + 1e-3) << "stderr " << st.stderr_mean;
  }
}

// Under a sky of radiance 1 above the horizon and black below, a diffuse point with normal n
// receives irradiance pi (1 + n.y) / 2, so it reflects albedo (1 + n.y) / 2: non-uniform importance
// sampling (half the map black) against a closed form, pixel by pixel.
TEST(EnvironmentRender, HemisphereSkyGivesTheClosedForm) {
  std::vector<vec3> t(32 * 16, vec3{0, 0, 0});
  std::fill(t.begin(), t.begin() + 32 * 8, vec3{1, 1, 1});
  const float albedo = 0.8f;
  const scene s = sphere_under(build_environment(32, 16, std::move(t), 0, 1, true), albedo, 64);
  const prepared_scene ps(s);
  const auto image = render_cpu(ps, render_settings::from(s)).mean();
  const pixel_class c = classify(s, 0.9f, 1.1f);
  std::vector<double> diff;
  for (std::size_t k = 0; k < c.on.size(); ++k) diff.push_back(image[c.on[k]].y - albedo * (1 + c.normal[k].y) / 2);
  const mean_and_error st = stats(diff);
  EXPECT_LT(st.stderr_mean, 0.01) << "too noisy to judge";
  EXPECT_NEAR(st.mean, 0.0, 4 * st.stderr_mean + 2e-3) << "stderr " << st.stderr_mean;
}

// Next-event estimation towards the map, combined by MIS with BSDF sampling (and an area light
// sharing the light pick), gives the image BSDF sampling alone gives, within the noise: pixel by
// pixel differences average to zero.
TEST(EnvironmentRender, MisEqualsBsdfOnlyWithinNoise) {
  scene s = sphere_under(random_map(32, 16, 40.0f, 7), 0.7f, 128);
  s.film.width = s.film.height = 16;
  s.materials.push_back({"ground", material_kind::diffuse, {0.5f, 0.5f, 0.5f}, {0, 0, 0}, 1.5f});
  s.materials.push_back({"light", material_kind::diffuse, {0, 0, 0}, {6, 6, 6}, 1.5f});
  auto quad = [&](vec3 a, vec3 b, vec3 c, vec3 d, std::uint32_t m) {
    s.triangles.push_back({a, b, c});
    s.triangles.push_back({a, c, d});
    s.material_of.push_back(m);
    s.material_of.push_back(m);
  };
  quad({-4, -1, -4}, {-4, -1, 4}, {4, -1, 4}, {4, -1, -4}, 1);                          // ground, facing up
  quad({-1.5f, 2.5f, -1}, {-0.5f, 2.5f, -1}, {-0.5f, 2.5f, 0}, {-1.5f, 2.5f, 0}, 2);   // light, facing down
  s.emissive = {static_cast<std::uint32_t>(s.triangles.size() - 2), static_cast<std::uint32_t>(s.triangles.size() - 1)};
  s.camera = {{0, 1, -5}, {0, -0.3f, 0}, {0, 1, 0}, 45};
  const prepared_scene mis(s);
  const auto a = render_cpu(mis, render_settings::from(s)).mean();
  scene off = s;
  off.environment_map.sample = false;
  off.film.seed = 2;
  const prepared_scene bsdf(off);
  const auto b = render_cpu(bsdf, render_settings::from(off)).mean();
  std::vector<double> diff;
  double mean = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff.push_back((a[i].x + a[i].y + a[i].z - b[i].x - b[i].y - b[i].z) / 3);
    mean += (a[i].x + a[i].y + a[i].z) / 3 / static_cast<double>(a.size());
  }
  const mean_and_error st = stats(diff);
  EXPECT_LT(st.stderr_mean, 0.02 * mean) << "too noisy to judge";
  EXPECT_NEAR(st.mean, 0.0, 4 * st.stderr_mean) << "image mean " << mean;
}

}  // namespace
}  // namespace sieve::render
