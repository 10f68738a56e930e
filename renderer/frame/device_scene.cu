#include "device_scene.hpp"
#include "cuda_context.hpp"
#include "waves.hpp"

#include "../bvh/device_layouts.cuh"

#include <exec/device_array.cuh>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <cstring>
#include <future>
#include <mutex>
#include <vector>

namespace sieve::render {

using exec::device_array;

struct device_bvh::arrays : device_layouts {
  using device_layouts::device_layouts;
};

device_bvh::device_bvh(const bvh& b, std::span<const triangle> triangles) : arrays_(new arrays(b)) {
  arrays& a = *arrays_;
  a.triangles = device_array<triangle>(std::vector<triangle>(triangles.begin(), triangles.end()));
  view_ = a.view(counts_of(b));
}

device_bvh::device_bvh(const device_tree& tree) : view_(tree.view()) {}

device_bvh::~device_bvh() = default;

namespace {

// A texture in a CUDA mipmapped array, filtered by the texture unit: trilinear, normalised
// coordinates, the view's wrap mode, sRGB decoded where the texels are sRGB. The texture unit has
// no three-channel formats: RGB goes up as a layered array of three one-channel layers (R, G, B),
// the bytes it is stored in, read by three fetches (texture_lookup); `rgba`: as RGBA, a third more
// bytes, one fetch (the view then says 4 channels).
class device_texture {
 public:
  device_texture(const texture& t, bool rgba) {
    const int bits = static_cast<int>(channel_bytes(t.format)) * 8;
    const cudaChannelFormatKind kind = t.format == texel_format::half || t.format == texel_format::float32
                                           ? cudaChannelFormatKindFloat
                                           : cudaChannelFormatKindUnsigned;
    const bool planar = t.channels == 3 && !rgba, widen = t.channels == 3 && rgba;
    const cudaChannelFormatDesc desc =
        planar ? cudaCreateChannelDesc(bits, 0, 0, 0, kind)
               : cudaCreateChannelDesc(bits, t.channels >= 2 ? bits : 0, t.channels >= 3 ? bits : 0,
                                       t.channels >= 3 ? bits : 0, kind);
    SIEVE_CUDA_CHECK(cudaMallocMipmappedArray(&array_, &desc, make_cudaExtent(t.width, t.height, planar ? 3 : 0),
                                              t.levels, planar ? cudaArrayLayered : 0));
    const texture_view v = t.view();
    std::vector<unsigned char> planes;
    for (std::uint32_t l = 0; l < t.levels; ++l) {
      cudaArray_t level = nullptr;
      SIEVE_CUDA_CHECK(cudaGetMipmappedArrayLevel(&level, array_, l));
      const std::size_t w = v.level_width(l), h = v.level_height(l), in = v.texel_bytes();
      const unsigned char* from = t.texels.data() + t.level_offset[l];
      if (widen) {  // RGB to RGBA, the fourth channel zero (a lookup never reads it)
        planes.assign(w * h * in / 3 * 4, 0);
        for (std::size_t i = 0; i < w * h; ++i) std::memcpy(planes.data() + i * (in / 3 * 4), from + i * in, in);
        SIEVE_CUDA_CHECK(
            cudaMemcpy2DToArray(level, 0, 0, planes.data(), w * in / 3 * 4, w * in / 3 * 4, h, cudaMemcpyHostToDevice));
        continue;
      }
      if (!planar) {
        SIEVE_CUDA_CHECK(cudaMemcpy2DToArray(level, 0, 0, from, w * in, w * in, h, cudaMemcpyHostToDevice));
        continue;
      }
      const std::size_t cb = in / 3, texels = w * h;  // a channel's bytes; each plane: texels * cb
      planes.resize(texels * in);
      for (std::size_t i = 0; i < texels; ++i)
        for (std::size_t c = 0; c < 3; ++c) std::memcpy(planes.data() + (c * texels + i) * cb, from + i * in + c * cb, cb);
      cudaMemcpy3DParms copy{};
      copy.srcPtr = make_cudaPitchedPtr(planes.data(), w * cb, w, h);
      copy.dstArray = level;
      copy.extent = make_cudaExtent(w, h, 3);
      copy.kind = cudaMemcpyHostToDevice;
      SIEVE_CUDA_CHECK(cudaMemcpy3D(&copy));
    }
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = array_;
    cudaTextureDesc tex{};
    const cudaTextureAddressMode mode = t.wrap == wrap_mode::clamp ? cudaAddressModeClamp : cudaAddressModeWrap;
    tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = mode;
    tex.filterMode = cudaFilterModeLinear;
    tex.mipmapFilterMode = cudaFilterModeLinear;
    tex.readMode = kind == cudaChannelFormatKindFloat ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
    tex.sRGB = t.srgb ? 1 : 0;
    tex.normalizedCoords = 1;
    tex.maxAnisotropy = 1;
    tex.minMipmapLevelClamp = 0;
    tex.maxMipmapLevelClamp = static_cast<float>(t.levels - 1);
    SIEVE_CUDA_CHECK(cudaCreateTextureObject(&object_, &res, &tex, nullptr));
  }
  ~device_texture() {
    if (object_) cudaDestroyTextureObject(object_);
    if (array_) cudaFreeMipmappedArray(array_);
  }
  device_texture(device_texture&& o) noexcept : array_(o.array_), object_(o.object_) { o.array_ = nullptr, o.object_ = 0; }
  device_texture(const device_texture&) = delete;
  device_texture& operator=(const device_texture&) = delete;
  device_texture& operator=(device_texture&&) = delete;
  cudaTextureObject_t object() const { return object_; }

