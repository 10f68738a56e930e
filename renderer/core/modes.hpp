// The renderer's modes as enums, each with its one name table. A name is parsed once, where it comes
// in (the scene file, the command line, a benchmark's options): parse_mode<E>() throws sieve::error
// naming the valid names, find_mode<E>() returns nothing for the loader to report at its line. Inside,
// only the enums travel; to_string() gives a mode's name for reports.
#pragma once

#include <sieve/compaction/error.hpp>
#include <sieve/compaction/names.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sieve::render {

// How a bounce is run: queues of paths compacted between stages, or one thread per path.
enum class integrator_kind : std::uint8_t { wavefront, megakernel };
// How extension rays find their hits: depth-first per ray, or breadth-first over a compacted frontier.
enum class traversal_kind : std::uint8_t { dfs, bfs };
// The tree a traversal walks (renderer/bvh/ keeps each layout): the binary tree (its 64-byte pair
// nodes depth-first, its 32-byte nodes breadth-first), the 8-wide tree, or the 8-wide tree's
// compressed layout (the GPU's).
enum class trace_tree : std::uint8_t { binary, wide, compressed };
// How the GPU's threads take rays in a depth-first traversal: one ray a thread to its end, or a
// walk by persistent warps that hand an idle lane the next ray (exec::parallel_walk). The CPU traces
// a ray to its end whatever this says.
enum class trace_schedule : std::uint8_t { thread, walk };
// The CPU's box tests over the 8-wide tree (trace/wide_cpu.cpp): AVX2 where the processor has it
// (automatic), or one path asked for (throws sieve::error on a processor without it).
enum class wide_path : std::uint8_t { automatic, avx2, avx512, portable };

// One traversal, typed: the order, the tree, the schedule (and, on the CPU's 8-wide tree, its box
// tests). Parsed once from its name (mode_names<traversal> below); trace/tracers.hpp maps it to
// the code that runs it.
struct traversal {
  traversal_kind order = traversal_kind::dfs;
  trace_tree tree = trace_tree::binary;
  trace_schedule schedule = trace_schedule::thread;
  wide_path boxes = wide_path::automatic;
  constexpr bool operator==(const traversal&) const = default;
  constexpr bool breadth_first() const { return order == traversal_kind::bfs; }
};

// The traversal of each kind of ray a render traces: camera rays (extend, first vertex), bounce
// rays (extend, later vertices; the megakernel) and shadow rays (connect, any hit).
struct ray_traversals {
  traversal camera, bounce, shadow;
};

// Which tree the GPU's depth-first traversals walk (trace/tracers.hpp: gpu_traversals_for): per ray kind, whichever
// measured faster (automatic); the binary pair nodes; or the compressed 8-wide tree, by persistent
// warps (cwbvh) or one ray a thread (cwbvh_thread). The CPU walks its 8-wide tree whatever this says.
enum class bvh_layout : std::uint8_t { automatic, binary, cwbvh, cwbvh_thread };
// Who builds the tree: automatic (ploc when the GPU renders, sah on the CPU), the binned SAH builder on
// the CPU (the quality reference), the linear BVH (its binary tree on the GPU when the GPU renders,
// the rest on the host) or PLOC (bvh/ploc.hpp: on the GPU, every layout there, when the GPU renders;
// its CPU run otherwise).
enum class bvh_builder : std::uint8_t { automatic, sah, lbvh, ploc };
// How the path queue shrinks (wavefront/driver.hpp): the strategy compacts the path state (pass) or
// 4-byte path indices with the state in place (index), or shade appends the survivors (append).
enum class queue_mode : std::uint8_t { pass, index, append };
// The GPU radix sort that reorders rays: sieve's onesweep or CUB's (the CPU has one).
enum class sort_kind : std::uint8_t { onesweep, cub };
// The key rays are sorted by between bounces (wavefront/reorder.hpp); none: no reordering.
enum class reorder_key : std::uint8_t { none, morton, octant, termination };

// How a bounce's shading reaches the material families (wavefront/route.hpp): one kernel that
// branches per path (branch); a multisplit of the queue's entries by family, then one kernel per
// family (multisplit); per-family queues appended by the extend stage (queues); a radix sort of the
// entries by (family, material) (sort); or the megakernel, one thread per path and no queue.
enum class routing_kind : std::uint8_t { branch, multisplit, queues, sort, megakernel };

// How the GPU reads textures (core/texture.hpp): texture objects over mipmapped arrays, filtered by
// the texture unit (hardware: RGB as three one-channel layers, in the bytes it is stored in; rgba:
// RGB widened to RGBA, a third more, one fetch), or the stored texels packed in one buffer and
// filtered by the code the CPU runs (packed). The CPU always reads them packed.
enum class texture_storage : std::uint8_t { hardware, packed, rgba };

