// The memory model: what a render needs, from its counts, checked against what the machine (and the
// GPU) has free before anything large is allocated, so that a scene too large gets one error naming
// both numbers instead of std::bad_alloc, or the OOM killer, halfway through.
//
// Host bytes, measured (peak resident set, `sieve render`, /usr/bin/time -v):
//   per triangle  211 between heightfields of 2.1M and 8.4M triangles (the scene's triangles and
//                 material indices, the BVH build's references, its nodes, the DFS pair layout and
//                 the leaf triangles; the build's peak); the model takes 224.
//   per path      164 in flight (two path queues, hits, shadow rays, the wave's film; films of
//                 512^2 and 1024^2 paths); the model takes 176. Paths in flight: a wave, at most
//                 render_settings::max_queue.
//   per pixel     12 measured past the wave (the film's sum); the model takes 28 (sum, mean, 8-bit image).
//   per BFS ray   140 at most (bvh/bfs.hpp's bound on the frontier), on the host or the GPU.
// GPU bytes, from the arrays render_cuda allocates (bounds, not measurements):
//   per triangle  220: triangle 36, leaf triangle 48, index 4, material 4, and a binary BVH of at
//                 most 2T - 1 nodes of 32 bytes and T pair nodes of 64 (a tree built on the host).
//                 A tree built on the device (bvh/ploc.hpp) holds at its build's peak the layouts
//                 (triangle 36, binary nodes 64, index 4, pair nodes 64, leaf triangles 48, the wide
//                 tree's 52 and the compressed tree's 48 and their nodes, about 40) and the build's
//                 scratch (boxes 96, the clustering's tree 96, its plans 88, places 16, lists 47, the
//                 sort's and compaction's workspaces about 40): ploc_device_bytes_per_triangle, 760.
//   per path      224: two path queues of 48, hit 16, shadow ray 28 + 12, wave film 12, marks 4,
//                 reorder keys 16, compaction workspace.
//   per pixel     12 (the film).
#pragma once

#include <sieve/compaction/error.hpp>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace sieve::render::memory {

inline constexpr std::uint64_t host_per_triangle = 224;
inline constexpr std::uint64_t host_per_path = 176;
inline constexpr std::uint64_t host_per_pixel = 28;
inline constexpr std::uint64_t host_base = std::uint64_t{64} << 20;  // the program, its libraries, TBB's threads
inline constexpr std::uint64_t bfs_per_ray = 140;
inline constexpr std::uint64_t gpu_per_triangle = 220;
inline constexpr std::uint64_t gpu_per_path = 224;
inline constexpr std::uint64_t gpu_per_pixel = 12;
inline constexpr std::uint64_t gpu_base = std::uint64_t{64} << 20;  // the compaction and sort workspaces' floor

// What a render holds at once.
struct counts {
  std::uint64_t triangles = 0, pixels = 0;
  std::uint64_t paths = 0;  // in flight (a wave)
  bool bfs = false;         // the BFS traversal's frontier, one per path in flight
  std::uint64_t attribute_bytes = 0;  // shading normals, texture coordinates and textures (host, and device for the GPU)
  std::uint64_t gpu_triangle_bytes = gpu_per_triangle;  // per triangle on the GPU (more when the device builds the tree)
};

inline std::uint64_t host_bytes(const counts& c) {
  return host_base + c.attribute_bytes + c.triangles * host_per_triangle + c.pixels * host_per_pixel +
         c.paths * (host_per_path + (c.bfs ? bfs_per_ray : 0));
}

inline std::uint64_t gpu_bytes(const counts& c) {
  return gpu_base + c.attribute_bytes + c.triangles * c.gpu_triangle_bytes + c.pixels * gpu_per_pixel +
         c.paths * (gpu_per_path + (c.bfs ? bfs_per_ray : 0));
}

// MemAvailable of /proc/meminfo in bytes (what can be allocated without swapping), or nothing where
// it cannot be read.
inline std::optional<std::uint64_t> host_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// "1.23 GiB", "456 MiB".
inline std::string size_text(std::uint64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  if (bytes >= (std::uint64_t{1} << 30)) {
    os << static_cast<double>(bytes) / (1 << 30) << " GiB";
  } else {
    os << static_cast<double>(bytes) / (1 << 20) << " MiB";
  }
  return os.str();
}

inline std::string describe(const counts& c) {
  std::string s = std::to_string(c.triangles) + " triangles";
  if (c.pixels) s += ", " + std::to_string(c.pixels) + " pixels";
  if (c.paths) s += ", " + std::to_string(c.paths) + " paths in flight" + (c.bfs ? " with BFS" : "");
  if (c.gpu_triangle_bytes != gpu_per_triangle)
    s += " (the tree built on the GPU: " + std::to_string(c.gpu_triangle_bytes) + " bytes of GPU memory a triangle)";
  return s;
}

// Throws sieve::error when `c` needs more host memory than `available` (MemAvailable when not
// given) or, with `gpu_free` given, more GPU memory than that. The message names what is needed
// and what is free, of both.
inline void check(const counts& c, std::optional<std::uint64_t> available, std::optional<std::uint64_t> gpu_free,
                  const std::string& what) {
  if (!available) available = host_available();
  const std::uint64_t host = host_bytes(c), gpu = gpu_bytes(c);
  const bool host_short = available && host > *available;
  const bool gpu_short = gpu_free && gpu > *gpu_free;
  if (!host_short && !gpu_short) return;
  std::string msg = what + ": " + describe(c) + " need about " + size_text(host) + " of memory (" +
                    (available ? size_text(*available) + " available" : std::string("availability unknown")) + ")";
  if (gpu_free) msg += " and " + size_text(gpu) + " of GPU memory (" + size_text(*gpu_free) + " free)";
  msg += ": too large for this machine";
  throw sieve::error(msg);
}

}  // namespace sieve::render::memory
