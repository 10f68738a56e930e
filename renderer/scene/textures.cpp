// Textures for materials: each image file read once (image_file.hpp), within the scene's limits.
#include "sections.hpp"

#include "../exec/stop.hpp"

#include <algorithm>

namespace sieve::render::detail {

std::int32_t registry::texture_index(const fs::path& path, wrap_mode wrap, const std::string& who, image_use use) {
  const std::string name = use == image_use::opacity ? path.string() + " (opacity)" : path.string();
  const auto key = std::make_pair(name, wrap);
  if (const auto it = texture_of.find(key); it != texture_of.end()) return it->second;
  texture_files.push_back(path);
  if (!file_exists(path)) {
    print_warning(who + ": texture " + in_quotes(path.string()) + " not found; the material keeps its constant colour");
    texture_of.emplace(key, -1);
    return -1;
  }
  return add_texture(name, path.string(), wrap, who,
                     [&](const image_limits& limits) { return read_image(path, "texture", limits, use); });
}

std::int32_t registry::texture_index(const std::string& name, const std::vector<unsigned char>& bytes, wrap_mode wrap,
                                     vec3 scale, const std::string& who, bool data, image_use use) {
  const bool scaled = !(scale.x == 1 && scale.y == 1 && scale.z == 1);
  const std::string key =
      (scaled ? name + " x " + str(scale) : name) + (data ? " (data)" : "") + (use == image_use::alpha ? " (alpha)" : "");
  if (const auto it = texture_of.find(std::make_pair(key, wrap)); it != texture_of.end()) return it->second;
  return add_texture(key, name, wrap, who, [&](const image_limits& limits) {
    image_rgb image = decode_image(bytes.data(), bytes.size(), name, "texture", limits, data ? image_use::data : use);
    if (scaled)
      for (vec3& p : image.pixels) p = p * scale;
    return image;
  });
}

std::int32_t registry::texture_index(const std::string& name, image_rgb image, wrap_mode wrap, const std::string& who) {
  return add_texture(name, name, wrap, who, [&](const image_limits& limits) {
    check_image_size(image.width, image.height, name, "texture", limits);
    return std::move(image);
  });
}

std::int32_t registry::add_texture(const std::string& key, const std::string& name, wrap_mode wrap,
                                   const std::string& who, const std::function<image_rgb(const image_limits&)>& read) {
  stop_point();
  image_limits limits = texture_limits;
  limits.max_bytes = std::min(limits.max_bytes, texture_budget - std::min(texture_budget, texture_bytes));
  image_rgb image;
  try {
    image = read(limits);
  } catch (const sieve::error& e) {
    std::string taken;
    if (texture_bytes > 0) {
      taken = "; earlier textures take " + std::to_string(texture_bytes >> 20) + " MiB of the scene's " +
              std::to_string(texture_budget >> 20) + " MiB for textures";
    }
    fail(std::string(e.what()) + " (" + who + taken + ")");
  }
  texture t;
  t.name = name;
  t.width = image.width;
  t.height = image.height;
  t.wrap = wrap;
  t.texels = std::move(image.pixels);
  texture_bytes += t.texels.size() * sizeof(vec3);
  const auto index = static_cast<std::int32_t>(textures.size());
  textures.push_back(std::move(t));
  texture_of.emplace(std::make_pair(key, wrap), index);
  return index;
}

}  // namespace sieve::render::detail
