#include "embree.hpp"

#include <sieve/compaction/error.hpp>

#if SIEVE_EMBREE
#include <embree3/rtcore.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#endif

#include <chrono>
#include <string>

namespace sieve::bench {

#if SIEVE_EMBREE

bool embree_available() { return true; }

struct embree_scene::impl {
  RTCDevice device = nullptr;
  RTCScene scene = nullptr;
  ~impl() {
    if (scene) rtcReleaseScene(scene);
    if (device) rtcReleaseDevice(device);
  }
};

namespace {
void check(RTCDevice d, const char* what) {
  const RTCError e = rtcGetDeviceError(d);
  if (e != RTC_ERROR_NONE) throw sieve::error(std::string("Embree: ") + what + " failed (error " + std::to_string(e) + ")");
}
}  // namespace

embree_scene::embree_scene(std::span<const render::triangle> triangles) : impl_(std::make_unique<impl>()) {
  const auto t0 = std::chrono::steady_clock::now();
  impl_->device = rtcNewDevice(nullptr);
  if (!impl_->device) throw sieve::error("Embree: rtcNewDevice failed");
  impl_->scene = rtcNewScene(impl_->device);
  RTCGeometry g = rtcNewGeometry(impl_->device, RTC_GEOMETRY_TYPE_TRIANGLE);
  auto* v = static_cast<float*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                        3 * sizeof(float), 3 * triangles.size()));
  auto* idx = static_cast<unsigned*>(rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                             3 * sizeof(unsigned), triangles.size()));
  check(impl_->device, "allocating the buffers");
  for (std::size_t i = 0; i < triangles.size(); ++i) {
    const render::vec3 p[3] = {triangles[i].v0, triangles[i].v1, triangles[i].v2};
    for (std::size_t k = 0; k < 3; ++k) {
      v[9 * i + 3 * k] = p[k].x, v[9 * i + 3 * k + 1] = p[k].y, v[9 * i + 3 * k + 2] = p[k].z;
      idx[3 * i + k] = static_cast<unsigned>(3 * i + k);
    }
  }
  rtcCommitGeometry(g);
  rtcAttachGeometry(impl_->scene, g);
  rtcReleaseGeometry(g);
  rtcCommitScene(impl_->scene);
  check(impl_->device, "building the scene");
  build_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

embree_scene::~embree_scene() = default;

namespace {

// Embree's ray for r: (0, tmax], every mask bit.
RTCRay embree_ray(const render::ray& r) {
  RTCRay ray{};
  ray.org_x = r.origin.x, ray.org_y = r.origin.y, ray.org_z = r.origin.z;
  ray.dir_x = r.direction.x, ray.dir_y = r.direction.y, ray.dir_z = r.direction.z;
  ray.tnear = 0, ray.tfar = r.tmax, ray.mask = ~0U, ray.flags = 0;
  return ray;
}

// f(context, i) for every ray, on oneTBB, with one intersection context per range.
template <class F>
void for_each_ray(std::size_t n, F&& f) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 256), [&](const auto& range) {
    RTCIntersectContext context;
    rtcInitIntersectContext(&context);
    for (std::size_t i = range.begin(); i != range.end(); ++i) f(context, i);
  });
}

}  // namespace

void embree_scene::closest(std::span<const render::ray> rays, std::span<float> t, std::span<std::uint32_t> prim) const {
  RTCScene scene = impl_->scene;
  for_each_ray(rays.size(), [&](RTCIntersectContext& context, std::size_t i) {
    RTCRayHit rh{};
    rh.ray = embree_ray(rays[i]);
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene, &context, &rh);
    const bool found = rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
    t[i] = found ? rh.ray.tfar : 1e30f;
    prim[i] = found ? rh.hit.primID : ~0U;
  });
}

void embree_scene::occluded(std::span<const render::ray> rays, std::span<std::uint8_t> blocked) const {
  RTCScene scene = impl_->scene;
  for_each_ray(rays.size(), [&](RTCIntersectContext& context, std::size_t i) {
    RTCRay ray = embree_ray(rays[i]);
    rtcOccluded1(scene, &context, &ray);
    blocked[i] = ray.tfar < 0;  // Embree sets tfar to -inf when something blocks the ray
  });
}

#else

bool embree_available() { return false; }
struct embree_scene::impl {};
embree_scene::embree_scene(std::span<const render::triangle>) {
  throw sieve::error("this build has no Embree (libembree-dev was not found when it was configured)");
}
embree_scene::~embree_scene() = default;
void embree_scene::closest(std::span<const render::ray>, std::span<float>, std::span<std::uint32_t>) const {}
void embree_scene::occluded(std::span<const render::ray>, std::span<std::uint8_t>) const {}

#endif

}  // namespace sieve::bench
