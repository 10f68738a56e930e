#include "device_scene.hpp"
#include "cuda_context.hpp"
#include "waves.hpp"

#include "../bvh/device_layouts.cuh"

#include <exec/device_array.cuh>

#include <sieve/compaction/cuda.hpp>
#include <sieve/compaction/cuda_check.hpp>

#include <cuda_runtime.h>

#include <future>
#include <mutex>
#include <vector>

namespace sieve::render {

using exec::device_array;

struct device_bvh::arrays : device_layouts {};

device_bvh::device_bvh(const bvh& b, std::span<const triangle> triangles) : arrays_(new arrays) {
  arrays& a = *arrays_;
  a.nodes = device_array<bvh_node>(b.nodes), a.prims = device_array<std::uint32_t>(b.prims);
  a.pairs = device_array<pair_node>(b.pairs), a.leaf_triangles = device_array<leaf_triangle>(b.leaf_triangles);
  a.wide_nodes = device_array<wide_node>(b.wide.nodes), a.wide_prims = device_array<std::uint32_t>(b.wide.prims);
  a.wide_triangles = device_array<leaf_triangle>(b.wide.triangles);
  a.cw_nodes = device_array<cw_node>(b.cw.nodes), a.cw_triangles = device_array<cw_triangle>(b.cw.triangles);
  a.triangles = device_array<triangle>(std::vector<triangle>(triangles.begin(), triangles.end()));
  view_ = a.view(static_cast<std::uint32_t>(b.nodes.size()), static_cast<std::uint32_t>(b.wide.nodes.size()),
                 static_cast<std::uint32_t>(b.cw.nodes.size()));
}

device_bvh::device_bvh(const device_tree& tree) : view_(tree.view()) {}

device_bvh::~device_bvh() = default;

struct device_scene::arrays {
  device_array<surface> surfaces;
  device_array<alpha_material> alpha;
  device_array<std::uint32_t> material_of;
  device_array<triangle_normals> normals;
  device_array<triangle_uvs> uvs;
  device_array<triangle_tangents> tangents;
  device_array<vec3> texels;  // every texture's texels in one allocation, the views pointing into it
  device_array<texture_view> textures;
  device_array<std::uint32_t> light_triangles;
  device_array<float> light_cdf;
  device_array<vec3> env_texels;
  device_array<float> env_weight, env_conditional, env_marginal;
};

device_scene::device_scene(const prepared_scene& ps)
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
  std::size_t texels = 0;
  for (const texture& t : sc.textures) texels += t.texels.size();
  a.texels = device_array<vec3>(texels);
  std::vector<texture_view> views;
  std::size_t at = 0;
  for (const texture& t : sc.textures) {
    texture_view v = t.view();
    v.texels = a.texels.get() + at;
    if (!t.texels.empty())
      SIEVE_CUDA_CHECK(cudaMemcpy(a.texels.get() + at, t.texels.data(), t.texels.size() * sizeof(vec3), cudaMemcpyHostToDevice));
    at += t.texels.size();
    views.push_back(v);
  }
  a.textures = device_array<texture_view>(views);
  a.light_triangles = device_array<std::uint32_t>(
      std::vector<std::uint32_t>(host.lights.triangles, host.lights.triangles + host.lights.count));
  a.light_cdf = device_array<float>(std::vector<float>(host.lights.cdf, host.lights.cdf + host.lights.count));
  const environment_data& env = sc.environment_map;
  a.env_texels = device_array<vec3>(env.texels);
  a.env_weight = device_array<float>(env.weight);
  a.env_conditional = device_array<float>(env.conditional_cdf);
  a.env_marginal = device_array<float>(env.marginal_cdf);
}

device_scene::~device_scene() = default;

scene_view device_scene::view(std::uint32_t width, std::uint32_t height) const {
  const scene& sc = prepared_.source();
  const arrays& a = *arrays_;
  scene_view v = prepared_.view(width, height);
  // Empty without a map: the view's pointers stay null.
  v.env_map.texels = a.env_texels.get();
  v.env_map.weight = a.env_weight.get();
  v.env_map.conditional_cdf = a.env_conditional.get();
  v.env_map.marginal_cdf = a.env_marginal.get();
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
  v.lights.cdf = a.light_cdf.get();
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
      if (cudaFree(nullptr) != cudaSuccess) cudaGetLastError();  // reported by the render's own first call
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
