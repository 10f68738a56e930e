// The heavy-material scene (scenes/materials, every shading family), small, for the routing tests on
// the CPU (routing_test) and the GPU (render_cuda_test).
#pragma once

#include <string>
#include <vector>

namespace sieve::render::test_scenes {

// Overrides of materials.toml: a w x h film at spp samples, 6 bounces.
inline std::vector<std::string> small_materials(int w, int h, int spp) {
  return {"film.width=" + std::to_string(w), "film.height=" + std::to_string(h), "film.spp=" + std::to_string(spp),
          "film.max_bounces=6"};
}

}  // namespace sieve::render::test_scenes
