// glTF's materials: the metallic-roughness model as sieve's `gltf` kind, their textures' images read
// once (gltf_model.hpp: map_materials, the loader's phase 4).
#include "gltf_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace sieve::render::gltf_detail {
namespace {

// ------------------------------------------------------------------------------------------------
// Materials: glTF's metallic-roughness model, sieve's `gltf` kind (core/pbr.hpp, scenes/README.md).

// An extension's number `key` (absent: `fallback`); anything but a number there is an error.
double number_in(const tinygltf::Value& ext, const char* key, double fallback, const model_reader& rd,
                 const std::string& where) {
  if (!ext.IsObject()) rd.error(where, "the extension is not an object");
  if (!ext.Has(key)) return fallback;
  const tinygltf::Value& v = ext.Get(key);
  if (!v.IsNumber()) rd.error(where, std::string(key) + " is not a number");
  return v.GetNumberAsDouble();
}

const tinygltf::Value* extension(const tinygltf::Material& m, const char* name) {
  const auto it = m.extensions.find(name);
  return it == m.extensions.end() ? nullptr : &it->second;
}

material map_material(const tinygltf::Material& g, const model_reader& rd, const std::string& where) {
  auto in_range = [&](double v, double lo, double hi, const std::string& key) {
    if (!std::isfinite(v) || v < lo || v > hi) {
      rd.error(where, key + " " + str(v) + " is out of range (" + str(lo) + " .. " + (std::isinf(hi) ? "inf" : str(hi)) + ")");
    }
    return v;
  };
  const auto& pbr = g.pbrMetallicRoughness;
  if (pbr.baseColorFactor.size() != 4) {
    rd.error(where, "baseColorFactor has " + std::to_string(pbr.baseColorFactor.size()) + " numbers, expected 4");
  }
  if (g.emissiveFactor.size() != 3 && !g.emissiveFactor.empty()) {
    rd.error(where, "emissiveFactor has " + std::to_string(g.emissiveFactor.size()) + " numbers, expected 3");
  }
  material out;
  float base[3], emissive[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    base[i] = static_cast<float>(in_range(pbr.baseColorFactor[i], 0, 1, "baseColorFactor"));
    if (!g.emissiveFactor.empty()) emissive[i] = static_cast<float>(in_range(g.emissiveFactor[i], 0, 1, "emissiveFactor"));
  }
  in_range(pbr.baseColorFactor[3], 0, 1, "baseColorFactor");
  const double metallic = in_range(pbr.metallicFactor, 0, 1, "metallicFactor");
  const double roughness = in_range(pbr.roughnessFactor, 0, 1, "roughnessFactor");
  double strength = 1;
  if (const tinygltf::Value* e = extension(g, "KHR_materials_emissive_strength")) {
    strength = in_range(number_in(*e, "emissiveStrength", 1, rd, where + ".extensions.KHR_materials_emissive_strength"), 0, HUGE_VAL, "KHR_materials_emissive_strength.emissiveStrength");
  }
  double transmission = 0, ior = 1.5;
  if (const tinygltf::Value* e = extension(g, "KHR_materials_transmission")) {
    transmission = in_range(number_in(*e, "transmissionFactor", 0, rd, where + ".extensions.KHR_materials_transmission"), 0, 1, "KHR_materials_transmission.transmissionFactor");
  }
  if (const tinygltf::Value* e = extension(g, "KHR_materials_ior")) {
    ior = in_range(number_in(*e, "ior", 1.5, rd, where + ".extensions.KHR_materials_ior"), 0, HUGE_VAL, "KHR_materials_ior.ior");
  }

  out.albedo = {base[0], base[1], base[2]};
  out.emission = vec3{emissive[0], emissive[1], emissive[2]} * static_cast<float>(strength);
  if (!finite(out.emission)) rd.error(where, "the emission overflows a float");
  out.ior = ior > 1 ? static_cast<float>(ior) : 1.5f;
  out.kind = material_kind::gltf;
  out.metallic = static_cast<float>(metallic);
  out.roughness = static_cast<float>(roughness);
  out.transmission = static_cast<float>(transmission);
  // alphaMode: OPAQUE ignores alpha; MASK and BLEND read baseColorFactor's alpha times the base
  // colour texture's (objects.cpp) as a hard cut-out at alphaCutoff or a stochastic opacity.
  if (g.alphaMode == "MASK" || g.alphaMode == "BLEND") {
    out.opacity = static_cast<float>(pbr.baseColorFactor[3]);
    out.alpha = g.alphaMode == "MASK" ? alpha_mode::mask : alpha_mode::blend;
    out.alpha_cutoff = static_cast<float>(in_range(g.alphaCutoff, 0, HUGE_VAL, "alphaCutoff"));
  } else if (g.alphaMode != "OPAQUE") {
    rd.error(where, "alphaMode \"" + g.alphaMode + "\" is not OPAQUE, MASK or BLEND");
  }
  out.normal_scale = static_cast<float>(g.normalTexture.scale);
  if (!std::isfinite(out.normal_scale) || std::fabs(out.normal_scale) > 1e6f) rd.error(where, "normalTexture.scale is not finite or past 1e6");
  // Without KHR_materials_volume (or with thickness 0) a transmissive surface is thin-walled.
  const tinygltf::Value* volume = extension(g, "KHR_materials_volume");
  out.thin = !volume || !(number_in(*volume, "thicknessFactor", 0, rd, where + ".extensions.KHR_materials_volume") > 0);
  return out;
}

// KHR_texture_transform's offset, rotation and scale as the affine map T R S of glTF's (u, v), turned
// into sieve's convention (v' = 1 - v): [a, -b, b + c; -d, e, 1 - e - f] for glTF's [a, b, c; d, e, f].
uv_transform texture_transform(const tinygltf::Value& ext, const model_reader& rd, const std::string& where) {
  auto pair = [&](const char* key, double fallback, double out[2]) {
    out[0] = out[1] = fallback;
    if (!ext.IsObject() || !ext.Has(key)) return;
    const tinygltf::Value& v = ext.Get(key);
    if (!v.IsArray() || v.ArrayLen() != 2 || !v.Get(0).IsNumber() || !v.Get(1).IsNumber())
      rd.error(where, std::string(key) + " is not an array of 2 numbers");
    out[0] = v.Get(0).GetNumberAsDouble();
    out[1] = v.Get(1).GetNumberAsDouble();
  };
  double offset[2], scale[2];
  pair("offset", 0, offset);
  pair("scale", 1, scale);
  const double rotation = number_in(ext, "rotation", 0, rd, where);
  for (const double x : {offset[0], offset[1], scale[0], scale[1], rotation})
    if (!std::isfinite(x) || std::fabs(x) > 1e6) rd.error(where, "a value (" + str(x) + ") is not finite or past 1e6");
  const double c = std::cos(rotation), s = std::sin(rotation);
  const double a = c * scale[0], b = -s * scale[1], t = offset[0], d = s * scale[0], e = c * scale[1], f = offset[1];
  uv_transform out;
  const double m[6] = {a, -b, b + t, -d, e, 1 - e - f};
  for (int i = 0; i < 6; ++i) out.m[i] = static_cast<float>(m[i]);
  return out;
}

}  // namespace

