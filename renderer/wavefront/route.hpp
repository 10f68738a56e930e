// Stage `route` (render_settings::routing): which material family each live path's hit belongs to,
// and where each family's queue entries lie, so that shade runs one kernel per family over its own
// entries (shade_path<F>: the one per-path function, its BSDF dispatch pruned to F's kinds).
//   branch      no routing: one kernel, shade_path<any>, branches per path (shade.hpp's shade);
//   multisplit  the library's stable multisplit of the entry numbers 0 .. live - 1 by a byte key
//               (the family), device counts: the entries grouped by family, and the bounds;
//   queues      extend appends each entry to its family's queue as it finds the hit (pbrt-v4's
//               way: no routing pass; warp-aggregated atomics, order within a queue unspecified);
//   sort        the radix sort of (family << material bits | material, entry) pairs (Cycles' way:
//               within a family the entries of one material sit together), the bounds from the
//               sorted keys.
// Only the order in which paths are shaded changes: a path's queue entry, its marks, its scratch
// and its film slot stay where they were, so the image is the same bit for bit in every mode.
#pragma once

#include <exec/exec.hpp>

#include "../core/atomic.hpp"
#include "../path/shade.hpp"

#include <bit>
#include <cstdint>

namespace sieve::render {

// The family of a hit: miss where the ray found nothing.
SIEVE_HD inline material_family family_at(const scene_view& s, const hit& h) {
  return h.found() ? family_of(s.surfaces[s.material_of[h.prim]].kind) : material_family::miss;
}

// Where each family's entries are: family f's are entries[begin(f) .. end(f)). Grouped (multisplit,
// sort): one list and material_families + 1 bounds; per-family queues: list f at entries + f * stride,
// counts[f] long.
struct family_lists {
  const std::uint32_t* entries = nullptr;
  const std::uint64_t* bounds = nullptr;  // grouped
  const std::uint64_t* counts = nullptr;  // per-family queues
  std::uint32_t stride = 0;

  SIEVE_HD std::uint64_t begin(std::uint32_t f) const { return bounds ? bounds[f] : std::uint64_t{f} * stride; }
  SIEVE_HD std::uint64_t end(std::uint32_t f) const {
    return bounds ? bounds[f + 1] : std::uint64_t{f} * stride + counts[f];
  }
};

// The per-family queues extend appends to (queues routing): counts zeroed before each extend.
struct family_queues {
  std::uint32_t* entries = nullptr;  // material_families x stride
  std::uint64_t* counts = nullptr;   // material_families (appended to through their low words)
  std::uint32_t stride = 0;
  const surface* surfaces = nullptr;
  const std::uint32_t* material_of = nullptr;

  SIEVE_HD explicit operator bool() const { return entries != nullptr; }  // also asked in kernels (extend)
  // Appends queue entry i, whose hit is h, to its family's queue. Lanes of a warp that arrive together
  // with the same family take their slots with one atomic.
  SIEVE_HD void append(std::uint32_t i, const hit& h) const {
    const auto f = static_cast<std::uint32_t>(
        h.found() ? family_of(surfaces[material_of[h.prim]].kind) : material_family::miss);
    for (std::uint32_t g = 0; g < material_families; ++g)  // one coalesced group per family
      if (f == g) append_aggregated(entries + std::size_t{g} * stride, low_word(counts + g), i);
  }
  family_lists lists() const { return {entries, nullptr, counts, stride}; }
};

// The key bits of the sort routing: the family above the material's number.
constexpr int material_bits(std::uint32_t materials) { return std::bit_width(materials > 1 ? materials - 1 : 0U); }
constexpr int route_sort_bits(std::uint32_t materials) { return material_bits(materials) + 3; }
static_assert(material_families <= 7, "the sort routing's key keeps 3 bits for the family, 7 for padding");

// multisplit's input, made once: the entry numbers 0, 1, 2, ...
template <class Exec>
void route_iota(Exec e, std::uint32_t capacity, std::uint32_t* entries) {
  exec::parallel_for(e, "route.iota", capacity, [=] SIEVE_HD(std::uint32_t i) { entries[i] = i; });
}

// multisplit: keys[i] = the family of entry i's hit, for the live entries.
template <class Exec>
void route_family_keys(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const hit* hits,
                       std::uint8_t* keys) {
  exec::parallel_for(e, "route.keys", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) keys[i] = static_cast<std::uint8_t>(family_at(s, hits[i]));
  });
}

