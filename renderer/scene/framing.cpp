// The framing of a bare OBJ or glTF (`sieve render mesh.obj`): a camera that sees its whole bounding
// box, or a glTF's own camera.
#include "sections.hpp"

#include <algorithm>
#include <cmath>

namespace sieve::render::detail {

void frame_bare_obj(const reader& rd, camera_given given, scene& sc) {
  aabb box;
  for (const auto& t : sc.triangles) box.grow(t.v0), box.grow(t.v1), box.grow(t.v2);
  const vec3 c = box.center(), half = box.extent() * 0.5f;
  const double tan_v = std::tan(sc.camera.vfov_degrees / degrees / 2);
  const double tan_h = tan_v * sc.film.width / sc.film.height;
  double d = std::max(half.y / tan_v, half.x / tan_h);  // from the box's front face (z = lo.z)
  d = std::max(d * 1.05, 1e-3 * std::max(1.0, double(max_component(box.extent()))));  // a margin; never 0
  if (!given.look_at) sc.camera.look_at = c;
  if (!given.position) sc.camera.position = {c.x, c.y, static_cast<float>(box.lo.z - d)};
  if (!finite(sc.camera.look_at) || !finite(sc.camera.position)) {
    fail(rd.file + ": the mesh's bounding box " + str(box.lo) + " .. " + str(box.hi) +
         " is too large to frame: the camera's position overflows a float (give camera.position and look_at)");
  }
}

void use_bare_camera(const camera_desc& camera, camera_given given, scene& sc) {
  if (!given.position) sc.camera.position = camera.position;
  if (!given.look_at) sc.camera.look_at = camera.look_at;
  if (!given.up) sc.camera.up = camera.up;
  if (!given.lens) sc.camera.vfov_degrees = camera.vfov_degrees;
}

}  // namespace sieve::render::detail