 private:
  cudaMipmappedArray_t array_ = nullptr;
  cudaTextureObject_t object_ = 0;
};

}  // namespace

struct device_scene::arrays {
  device_array<surface> surfaces;
  device_array<alpha_material> alpha;
  device_array<std::uint32_t> material_of;
  device_array<triangle_normals> normals;
  device_array<triangle_uvs> uvs;
  device_array<triangle_tangents> tangents;
  device_array<unsigned char> texels;  // packed: every texture's levels in one allocation, the views pointing into it
  std::vector<device_texture> texture_objects;  // hardware: one mipmapped array and texture object each
  device_array<texture_view> textures;
  device_array<std::uint32_t> light_triangles;
  device_array<alias_entry> light_alias;
  device_array<float> light_chance;
  device_array<vec3> env_texels;
  device_array<float> env_weight;
  device_array<alias_entry> env_rows, env_columns;
};

device_scene::device_scene(const prepared_scene& ps, texture_storage storage)
    : prepared_(ps), bvh_(ps.device() ? device_bvh(*ps.device()) : device_bvh(ps.tree(), ps.source().triangles)),
      arrays_(std::make_unique<arrays>()) {
  const scene& sc = ps.source();
  const scene_view host = ps.view(sc.film.width, sc.film.height);
  arrays& a = *arrays_;
  a.surfaces = device_array<surface>(std::vector<surface>(host.surfaces, host.surfaces + sc.materials.size()));
  a.material_of = device_array<std::uint32_t>(sc.material_of);
  a.alpha = device_array<alpha_material>(alpha_table(sc));
  a.normals = device_array<triangle_normals>(sc.normals);
  a.uvs = device_array<triangle_uvs>(sc.uvs);
  a.tangents = device_array<triangle_tangents>(sc.tangents);
  std::vector<texture_view> views;
  if (storage == texture_storage::packed) {
    std::size_t bytes = 0;
    for (const texture& t : sc.textures) bytes += (t.texels.size() + 15) / 16 * 16;  // each texture 16-byte aligned
    a.texels = device_array<unsigned char>(bytes);
    std::size_t at = 0;
    for (const texture& t : sc.textures) {
      texture_view v = t.view();
      v.texels = a.texels.get() + at;
      if (!t.texels.empty())
        SIEVE_CUDA_CHECK(cudaMemcpy(a.texels.get() + at, t.texels.data(), t.texels.size(), cudaMemcpyHostToDevice));
      at += (t.texels.size() + 15) / 16 * 16;
      views.push_back(v);
    }
  } else {
    a.texture_objects.reserve(sc.textures.size());
    for (const texture& t : sc.textures) {
      a.texture_objects.emplace_back(t, storage == texture_storage::rgba);
      texture_view v = t.view();
      v.texels = nullptr;
      v.object = a.texture_objects.back().object();
      if (storage == texture_storage::rgba && v.channels == 3) v.channels = 4;  // one RGBA fetch
      views.push_back(v);
    }
  }
  a.textures = device_array<texture_view>(views);
  a.light_triangles = device_array<std::uint32_t>(
      std::vector<std::uint32_t>(host.lights.triangles, host.lights.triangles + host.lights.count));
  a.light_alias = device_array<alias_entry>(
      std::vector<alias_entry>(host.lights.alias, host.lights.alias + host.lights.count));
  if (host.lights.count > 0)
    a.light_chance = device_array<float>(
        std::vector<float>(host.lights.chance_of, host.lights.chance_of + sc.triangles.size()));
  const environment_data& env = sc.environment_map;
  a.env_texels = device_array<vec3>(env.texels);
  a.env_weight = device_array<float>(env.weight);
  a.env_rows = device_array<alias_entry>(env.row_alias);
  a.env_columns = device_array<alias_entry>(env.column_alias);
}

device_scene::~device_scene() = default;

scene_view device_scene::view(std::uint32_t width, std::uint32_t height) const {
  const scene& sc = prepared_.source();
  const arrays& a = *arrays_;
  scene_view v = prepared_.view(width, height);
  // Empty without a map: the view's pointers stay null.
  v.env_map.texels = a.env_texels.get();
  v.env_map.weight = a.env_weight.get();
  v.env_map.row_alias = a.env_rows.get();
  v.env_map.column_alias = a.env_columns.get();
  const bool cutouts = v.bvh.alpha.present();  // the host view's: the device BVH's view carries none
  v.bvh = bvh_.view();
  v.surfaces = a.surfaces.get();
  v.material_of = a.material_of.get();
  v.normals = sc.normals.empty() ? nullptr : a.normals.get();
  v.uvs = sc.uvs.empty() ? nullptr : a.uvs.get();
  v.tangents = sc.tangents.empty() ? nullptr : a.tangents.get();
  v.textures = sc.textures.empty() ? nullptr : a.textures.get();
  if (cutouts) v.bvh.alpha = {v.material_of, a.alpha.get(), v.uvs, v.textures};
  v.lights.triangles = a.light_triangles.get();
  v.lights.alias = a.light_alias.get();
  v.lights.chance_of = a.light_chance.get();
  return v;
}

namespace {

std::shared_future<void>& cuda_context_ready() {
  static std::shared_future<void> ready;
  return ready;
}

}  // namespace

void start_cuda_context() {
  static std::once_flag once;
  std::call_once(once, [] {
    cuda_context_ready() = std::async(std::launch::async, [] {
      if (!sieve::cuda::available()) return;
      if (cudaFree(nullptr) != cudaSuccess) {
        cudaGetLastError();  // reported by the render's own first call
        return;
      }
      exec::staging_buffers::get().prepare();  // the uploads' pinned buffers (exec/staged_copy.cuh)
    }).share();
  });
}

std::optional<std::uint64_t> cuda_free_memory() {
  if (cuda_context_ready().valid()) cuda_context_ready().wait();
  if (!sieve::cuda::available()) return std::nullopt;
  std::size_t free = 0, total = 0;
  SIEVE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace sieve::render
