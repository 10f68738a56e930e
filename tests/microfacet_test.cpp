// The microfacet BSDFs (rough conductor, rough dielectric thick and thin, the glTF
// metallic-roughness model), each through the same world-space calls the path tracer makes:
// a white furnace (energy <= 1, = 1 where the model is lossless), reciprocity, the pdf integrating
// to the chance that a sample is valid, the sampled weights agreeing with eval / pdf, and a
// chi-square test of sampled directions against the pdf.
#include <core/bsdf.hpp>
#include <core/rng.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

constexpr vec3 up{0, 0, 1};

vec3 direction(float theta, float phi) { return {sinf(theta) * cosf(phi), sinf(theta) * sinf(phi), cosf(theta)}; }

struct bsdf_case {
  std::string name;
  surface s;
  bool lossless_when_smooth = false;  // energy 1 in the furnace (dielectrics)
};

surface make(surface_kind k, float roughness, vec3 albedo = {1, 1, 1}) {
  surface s;
  s.kind = k;
  s.roughness = roughness;
  s.albedo = albedo;
  return s;
}

std::vector<bsdf_case> cases() {
  std::vector<bsdf_case> c;
  for (const float r : {0.3f, 0.6f, 1.0f}) {
    const std::string rs = std::to_string(static_cast<int>(r * 10));
    c.push_back({"conductor_r0" + rs, make(surface_kind::conductor, r, {0.95f, 0.7f, 0.4f})});
    c.push_back({"dielectric_r0" + rs, make(surface_kind::rough_dielectric, r), true});
    surface thin = make(surface_kind::rough_dielectric, r);
    thin.thin = true;
    c.push_back({"thin_dielectric_r0" + rs, thin, true});
    surface plastic = make(surface_kind::pbr, r, {0.6f, 0.3f, 0.9f});
    c.push_back({"gltf_plastic_r0" + rs, plastic});
    surface metal = make(surface_kind::pbr, r, {0.9f, 0.8f, 0.5f});
    metal.metallic = 1;
    c.push_back({"gltf_metal_r0" + rs, metal});
    surface mixed = make(surface_kind::pbr, r, {0.8f, 0.8f, 0.8f});
    mixed.metallic = 0.4f;
    mixed.transmission = 0.5f;
    c.push_back({"gltf_mixed_r0" + rs, mixed});
  }
  return c;
}

class Microfacet : public ::testing::TestWithParam<bsdf_case> {};

// Viewers above the surface and, for the dielectrics, inside it.
std::vector<vec3> viewers(const surface& s) {
  std::vector<vec3> v{direction(0.2f, 0.3f), direction(1.0f, 1.3f), direction(1.4f, -0.7f)};
  if (s.kind != surface_kind::conductor) v.push_back(direction(pi - 0.5f, 2.0f));
  return v;
}

// Sum of f cos over the sphere by midpoint quadrature in (cos theta, phi): equal-area cells.
template <class F>
double sphere_integral(F&& f, int nz = 400, int nphi = 400) {
  double sum = 0;
  const double cell = (2.0 / nz) * (2 * M_PI / nphi);
  for (int i = 0; i < nz; ++i) {
    const float z = -1 + (i + 0.5f) * 2.0f / nz;
    const float r = sqrtf(fmaxf(0.0f, 1 - z * z));
    for (int j = 0; j < nphi; ++j) {
      const float phi = (j + 0.5f) * 2 * pi / nphi;
      sum += f(vec3{r * cosf(phi), r * sinf(phi), z}) * cell;
    }
  }
  return sum;
}

TEST_P(Microfacet, WhiteFurnaceAndSamplingAgree) {
  const surface& s = GetParam().s;
  for (const vec3 wo : viewers(s)) {
    // Energy by sampling (mean weight) and by quadrature of eval: the same number, <= 1.
    const int n = 200000;
    double sampled = 0;
    int valid = 0;
    for (int i = 0; i < n; ++i) {
      const rng_key k{static_cast<std::uint32_t>(i), 1, 0, 7};
      const bsdf_sample b = sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2));
      if (max_component(b.weight) <= 0) continue;
      ++valid;
      ASSERT_NEAR(length(b.wi), 1.0f, 1e-4f);
      ASSERT_TRUE(finite(b.weight));
      float pdf = 0;
      const vec3 f = eval_bsdf(s, wo, b.wi, up, pdf);
      ASSERT_NEAR(b.pdf, pdf, 1e-3f * pdf + 1e-6f) << "sampling reports the pdf eval gives";
      ASSERT_NEAR(b.weight.y, f.y / pdf, 1e-3f * b.weight.y + 1e-6f) << "weight = f cos / pdf";
      sampled += b.weight.y;
    }
    sampled /= n;
    const double quadrature = sphere_integral([&](vec3 wi) {
      float pdf = 0;
      return static_cast<double>(eval_bsdf(s, wo, wi, up, pdf).y);
    });
    EXPECT_LE(sampled, 1.0 + 1e-2) << "wo.z " << wo.z;
    EXPECT_NEAR(sampled, quadrature, 0.02 * quadrature + 2e-3) << "wo.z " << wo.z;
    // The pdf integrates to the chance that a sample is valid (a rough lobe may send some below
    // the horizon, where the path ends): at most 1.
    const double mass = sphere_integral([&](vec3 wi) {
      float pdf = 0;
      eval_bsdf(s, wo, wi, up, pdf);
      return static_cast<double>(pdf);
    });
    EXPECT_LE(mass, 1.0 + 1e-2);
    EXPECT_NEAR(mass, static_cast<double>(valid) / n, 0.02) << "wo.z " << wo.z;
  }
}

