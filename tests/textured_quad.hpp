// A textured quad that fills the view under a white sky (environment 1, no lights), written as files
// (OBJ with texture coordinates, MTL with map_Kd, PNG, TOML) into a folder: a diffuse surface under a
// constant sky of radiance 1 reflects its albedo, so every pixel's expected value is the texture's
// colour there. The texture is 8 x 8 texels in four 4 x 4 quadrants of one colour each; the film
// (16 x 16) sees quadrant (qx, qy) around pixel (4 + 8 qx, 4 + 8 qy), where bilinear filtering
// reads texels of that quadrant only.
#pragma once

#include <core/image_io.hpp>
#include <scene/image_file.hpp>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sieve::render::testing {

// The quadrants' colours as written (linear), top-left, top-right, bottom-left, bottom-right.
inline constexpr std::array<vec3, 4> quad_colours = {vec3{0.8f, 0.2f, 0.1f}, vec3{0.1f, 0.7f, 0.2f},
                                                     vec3{0.1f, 0.2f, 0.9f}, vec3{0.5f, 0.5f, 0.5f}};

// What the texture holds after the 8-bit sRGB round trip (PNG written, read back).
inline vec3 stored(vec3 c) {
  auto f = [](float x) { return srgb_to_linear(static_cast<float>(srgb8(x)) / 255.0f); };
  return {f(c.x), f(c.y), f(c.z)};
}

inline void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

// The scene in `dir`; returns the TOML file's path. `spp` samples per pixel.
inline std::filesystem::path write_textured_quad(const std::filesystem::path& dir, std::uint32_t spp) {
  std::filesystem::create_directories(dir);
  std::vector<vec3> texels(64);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) texels[static_cast<std::size_t>(y * 8 + x)] = quad_colours[(y / 4) * 2 + x / 4];
  write_png(dir / "quad.png", 8, 8, texels);
  write_text(dir / "quad.mtl", "newmtl painted\nKd 0.8 0.8 0.8\nmap_Kd quad.png\n");
  // x, y in -1 .. 1 at z = 0; u along x, v along y. The camera on +z looks along -z: +x is right.
  write_text(dir / "quad.obj",
             "mtllib quad.mtl\nv -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\n"
             "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl painted\nf 1/1 2/2 3/3 4/4\n");
  write_text(dir / "quad.toml",
             "[camera]\nposition = [0.0, 0.0, 3.0]\nlook_at = [0.0, 0.0, 0.0]\nvfov = 30.0\n"
             "[film]\nwidth = 16\nheight = 16\nspp = " + std::to_string(spp) + "\nmax_bounces = 1\n"
             "[environment]\ncolor = [1.0, 1.0, 1.0]\n[[objects]]\nobj = \"quad.obj\"\n");
  return dir / "quad.toml";
}

// The mean of the 3 x 3 pixels around quadrant q's centre pixel of an image 16 pixels wide.
inline vec3 quadrant_mean(const std::vector<vec3>& image, int q) {
  const int cx = 4 + 8 * (q % 2), cy = 4 + 8 * (q / 2);
  vec3 sum{0, 0, 0};
  for (int y = cy - 1; y <= cy + 1; ++y)
    for (int x = cx - 1; x <= cx + 1; ++x) sum += image[static_cast<std::size_t>(y * 16 + x)];
  return sum / 9.0f;
}

}  // namespace sieve::render::testing
