// [camera]: a pinhole camera (position, look_at, up, vfov or focal_length_mm + film_height_mm).
#include "sections.hpp"

#include <cmath>

namespace sieve::render::detail {

camera_given read_camera(const toml::table& doc, const reader& rd, scene& sc) {
  camera_given given;
  if (const toml::node* n = doc.get("camera")) {
    const toml::table& t = rd.table(*n, "camera");
    rd.known_keys(t, "camera.", table_keys.at("camera"), "[camera]");
    if (const toml::node* v = t.get("position"))
      sc.camera.position = rd.vector(*v, "camera.position"), given.position = true;
    if (const toml::node* v = t.get("look_at"))
      sc.camera.look_at = rd.vector(*v, "camera.look_at"), given.look_at = true;
    if (const toml::node* v = t.get("up")) sc.camera.up = rd.vector(*v, "camera.up"), given.up = true;
    const toml::node* vfov = t.get("vfov");
    const toml::node* focal = t.get("focal_length_mm");
    const toml::node* film = t.get("film_height_mm");
    given.lens = vfov || focal || film;
    if (vfov && (focal || film)) {
      rd.fail_at(vfov, "camera.vfov", "give either vfov or focal_length_mm + film_height_mm, not both");
    }
    if (vfov) {
      const double d = rd.number(*vfov, "camera.vfov");
      if (!(d > 0 && d < 180))
        rd.fail_at(vfov, "camera.vfov", str(d) + " is out of range (0 < vfov < 180 degrees)");
      sc.camera.vfov_degrees = static_cast<float>(d);
    } else if (focal || film) {
      if (!focal || !film) {
        rd.fail_at(focal ? focal : film, focal ? "camera.focal_length_mm" : "camera.film_height_mm",
                   "focal_length_mm and film_height_mm go together");
      }
      const double f = rd.number(*focal, "camera.focal_length_mm");
      const double h = rd.number(*film, "camera.film_height_mm");
      if (!(f > 0)) rd.fail_at(focal, "camera.focal_length_mm", str(f) + " is out of range (> 0)");
      if (!(h > 0)) rd.fail_at(film, "camera.film_height_mm", str(h) + " is out of range (> 0)");
      sc.camera.vfov_degrees = static_cast<float>(2 * std::atan(h / 2 / f) * degrees);
    }
  }
  return given;
}

void check_camera(const toml::table& doc, const reader& rd, const scene& sc) {
  const vec3 dir = sc.camera.look_at - sc.camera.position;
  if (!finite(dir) || !std::isfinite(length(dir))) {
    fail(rd.where(doc.get("camera"), "camera") + ": position " + str(sc.camera.position) + " and look_at " +
         str(sc.camera.look_at) + " are too far apart: the view direction overflows a float");
  }
  if (!(length(dir) > 0)) fail(rd.where(doc.get("camera"), "camera") + ": position and look_at coincide");
  if (!(length(sc.camera.up) > 0) || !(length(cross(normalize(dir), normalize(sc.camera.up))) > 1e-6f)) {
    fail(rd.where(doc.get("camera"), "camera.up") + ": " + str(sc.camera.up) +
         " is zero or parallel to the view direction");
  }
}

}  // namespace sieve::render::detail
