// glTF's accessors, checked against their view and buffer before a byte is read, and the node
// transforms (gltf_model.hpp).
#include "gltf_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace sieve::render::gltf_detail {

const char* type_name(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return "SCALAR";
    case TINYGLTF_TYPE_VEC2: return "VEC2";
    case TINYGLTF_TYPE_VEC3: return "VEC3";
    case TINYGLTF_TYPE_VEC4: return "VEC4";
    case TINYGLTF_TYPE_MAT2: return "MAT2";
    case TINYGLTF_TYPE_MAT3: return "MAT3";
    case TINYGLTF_TYPE_MAT4: return "MAT4";
    default: return "an unknown type";
  }
}

const char* component_name(int c) {
  switch (c) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: return "BYTE";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return "UNSIGNED_BYTE";
    case TINYGLTF_COMPONENT_TYPE_SHORT: return "SHORT";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return "UNSIGNED_SHORT";
    case TINYGLTF_COMPONENT_TYPE_INT: return "INT";
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: return "UNSIGNED_INT";
    case TINYGLTF_COMPONENT_TYPE_FLOAT: return "FLOAT";
    case TINYGLTF_COMPONENT_TYPE_DOUBLE: return "DOUBLE";
    default: return "an unknown component type";
  }
}

std::uint32_t index_at(const elements& e, std::size_t i) {
  const unsigned char* p = e.data + i * e.stride;
  switch (e.component_type) {
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return *p;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

// Component c of element i as a float: FLOAT as stored; an integer as its value, or normalised as
// glTF defines (unsigned: c / max; signed: max(c / max, -1)).
float component_at(const elements& e, std::size_t i, int c) {
  const unsigned char* p = e.data + i * e.stride;
  switch (e.component_type) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: {
      const auto v = static_cast<std::int8_t>(p[c]);
      return e.normalized ? std::max(v / 127.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return e.normalized ? p[c] / 255.0f : p[c];
    case TINYGLTF_COMPONENT_TYPE_SHORT: {
      std::int16_t v;
      std::memcpy(&v, p + 2 * c, 2);
      return e.normalized ? std::max(v / 32767.0f, -1.0f) : v;
    }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: {
      std::uint16_t v;
      std::memcpy(&v, p + 2 * c, 2);
      return e.normalized ? v / 65535.0f : v;
    }
    default: {
      float v;
      std::memcpy(&v, p + 4 * c, 4);
      return v;
    }
  }
}

vec3 vec3_at(const elements& e, std::size_t i) {
  if (e.component_type == TINYGLTF_COMPONENT_TYPE_FLOAT) {
    float v[3];
    std::memcpy(v, e.data + i * e.stride, sizeof v);
    return {v[0], v[1], v[2]};
  }
  return {component_at(e, i, 0), component_at(e, i, 1), component_at(e, i, 2)};
}

// TEXCOORD_0 as glTF stores it (FLOAT, normalized UNSIGNED_BYTE / UNSIGNED_SHORT, or with
// KHR_mesh_quantization any integer, normalised or not), v down.
tex_coord uv_at(const elements& e, std::size_t i) { return {component_at(e, i, 0), component_at(e, i, 1)}; }

// TANGENT: xyz and the handedness w.
std::array<float, 4> tangent_at(const elements& e, std::size_t i) {
  return {component_at(e, i, 0), component_at(e, i, 1), component_at(e, i, 2), component_at(e, i, 3)};
}

// ------------------------------------------------------------------------------------------------
// Node transforms (column-major 4x4, as glTF stores them), in double.


mat4 mul(const mat4& a, const mat4& b) {
  mat4 r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = s;
    }
  return r;
}

mat4 local_transform(const tinygltf::Node& n, const model_reader& rd, const std::string& where) {
  auto check = [&](const std::vector<double>& v, std::size_t size, const char* key) {
    if (!v.empty() && v.size() != size) {
      rd.error(where, std::string(key) + " has " + std::to_string(v.size()) + " numbers, expected " +
                          std::to_string(size));
    }
    for (const double d : v)
      if (!std::isfinite(d)) rd.error(where, std::string(key) + " holds the non-finite number " + str(d));
  };
  check(n.matrix, 16, "matrix");
  check(n.translation, 3, "translation");
  check(n.rotation, 4, "rotation");
  check(n.scale, 3, "scale");
  if (!n.matrix.empty()) {
    mat4 m;
    std::copy(n.matrix.begin(), n.matrix.end(), m.begin());
    return m;
  }
  mat4 m = identity;
  if (!n.rotation.empty()) {  // a unit quaternion (x, y, z, w); normalised here
    double x = n.rotation[0], y = n.rotation[1], z = n.rotation[2], w = n.rotation[3];
    const double len = std::sqrt(x * x + y * y + z * z + w * w);
    if (!(len > 0) || !std::isfinite(len)) rd.error(where, "rotation is not a quaternion of non-zero length");
    x /= len, y /= len, z /= len, w /= len;
    m = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),     0,
         2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),     0,
         2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y), 0,
         0,                       0,                       0,                       1};
  }
  if (!n.scale.empty()) {
    for (int c = 0; c < 3; ++c)
      for (int row = 0; row < 3; ++row) m[c * 4 + row] *= n.scale[c];
  }
  if (!n.translation.empty()) {
    m[12] = n.translation[0], m[13] = n.translation[1], m[14] = n.translation[2];
  }
  return m;
}

vec3 apply_point(const mat4& m, vec3 p) {
  if (m == identity) return p;  // bit for bit what the file holds
  const double x = p.x, y = p.y, z = p.z;
  return {static_cast<float>(m[0] * x + m[4] * y + m[8] * z + m[12]),
          static_cast<float>(m[1] * x + m[5] * y + m[9] * z + m[13]),
          static_cast<float>(m[2] * x + m[6] * y + m[10] * z + m[14])};
}


normal_transform normal_transform_of(const mat4& m) {
  normal_transform n;
  if (m == identity) return n;
  n.identity = false;
  auto a = [&](int r, int c) { return m[c * 4 + r]; };
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      n.cof[c * 3 + r] = a(r1, c1) * a(r2, c2) - a(r1, c2) * a(r2, c1);
    }
  n.det = a(0, 0) * n.cof[0] + a(0, 1) * n.cof[3] + a(0, 2) * n.cof[6];
  return n;
}

// The normal in world space, unit length; zero where it is zero, degenerate or not finite (flat).
vec3 apply_normal(const normal_transform& t, vec3 n) {
  double x = n.x, y = n.y, z = n.z;
  if (!t.identity) {
    const double s = t.det < 0 ? -1 : 1;
    const double nx = s * (t.cof[0] * x + t.cof[3] * y + t.cof[6] * z);
    const double ny = s * (t.cof[1] * x + t.cof[4] * y + t.cof[7] * z);
    const double nz = s * (t.cof[2] * x + t.cof[5] * y + t.cof[8] * z);
    x = nx, y = ny, z = nz;
  }
  const double len = std::sqrt(x * x + y * y + z * z);
  if (!(len > 0) || !std::isfinite(len)) return {0, 0, 0};
  const vec3 out{static_cast<float>(x / len), static_cast<float>(y / len), static_cast<float>(z / len)};
  return finite(out) ? out : vec3{0, 0, 0};
}

vec3 apply_direction(const mat4& m, double x, double y, double z) {
  return {static_cast<float>(m[0] * x + m[4] * y + m[8] * z), static_cast<float>(m[1] * x + m[5] * y + m[9] * z),
          static_cast<float>(m[2] * x + m[6] * y + m[10] * z)};
}

}  // namespace sieve::render::gltf_detail
