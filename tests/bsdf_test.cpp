// The BSDFs: sampled directions on the right side, weights that conserve energy, Snell's law,
// Fresnel at normal incidence and total internal reflection, and a Monte Carlo check that the
// diffuse lobe's evaluation and pdf agree with its sampling.
#include <core/bsdf.hpp>
#include <core/rng.hpp>

#include <gtest/gtest.h>

namespace sieve::render {
namespace {

constexpr vec3 up{0, 0, 1};

vec3 direction(float theta, float phi) { return {sinf(theta) * cosf(phi), sinf(theta) * sinf(phi), cosf(theta)}; }

TEST(Bsdf, FresnelKnownValues) {
  EXPECT_NEAR(fresnel_dielectric(1.0f, 1.0f, 1.5f), 0.04f, 1e-6f);  // ((1 - 1.5) / (1 + 1.5))^2
  EXPECT_NEAR(fresnel_dielectric(1.0f, 1.5f, 1.0f), 0.04f, 1e-6f);
  EXPECT_NEAR(fresnel_dielectric(1e-4f, 1.0f, 1.5f), 1.0f, 1e-3f);  // grazing: everything reflects
  // From glass at 60 degrees: past the critical angle asin(1/1.5) = 41.8 degrees.
  EXPECT_EQ(fresnel_dielectric(cosf(60 * pi / 180), 1.5f, 1.0f), 1.0f);
  EXPECT_LT(fresnel_dielectric(cosf(40 * pi / 180), 1.5f, 1.0f), 1.0f);
}

TEST(Bsdf, DiffuseSamplesTheViewersHemisphereWithWeightAlbedo) {
  surface s;
  s.albedo = {0.2f, 0.5f, 0.9f};
  for (const vec3 wo : {direction(0.3f, 1.0f), direction(2.5f, -2.0f)}) {  // both sides of the surface
    for (std::uint32_t i = 0; i < 1000; ++i) {
      const rng_key k{i, 0, 0, 3};
      const bsdf_sample b = sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2));
      ASSERT_GT(dot(b.wi, up) * dot(wo, up), 0) << "same side as the viewer";
      ASSERT_NEAR(length(b.wi), 1.0f, 1e-5f);
      EXPECT_EQ(b.weight.x, s.albedo.x);
      EXPECT_NEAR(b.pdf, pdf_diffuse(wo, b.wi, up), 1e-5f);
      const vec3 f_cos = eval_diffuse(s, wo, b.wi, up);
      EXPECT_NEAR(f_cos.y / b.pdf, s.albedo.y, 1e-4f) << "evaluation and sampling agree";
      EXPECT_FALSE(b.specular);
    }
  }
  EXPECT_EQ(pdf_diffuse(direction(0.3f, 0), direction(2.0f, 0), up), 0.0f);  // opposite sides
}

TEST(Bsdf, DiffusePdfIntegratesToOne) {
  // Midpoint rule over the hemisphere: integral of pdf d(omega) = 1.
  const int nt = 200, np = 400;
  double sum = 0;
  const vec3 wo = direction(0.7f, 0.2f);
  for (int i = 0; i < nt; ++i)
    for (int j = 0; j < np; ++j) {
      const float theta = (i + 0.5f) * (pi / 2) / nt, phi = (j + 0.5f) * 2 * pi / np;
      sum += pdf_diffuse(wo, direction(theta, phi), up) * sinf(theta) * (pi / 2 / nt) * (2 * pi / np);
    }
  EXPECT_NEAR(sum, 1.0, 1e-3);
}

TEST(Bsdf, MirrorReflectsAboutTheNormal) {
  surface s;
  s.kind = surface_kind::mirror;
  s.albedo = {0.9f, 0.9f, 0.9f};
  const vec3 wo = normalize(vec3{1, 2, 3});
  const bsdf_sample b = sample_bsdf(s, wo, up, 0.5f, 0.5f, 0.5f);
  EXPECT_TRUE(b.specular);
  EXPECT_NEAR(b.wi.x, -wo.x, 1e-6f);
  EXPECT_NEAR(b.wi.y, -wo.y, 1e-6f);
  EXPECT_NEAR(b.wi.z, wo.z, 1e-6f);
  EXPECT_EQ(b.weight.x, 0.9f);
}

TEST(Bsdf, DielectricRefractsBySnellAndReflectsByFresnel) {
  surface s;
  s.kind = surface_kind::dielectric;
  s.albedo = {1, 1, 1};
  s.ior = 1.5f;
  const float theta_i = 0.6f;
  const vec3 wo = direction(theta_i, 0.4f);  // outside, above the surface
  const bsdf_sample refracted = sample_bsdf(s, wo, up, 0, 0, 0.99f);
  ASSERT_LT(refracted.wi.z, 0) << "transmitted into the glass";
  const float sin_t = sqrtf(1 - refracted.wi.z * refracted.wi.z);
  EXPECT_NEAR(sinf(theta_i), 1.5f * sin_t, 1e-5f);
  EXPECT_NEAR(length(refracted.wi), 1.0f, 1e-5f);
  const bsdf_sample reflected = sample_bsdf(s, wo, up, 0, 0, 0.0f);
  EXPECT_GT(reflected.wi.z, 0);
  // Leaving the glass at 60 degrees: total internal reflection whatever u3 is.
  const vec3 inside = direction(pi - 60 * pi / 180, 1.0f);  // below the surface, looking up
  const bsdf_sample tir = sample_bsdf(s, inside, up, 0, 0, 0.999f);
  EXPECT_LT(tir.wi.z, 0) << "stays inside";
  // The chance of reflecting equals the Fresnel reflectance.
  int reflections = 0;
  const int trials = 20000;
  for (int i = 0; i < trials; ++i)
    reflections += sample_bsdf(s, wo, up, 0, 0, (i + 0.5f) / trials).wi.z > 0;
  EXPECT_NEAR(reflections / double(trials), fresnel_dielectric(cosf(theta_i), 1.0f, 1.5f), 1e-3);
}

}  // namespace
}  // namespace sieve::render