// Per mode: what it is called in messages, and its names.
template <class E>
struct mode_names;
template <>
struct mode_names<integrator_kind> {
  static constexpr std::string_view what = "integrator", plural = "integrators";
  static constexpr std::array<std::pair<integrator_kind, std::string_view>, 2> table{
      {{integrator_kind::wavefront, "wavefront"}, {integrator_kind::megakernel, "megakernel"}}};
};
template <>
struct mode_names<traversal_kind> {
  static constexpr std::string_view what = "traversal", plural = "traversals";
  static constexpr std::array<std::pair<traversal_kind, std::string_view>, 2> table{
      {{traversal_kind::dfs, "dfs"}, {traversal_kind::bfs, "bfs"}}};
};
// The traversals by name (`sieve bench trace --traversal`): dfs (the binary tree; on the GPU its
// closest hits by persistent warps), wide (the 8-wide tree, a ray a thread; wide-avx512: AVX-512 box
// tests on the CPU), cwbvh (the compressed layout by persistent warps; cwbvh-thread: a ray a thread),
// and the BFS over each tree (bfs, wide-bfs, cw-bfs).
template <>
struct mode_names<traversal> {
  static constexpr std::string_view what = "traversal", plural = "traversals";
  static constexpr std::array<std::pair<traversal, std::string_view>, 8> table{{
      {{traversal_kind::dfs, trace_tree::binary, trace_schedule::walk}, "dfs"},
      {{traversal_kind::dfs, trace_tree::wide, trace_schedule::thread}, "wide"},
      {{traversal_kind::dfs, trace_tree::wide, trace_schedule::thread, wide_path::avx512}, "wide-avx512"},
      {{traversal_kind::dfs, trace_tree::compressed, trace_schedule::walk}, "cwbvh"},
      {{traversal_kind::dfs, trace_tree::compressed, trace_schedule::thread}, "cwbvh-thread"},
      {{traversal_kind::bfs, trace_tree::binary}, "bfs"},
      {{traversal_kind::bfs, trace_tree::wide}, "wide-bfs"},
      {{traversal_kind::bfs, trace_tree::compressed}, "cw-bfs"},
  }};
};
template <>
struct mode_names<bvh_layout> {
  static constexpr std::string_view what = "BVH layout", plural = "layouts";
  static constexpr std::array<std::pair<bvh_layout, std::string_view>, 4> table{{{bvh_layout::automatic, "auto"},
                                                                                 {bvh_layout::binary, "binary"},
                                                                                 {bvh_layout::cwbvh, "cwbvh"},
                                                                                 {bvh_layout::cwbvh_thread, "cwbvh-thread"}}};
};
template <>
struct mode_names<bvh_builder> {
  static constexpr std::string_view what = "BVH builder", plural = "builders";
  static constexpr std::array<std::pair<bvh_builder, std::string_view>, 4> table{
      {{bvh_builder::automatic, "auto"}, {bvh_builder::sah, "sah"}, {bvh_builder::lbvh, "lbvh"}, {bvh_builder::ploc, "ploc"}}};
};
template <>
struct mode_names<queue_mode> {
  static constexpr std::string_view what = "queue", plural = "queues";
  static constexpr std::array<std::pair<queue_mode, std::string_view>, 3> table{
      {{queue_mode::pass, "pass"}, {queue_mode::index, "index"}, {queue_mode::append, "append"}}};
};
template <>
struct mode_names<sort_kind> {
  static constexpr std::string_view what = "radix sort", plural = "sorts";
  static constexpr std::array<std::pair<sort_kind, std::string_view>, 2> table{
      {{sort_kind::onesweep, "onesweep"}, {sort_kind::cub, "cub"}}};
};
template <>
struct mode_names<reorder_key> {
  static constexpr std::string_view what = "reorder key", plural = "keys";
  static constexpr std::array<std::pair<reorder_key, std::string_view>, 4> table{
      {{reorder_key::none, "none"},
       {reorder_key::morton, "morton"},
       {reorder_key::octant, "octant"},
       {reorder_key::termination, "termination"}}};
};

template <>
struct mode_names<routing_kind> {
  static constexpr std::string_view what = "routing", plural = "routings";
  static constexpr std::array<std::pair<routing_kind, std::string_view>, 5> table{
      {{routing_kind::branch, "branch"},
       {routing_kind::multisplit, "multisplit"},
       {routing_kind::queues, "queues"},
       {routing_kind::sort, "sort"},
       {routing_kind::megakernel, "megakernel"}}};
};

template <>
struct mode_names<texture_storage> {
  static constexpr std::string_view what = "texture storage", plural = "texture storages";
  static constexpr std::array<std::pair<texture_storage, std::string_view>, 3> table{
      {{texture_storage::hardware, "hardware"}, {texture_storage::packed, "packed"}, {texture_storage::rgba, "rgba"}}};
};

template <class E>
concept mode = requires { mode_names<E>::table; };

template <mode E>
constexpr std::string_view to_string(E e) {
  for (const auto& [k, name] : mode_names<E>::table)
    if (k == e) return name;
  return "?";
}

template <mode E>
constexpr std::optional<E> find_mode(std::string_view name) {
  for (const auto& [k, n] : mode_names<E>::table)
    if (n == name) return k;
  return std::nullopt;
}

// Every name of E, in table order (for a command line's list of allowed values).
template <mode E>
std::vector<std::string> mode_name_list() {
  std::vector<std::string> out;
  for (const auto& [k, n] : mode_names<E>::table) out.emplace_back(n);
  return out;
}

// "a, b, c": the names of E for a message.
template <mode E>
std::string mode_names_joined() {
  std::string out;
  for (const auto& [k, n] : mode_names<E>::table) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// The mode called `name`; throws sieve::error "unknown <what> '<name>'; <plural>: <names>".
template <mode E>
E parse_mode(std::string_view name) {
  if (const auto e = find_mode<E>(name)) return *e;
  std::vector<std::string_view> names;
  for (const auto& [k, n] : mode_names<E>::table) names.push_back(n);
  throw sieve::error("unknown " + std::string(mode_names<E>::what) + " '" + std::string(name) + "'" +
                     sieve::did_you_mean(name, names) + "; " + std::string(mode_names<E>::plural) + ": " +
                     mode_names_joined<E>());
}

}  // namespace sieve::render