// sort: (key, entry) pairs for the first `capacity` entries; past the live count the largest key of
// `bits`, so that they sort last (as reorder_keys does).
template <class Exec>
void route_sort_keys(Exec e, std::uint32_t capacity, const std::uint32_t* live, const scene_view& s, const hit* hits,
                     int mbits, std::uint32_t* keys, std::uint32_t* entries) {
  const std::uint32_t last = (1U << (mbits + 3)) - 1;
  exec::parallel_for(e, "route.keys", capacity, [=] SIEVE_HD(std::uint32_t i) {
    const hit h = hits[i];
    keys[i] = i >= *live ? last
              : h.found() ? static_cast<std::uint32_t>(family_at(s, h)) << mbits | s.material_of[h.prim]
                          : static_cast<std::uint32_t>(material_family::miss) << mbits;
    entries[i] = i;
  });
}

// sort: bounds[f] = the first sorted entry of family f or later (bounds[families] = *live), from the
// sorted keys: each bound written once, by the entry where the family changes.
template <class Exec>
void route_bounds(Exec e, std::uint32_t capacity, const std::uint32_t* live, const std::uint32_t* sorted_keys, int mbits,
                  std::uint64_t* bounds) {
  exec::parallel_for(e, "route.bounds", capacity + 1, [=] SIEVE_HD(std::uint32_t i) {
    const std::uint32_t n = *live;
    if (i > n) return;
    const auto family = [&](std::uint32_t k) { return (k >> mbits) < material_families ? (k >> mbits) : material_families; };
    const std::uint32_t here = i < n ? family(sorted_keys[i]) : material_families;
    const std::uint32_t first = i > 0 ? family(sorted_keys[i - 1]) + 1 : 0;
    for (std::uint32_t f = first; f <= here; ++f) bounds[f] = i;
  });
}

// After extend (BFS traversal, which has no per-ray epilogue): every live entry to its family's queue.
template <class Exec>
void route_append(Exec e, std::uint32_t capacity, const std::uint32_t* live, const hit* hits, const family_queues& q) {
  exec::parallel_for(e, "route.append", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) q.append(i, hits[i]);
  });
}

// The loops' names: one per family, so the loop table shows each family's kernel.
inline constexpr const char* shade_family_names[material_families] = {"shade.miss", "shade.diffuse", "shade.conductor",
                                                                      "shade.dielectric", "shade.pbr"};

// Family F's kernel over `width` threads (its entry count on the host; when the counts stay on the
// device, as many threads as the GPU holds at once, so that a family with few or no paths costs one
// short launch, not one over the queue's capacity): thread t shades entries begin + t, begin + t +
// width, ... With `next`, the survivors are appended there (shade_append's producer-side append);
// the rounds are the same for every lane, as the append wants.
template <material_family F, class Exec>
void shade_family(Exec e, std::uint32_t width, const family_lists& lists, const shade_args& a, const wave* w,
                  const path_columns* next, std::uint32_t* next_count) {
  constexpr auto f = static_cast<std::uint32_t>(F);
  if (!next)
    return exec::parallel_for(e, shade_family_names[f], width, [=] SIEVE_HD(std::uint32_t t) {
      const std::uint64_t first = lists.begin(f), last = lists.end(f);
      for (std::uint64_t k = first + t; k < last; k += width) shade_path<F>(lists.entries[k], a, *w);
    });
  const path_columns to = *next;
  exec::parallel_for(e, shade_family_names[f], width, [=] SIEVE_HD(std::uint32_t t) {
    const std::uint64_t first = lists.begin(f), last = lists.end(f);
    for (std::uint64_t round = first; round < last; round += width) {
      const std::uint64_t k = round + t;
      const bool in = k < last;
      const std::uint32_t i = in ? lists.entries[k] : 0;
      const bool keep = in && shade_path<F>(i, a, *w);
      const std::uint32_t slot = append_slot(next_count, keep);  // every lane of the warp calls it
      if (keep) to.copy_from(slot, a.paths, a.scratch.path(i));
    }
  });
}

// Every family's kernel, in family order; width(f): the threads family f launches over.
template <class Exec, class Width>
void shade_families(Exec e, const Width& width, const family_lists& lists, const shade_args& a, const wave* w,
                    const path_columns* next, std::uint32_t* next_count) {
  shade_family<material_family::miss>(e, width(0), lists, a, w, next, next_count);
  shade_family<material_family::diffuse>(e, width(1), lists, a, w, next, next_count);
  shade_family<material_family::conductor>(e, width(2), lists, a, w, next, next_count);
  shade_family<material_family::dielectric>(e, width(3), lists, a, w, next, next_count);
  shade_family<material_family::pbr>(e, width(4), lists, a, w, next, next_count);
}

}  // namespace sieve::render
