// The mirror/glass Cornell box with microfacet blocks, for the render tests on CPU (render_test) and
// GPU (render_cuda_test): the tall block a rough tinted metal (the glTF model), the short one a rough
// glass, thick or thin-walled.
#pragma once

#include <string>
#include <vector>

namespace sieve::render::test_scenes {

// Overrides of cornell-mirror-glass.toml: the film (size x size, spp, seed 5) and the two blocks.
inline std::vector<std::string> microfacet_box(bool thin, int size, int spp) {
  return {"film.width=" + std::to_string(size), "film.height=" + std::to_string(size), "film.spp=" + std::to_string(spp),
          "film.seed=5", "materials[0].type=gltf", "materials[0].metallic=1", "materials[0].roughness=0.4",
          "materials[0].albedo=[0.9, 0.6, 0.3]", "materials[1].type=rough_dielectric", "materials[1].roughness=0.25",
          std::string("materials[1].thin=") + (thin ? "true" : "false")};
}

}  // namespace sieve::render::test_scenes
