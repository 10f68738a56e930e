// The host's copy of an environment map and its sampling tables (environment.hpp reads them through
// an environment_map view): built once per scene, copied to the device as they are for the GPU.
#pragma once

#include "alias_table.hpp"
#include "math.hpp"

#include <cstdint>
#include <vector>

namespace sieve::render {

struct environment_map;  // environment.hpp (not included here: scene.hpp includes this header)

struct environment_data {
  std::uint32_t width = 0, height = 0;
  std::vector<vec3> texels;           // row 0 at the top
  std::vector<float> weight;          // per texel
  std::vector<alias_entry> row_alias;     // height entries: a row by the sum of its weights
  std::vector<alias_entry> column_alias;  // height rows of width: a texel of the row by its weight
  float integral = 0, scale = 1, rotation_degrees = 0;
  bool sample = true;                 // false: next-event estimation leaves the map alone (BSDF sampling only)

  bool empty() const { return texels.empty(); }
  // Pointers into the vectors above (null texels when empty).
  environment_map view() const;
};

// The tables of a width x height map (texels finite and >= 0, the loader checked them): weights,
// alias tables and their integral. `sample` false, or a black map: view().sampled is false.
environment_data build_environment(std::uint32_t width, std::uint32_t height, std::vector<vec3> texels,
                                   float rotation_degrees, float scale, bool sample);

}  // namespace sieve::render