TEST_P(Microfacet, Reciprocity) {
  const surface& s = GetParam().s;
  for (int i = 0; i < 2000; ++i) {
    const rng_key k{static_cast<std::uint32_t>(i), 2, 0, 9};
    const vec3 a = direction(acosf(1 - 2 * uniform(k, 0)), 2 * pi * uniform(k, 1));
    const vec3 b = direction(acosf(1 - 2 * uniform(k, 2)), 2 * pi * uniform(k, 3));
    if (fabsf(a.z) < 0.05f || fabsf(b.z) < 0.05f) continue;
    float pdf = 0;
    const float fab = eval_bsdf(s, a, b, up, pdf).x / fabsf(b.z);
    const float fba = eval_bsdf(s, b, a, up, pdf).x / fabsf(a.z);
    // Across a thick dielectric's boundary the transport is reciprocal up to the squared indices of
    // the two sides: f(a, b) / eta_b^2 = f(b, a) / eta_a^2 (radiance is not rescaled there).
    float ea = 1, eb = 1;
    if (s.kind != surface_kind::conductor && !s.thin && a.z * b.z < 0) {
      ea = a.z < 0 ? s.ior : 1.0f;
      eb = b.z < 0 ? s.ior : 1.0f;
    }
    ASSERT_NEAR(fab / (eb * eb), fba / (ea * ea), 1e-3f * fab + 1e-5f) << "a.z " << a.z << " b.z " << b.z;
  }
}

// Chi-square of sampled directions against the pdf, over cells of equal (theta, phi) extent
// (fine near the poles, where refracted lobes are narrow); cells of small expectation are pooled. The statistic's tail is taken from the Wilson-Hilferty normal
// approximation.
TEST_P(Microfacet, ChiSquareOfSampledDirections) {
  const surface& s = GetParam().s;
  const int nz = 40, nphi = 40, n = 400000;
  for (const vec3 wo : viewers(s)) {
    std::vector<double> observed(nz * nphi, 0), expected(nz * nphi, 0);
    double mass = 0;
    for (int i = 0; i < n; ++i) {
      const rng_key k{static_cast<std::uint32_t>(i), 3, 0, 11};
      const bsdf_sample b = sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2));
      if (max_component(b.weight) <= 0 || b.specular) continue;
      const int iz = std::min(nz - 1, static_cast<int>(acosf(fminf(1.0f, fmaxf(-1.0f, b.wi.z))) / pi * nz));
      float phi = atan2f(b.wi.y, b.wi.x);
      if (phi < 0) phi += 2 * pi;
      const int ip = std::min(nphi - 1, static_cast<int>(phi / (2 * pi) * nphi));
      observed[iz * nphi + ip] += 1;
    }
    const int sub = 16;  // quadrature points per cell side
    for (int iz = 0; iz < nz; ++iz)
      for (int ip = 0; ip < nphi; ++ip) {
        double sum = 0;
        for (int a = 0; a < sub; ++a)
          for (int c = 0; c < sub; ++c) {
            const float theta = (iz + (a + 0.5f) / sub) * pi / nz;
            const float phi = (ip + (c + 0.5f) / sub) * 2 * pi / nphi;
            float pdf = 0;
            eval_bsdf(s, wo, direction(theta, phi), up, pdf);
            sum += pdf * sinf(theta);
          }
        const double e = sum / (sub * sub) * (M_PI / nz) * (2 * M_PI / nphi) * n;
        expected[iz * nphi + ip] = e;
        mass += e;
      }
    double chi2 = 0, pooled_o = 0, pooled_e = 0;
    int dof = -1;
    for (std::size_t c = 0; c < observed.size(); ++c) {
      if (expected[c] < 5) {
        pooled_o += observed[c];
        pooled_e += expected[c];
        continue;
      }
      chi2 += (observed[c] - expected[c]) * (observed[c] - expected[c]) / expected[c];
      ++dof;
    }
    if (pooled_e >= 5) {
      chi2 += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e;
      ++dof;
    } else {
      EXPECT_LT(pooled_o, 20) << "samples where the pdf is ~0";
    }
    ASSERT_GT(dof, 10);
    const double k = dof, z = (std::cbrt(chi2 / k) - (1 - 2 / (9 * k))) / std::sqrt(2 / (9 * k));
    EXPECT_LT(z, 4.0) << GetParam().name << " wo.z " << wo.z << " chi2 " << chi2 << " dof " << dof;
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Microfacet, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// Lossless where it should be: a nearly smooth dielectric (thick or thin) and the perfect limits
// return all the energy; a rough one loses only what single scattering does (a few %).
TEST(MicrofacetLimits, SmoothDielectricsAreLossless) {
  for (const bool thin : {false, true})
    for (const float r : {0.0f, 0.05f}) {
      surface s = make(surface_kind::rough_dielectric, r);
      s.thin = thin;
      for (const vec3 wo : {direction(0.3f, 0.1f), direction(1.2f, 0.5f), direction(pi - 0.3f, 0.2f)}) {
        double sum = 0;
        const int n = 50000;
        for (int i = 0; i < n; ++i) {
          const rng_key k{static_cast<std::uint32_t>(i), 4, 0, 5};
          sum += sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2)).weight.x;
        }
        EXPECT_NEAR(sum / n, 1.0, r == 0 ? 1e-6 : 0.01) << "thin " << thin << " r " << r << " wo.z " << wo.z;
      }
    }
}