// Phase 4: materials mapped, names unique within the file ("material<i>" for an unnamed one; a
// repeated name gets "#<i>"), with their base colour, metallic-roughness and emissive textures'
// images, each read once (and only those: an image no material uses is never read; with
// opt.used_materials_only, neither is one that only materials no primitive uses name, though their
// textures are still checked).
void map_materials(const tinygltf::Model& model, const model_reader& rd, const gltf_options& opt,
                   const std::vector<bool>& used, gltf_mesh& out) {
  std::vector<detail::gltf_source::view_span> views;
  for (const auto& v : model.bufferViews)
    views.push_back({v.buffer >= 0 ? static_cast<std::size_t>(v.buffer) : ~std::size_t{0}, v.byteOffset, v.byteLength});
  std::vector<std::int32_t> image_of(rd.src.image_count(), -1);  // the file's image -> out.images
  auto texture = [&](const tinygltf::TextureInfo& info, const std::string& where, bool read) {
    gltf_mesh::texture_ref ref;
    if (info.index < 0) return ref;
    if (const auto it = info.extensions.find("KHR_texture_transform"); it != info.extensions.end())
      ref.transform = texture_transform(it->second, rd, where + ".extensions.KHR_texture_transform");
    rd.check_index(where, "texture", info.index, model.textures.size());
    const tinygltf::Texture& tex = model.textures[static_cast<std::size_t>(info.index)];
    const std::string twhere = idx("textures", static_cast<std::size_t>(info.index));
    if (tex.source < 0) {
      detail::print_warning(rd.file + ": " + twhere + ": no source image sieve reads (an extension's format?); " + where +
                            " keeps its factor" + opt.context);
      return ref;
    }
    if (static_cast<std::size_t>(tex.source) >= image_of.size()) {
      rd.error(twhere, "source " + std::to_string(tex.source) + " does not exist (the file has " +
                           std::to_string(image_of.size()) + " images)");
    }
    if (tex.sampler >= 0) {
      rd.check_index(twhere, "sampler", tex.sampler, model.samplers.size());
      // wrapS decides (sieve has one mode a texture); MIRRORED_REPEAT is read as REPEAT.
      if (model.samplers[static_cast<std::size_t>(tex.sampler)].wrapS == TINYGLTF_TEXTURE_WRAP_CLAMP_TO_EDGE)
        ref.wrap = wrap_mode::clamp;
    }
    if (info.texCoord != 0) {
      detail::print_warning(rd.file + ": " + where + ": texCoord " + std::to_string(info.texCoord) +
                            " is not read; TEXCOORD_0 is used" + opt.context);
    }
    const auto src = static_cast<std::size_t>(tex.source);
    if (!read) return ref;
    if (image_of[src] < 0) {
      detail::gltf_source::image im = rd.src.read_image(src, views);
      image_of[src] = static_cast<std::int32_t>(out.images.size());
      out.images.push_back({std::move(im.name), std::move(im.bytes), im.missing});
    }
    ref.image = image_of[src];
    return ref;
  };
  std::set<std::string> names;
  out.materials.reserve(model.materials.size());
  for (std::size_t i = 0; i < model.materials.size(); ++i) {
    const std::string where = idx("materials", i);
    const bool read = !opt.used_materials_only || used[i];
    out.base_color_texture.push_back(texture(model.materials[i].pbrMetallicRoughness.baseColorTexture,
                                             where + ".pbrMetallicRoughness.baseColorTexture", read));
    out.emissive_texture.push_back(texture(model.materials[i].emissiveTexture, where + ".emissiveTexture", read));
    out.metal_rough_texture.push_back(texture(model.materials[i].pbrMetallicRoughness.metallicRoughnessTexture,
                                              where + ".pbrMetallicRoughness.metallicRoughnessTexture", read));
    const tinygltf::NormalTextureInfo& nti = model.materials[i].normalTexture;
    tinygltf::TextureInfo info;
    info.index = nti.index;
    info.texCoord = nti.texCoord;
    info.extensions = nti.extensions;
    out.normal_texture.push_back(texture(info, where + ".normalTexture", read));
  }
  for (std::size_t i = 0; i < model.materials.size(); ++i) {
    material m = map_material(model.materials[i], rd, idx("materials", i));
    m.name = model.materials[i].name.empty() ? "material" + std::to_string(i) : model.materials[i].name;
    if (!names.insert(m.name).second) {
      m.name += "#" + std::to_string(i);
      names.insert(m.name);
    }
    out.materials.push_back(std::move(m));
  }
}

}  // namespace sieve::render::gltf_detail
