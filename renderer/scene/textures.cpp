// Textures for materials: each image file read once (image_file.hpp), kept at its precision with
// its mipmaps (core/texture_store.hpp), within the scene's limits and its texture budget. The files
// are decoded together once the materials are known (decode_textures), each its own task.
#include "sections.hpp"

#include "../exec/stop.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <exception>

namespace sieve::render::detail {

namespace {

std::string use_suffix(image_use use) {
  static const char* const suffix[] = {"", " (opacity)", " (alpha)", " (normal)", " (metallic-roughness)"};
  return suffix[static_cast<int>(use)];
}

std::string mib(std::uint64_t bytes) {
  if (bytes < (1 << 20)) return std::to_string(bytes) + " bytes";
  return std::to_string((bytes + (1 << 19)) >> 20) + " MiB";
}

}  // namespace

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
  return add_texture(name, path.string(), wrap, who, use, {1, 1, 1},
                     [path](const image_limits& limits) { return read_texels(path, "texture", limits); });
}

std::int32_t registry::texture_index(const std::string& name, const std::vector<unsigned char>& bytes, wrap_mode wrap,
                                     vec3 scale, const std::string& who, image_use use) {
  const bool scaled = !(scale.x == 1 && scale.y == 1 && scale.z == 1);
  const std::string key = (scaled ? name + " x " + str(scale) : name) + use_suffix(use);
  if (const auto it = texture_of.find(std::make_pair(key, wrap)); it != texture_of.end()) return it->second;
  // The bytes are the caller's (a glTF's buffer, gone before the textures are decoded): a copy.
  return add_texture(key, name, wrap, who, use, scale, [bytes, name](const image_limits& limits) {
    return decode_texels(bytes.data(), bytes.size(), name, "texture", limits);
  });
}

std::int32_t registry::texture_index(const std::string& name, const image_rgb& image, wrap_mode wrap,
                                     const std::string& who) {
  check_image_size(image.width, image.height, name, "texture", texture_limits);
  // One texel a triangle (vertex colours): no pyramid, which would blend neighbouring triangles.
  texture t = make_texture(name, image.width, image.height, image.pixels, wrap, false);
  const std::uint64_t bytes = t.bytes();
  if (bytes > texture_budget - std::min(texture_budget, texture_bytes)) fail(over_budget(name, bytes, who));
  return keep(name, std::move(t));
}

std::string registry::over_budget(const std::string& name, std::uint64_t bytes, const std::string& who) const {
  return name + ": the texture takes " + mib(bytes) + " stored with its mipmaps; with the " + mib(texture_bytes) +
         " earlier textures take, that is past the scene's texture budget of " + mib(texture_budget) + " (" + who + ")";
}

std::int32_t registry::keep(const std::string& key, texture t) {
  texture_bytes += t.bytes();
  const auto index = static_cast<std::int32_t>(textures.size());
  texture_of.emplace(std::make_pair(key, t.wrap), index);
  textures.push_back(std::move(t));
  return index;
}

std::int32_t registry::add_texture(const std::string& key, const std::string& name, wrap_mode wrap,
                                   const std::string& who, image_use use, vec3 scale,
                                   std::function<texel_image(const image_limits&)> read) {
  stop_point();
  texture slot;
  slot.name = name;
  slot.wrap = wrap;
  const std::int32_t index = keep(key, std::move(slot));
  pending.push_back({index, name, who, wrap, use, scale, std::move(read)});
  return index;
}

void registry::decode_textures() {
  if (pending.empty()) return;
  stop_point();
  const std::size_t n = pending.size();
  std::vector<texel_image> images(n);
  std::vector<std::exception_ptr> failed(n);
  // Every file its own task (the largest images dominate; a grain of one lets them overlap).
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    try {
      stop_point();
      images[i] = pending[i].read(texture_limits);
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  // In the order the textures were asked for: the first failure, then the budget, as a serial read.
  std::vector<texture> layouts(n);
  for (std::size_t i = 0; i < n; ++i) {
    const pending_texture& p = pending[i];
    if (failed[i]) {
      try {
        std::rethrow_exception(failed[i]);
      } catch (const sieve::error& e) {
        fail(std::string(e.what()) + " (" + p.who + ")");
      }
    }
    // The budget is checked on what the texture will take, before its pyramid is allocated.
    layouts[i] = texture_layout(images[i], p.use);
    const std::uint64_t bytes = pyramid_bytes(layouts[i].width, layouts[i].height, layouts[i].channels, layouts[i].format);
    if (bytes > texture_budget - std::min(texture_budget, texture_bytes)) fail(over_budget(p.name, bytes, p.who));
    texture_bytes += bytes;
  }
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    try {
      const pending_texture& p = pending[i];
      textures[static_cast<std::size_t>(p.index)] = make_texture(p.name, images[i], p.use, p.wrap, p.scale);
      images[i] = texel_image{};  // the source texels, no longer needed
    } catch (...) {
      failed[i] = std::current_exception();
    }
  });
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  pending.clear();
}

}  // namespace sieve::render::detail