TEST(MicrofacetLimits, SmoothConductorIsASchlickMirror) {
  const surface s = make(surface_kind::conductor, 0, {0.9f, 0.5f, 0.2f});
  const vec3 wo = direction(0.4f, 0.8f);
  const bsdf_sample b = sample_bsdf(s, wo, up, 0.3f, 0.6f, 0.1f);
  EXPECT_TRUE(b.specular);
  EXPECT_NEAR(b.wi.z, wo.z, 1e-6f);
  EXPECT_NEAR(b.wi.x, -wo.x, 1e-6f);
  EXPECT_NEAR(b.weight.x, schlick({0.9f, 0.5f, 0.2f}, wo.z).x, 1e-6f);
  EXPECT_FALSE(has_smooth_lobe(s));
  // At normal incidence the reflectance is the base colour.
  EXPECT_NEAR(sample_bsdf(s, up, up, 0, 0, 0).weight.y, 0.5f, 1e-6f);
}

TEST(MicrofacetLimits, GltfDielectricLayerOverLambert) {
  // Roughness 1: the glTF dielectric's energy at normal incidence is about 1 for a white base (the
  // Fresnel mix takes from the diffuse what the layer reflects), never above.
  surface s = make(surface_kind::pbr, 1.0f, {1, 1, 1});
  const vec3 wo = up;
  double sum = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    const rng_key k{static_cast<std::uint32_t>(i), 5, 0, 5};
    sum += sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2)).weight.x;
  }
  EXPECT_GT(sum / n, 0.9);
  EXPECT_LE(sum / n, 1.01);
  // Metallic 1 with a black base reflects only the grazing Fresnel tail: little.
  s.metallic = 1;
  s.albedo = {0, 0, 0};
  sum = 0;
  for (int i = 0; i < n; ++i) {
    const rng_key k{static_cast<std::uint32_t>(i), 5, 0, 5};
    sum += sample_bsdf(s, wo, up, uniform(k, 0), uniform(k, 1), uniform(k, 2)).weight.x;
  }
  EXPECT_LT(sum / n, 0.1);
}

// The visible-normal sampler draws normals with density D_v: its histogram in cos(theta_m)
// against the quadrature of D_v (an independent check of the sampler itself).
TEST(Ggx, VisibleNormalsFollowTheirDensity) {
  const float alpha = 0.4f;
  const vec3 wo = direction(0.9f, 0.0f);
  const int bins = 20, n = 200000;
  std::vector<double> hist(bins, 0);
  for (int i = 0; i < n; ++i) {
    const rng_key k{static_cast<std::uint32_t>(i), 6, 0, 1};
    const vec3 m = ggx_sample_visible(alpha, wo, uniform(k, 0), uniform(k, 1));
    ASSERT_GT(m.z, 0);
    ASSERT_GT(dot(m, wo), -1e-4f) << "a visible normal faces the viewer";
    hist[std::min(bins - 1, static_cast<int>(m.z * bins))] += 1.0 / n;
  }
  for (int b = 0; b < bins; ++b) {
    // Integral of D_v over the band of cos(theta_m) in [b, b + 1) / bins.
    double p = 0;
    const int nz = 50, nphi = 200;
    for (int i = 0; i < nz; ++i)
      for (int j = 0; j < nphi; ++j) {
        const float z = (b + (i + 0.5f) / nz) / bins, phi = (j + 0.5f) * 2 * pi / nphi;
        const float r = sqrtf(1 - z * z);
        p += ggx_visible_pdf(alpha, wo, {r * cosf(phi), r * sinf(phi), z}) * (1.0 / bins / nz) * (2 * M_PI / nphi);
      }
    EXPECT_NEAR(hist[b], p, 3e-3 + 0.03 * p) << "band " << b;
  }
  // D integrates to 1 over projected area: integral of D(m) cos(theta_m) d(omega_m) = 1.
  double projected = 0;
  for (int i = 0; i < 2000; ++i) {
    const float z = (i + 0.5f) / 2000;
    projected += ggx_d(alpha, {sqrtf(1 - z * z), 0, z}) * z * 2 * M_PI / 2000;
  }
  EXPECT_NEAR(projected, 1.0, 1e-3);
}

}  // namespace
}  // namespace sieve::render
