// Building an environment map's sampling tables (environment_data.hpp).
#include "environment_data.hpp"

#include "environment.hpp"

#include <cmath>
#include <utility>

namespace sieve::render {

environment_data build_environment(std::uint32_t width, std::uint32_t height, std::vector<vec3> texels,
                                   float rotation_degrees, float scale, bool sample) {
  environment_data e;
  e.width = width;
  e.height = height;
  e.texels = std::move(texels);
  e.scale = scale;
  e.rotation_degrees = rotation_degrees;
  e.sample = sample;
  if (e.texels.empty()) return e;
  const std::size_t w = width, h = height;
  e.weight.resize(w * h);
  e.column_alias.reserve(w * h);
  std::vector<double> row_sum(h), row(w);
  double total = 0;
  for (std::size_t r = 0; r < h; ++r) {
    const double sin_theta = std::sin(3.14159265358979323846 * (static_cast<double>(r) + 0.5) / static_cast<double>(h));
    double sum = 0;
    for (std::size_t c = 0; c < w; ++c) {
      const vec3 t = e.texels[r * w + c];
      const float wt = static_cast<float>((double{t.x} + t.y + t.z) / 3 * sin_theta);
      e.weight[r * w + c] = wt;
      row[c] = wt;
      sum += wt;
    }
    // A black row is never picked; its table is uniform so that it still is one.
    const std::vector<alias_entry> columns = build_alias_table(row);
    e.column_alias.insert(e.column_alias.end(), columns.begin(), columns.end());
    row_sum[r] = sum;
    total += sum;
  }
  e.row_alias = build_alias_table(row_sum);
  // The integral over the unit square of the piecewise-constant weights: their mean. The density of
  // texel i is weight[i] / integral per unit of (u, v); the alias tables draw texel i with chance
  // weight[i] / total to within 2^-24 (the weights as stored), so sample and pdf agree.
  e.integral = static_cast<float>(total / static_cast<double>(w * h));
  return e;
}

environment_map environment_data::view() const {
  environment_map m;
  if (texels.empty()) return m;
  m.texels = texels.data();
  m.weight = weight.data();
  m.row_alias = row_alias.data();
  m.column_alias = column_alias.data();
  m.width = width;
  m.height = height;
  m.integral = integral;
  m.scale = scale;
  const double radians = static_cast<double>(rotation_degrees) * 3.14159265358979323846 / 180.0;
  m.cos_rotation = static_cast<float>(std::cos(radians));
  m.sin_rotation = static_cast<float>(std::sin(radians));
  m.sampled = sample && integral > 0 && scale > 0;
  return m;
}

}  // namespace sieve::render
