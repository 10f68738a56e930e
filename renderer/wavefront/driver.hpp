// The wavefront's bounce loop, written once for the CPU and the GPU: a template over a backend
// policy (run/render_cpu.cpp's cpu_backend, run/render_cuda.cu's cuda_backend) that provides
//
//   exec()                        the exec:: tag the stages launch through (exec::cpu, exec::cuda),
//                                 carrying the loop clock when profiling (exec/loop_clock.hpp)
//   array<T>                      owned memory of the backend (host vector, device array), .get()
//   zero(p, bytes)                clear memory, in stream order on the GPU
//   read(count)                   a count's value on the host (a synchronisation on the GPU)
//   compact(...)                  the library's compaction of the path queue, counts by pointer
//   sort(keys, values, n, bits)   the radix sort of (key, path index) pairs; returns the sorted keys
//                                 and indices
//   multisplit(keys, in, out, n, live, buckets, bounds)   the library's stable multisplit of n u32
//                                 items (*live of them live) by byte keys, bounds on the backend
//   resident_threads()            the threads the device runs at once (a family's kernel launches
//                                 over them when its count stays on the device)
//   extend_bfs(..., n, live)      the BFS traversal (trace/bfs*) of *live rays, n of them launched for
//                                 (n: the queue's capacity, so that the count stays on the device)
//   time(name, bounce, f)         run (enqueue) f as stage `name`, timed when profiling
//
// The path queue (path_queue) owns the path columns (double-buffered), the marks in the form the
// strategy takes, and the in-place / out-of-place choice: the stages only mark, the driver only says
// "compact". Counts (the live paths entering each bounce, shade's removals and shadow rays) live in
// the backend's memory (wave_counts) and the stages read them there: in host-count mode (the CPU;
// the GPU's synchronous path) the driver reads the live count each bounce, launches over it, stops
// when it is zero and looks for a cancel; otherwise (a GPU wave captured once as a CUDA graph)
// nothing is read back: every stage launches over the queue's capacity, its threads past the live
// count exit, and the wave's parameters come from device memory, so one graph serves every wave.
#pragma once

#include <exec/exec.hpp>

#include "accumulate.hpp"
#include "extend.hpp"
#include "../frame/settings.hpp"
#include "../frame/stats.hpp"
#include "../frame/waves.hpp"
#include "reorder.hpp"
#include "route.hpp"

#include "../path/connect.hpp"
#include "../path/generate.hpp"
#include "../path/shade.hpp"

#include "../core/marks.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace sieve::render {

// A wave's counters, laid out in one array of 64-bit words of the backend's memory:
// live(v) for v in [0, max_bounces] are the paths entering bounce v (live(0) the wave's size,
// live(v + 1) what the compaction after bounce v kept), then shade's removal count, then shadow(v)
// for v in [0, max_bounces]: the shadow queue's length at bounce v.
struct wave_counts {
  std::uint64_t* words = nullptr;
  std::uint32_t max_bounces = 0;

  SIEVE_HD static constexpr std::size_t size(std::uint32_t max_bounces) { return 2 * std::size_t{max_bounces} + 3; }
  std::uint64_t* live(std::uint32_t v) const { return words + v; }
  std::uint64_t* removals() const { return words + max_bounces + 1; }
  std::uint64_t* shadow(std::uint32_t v) const { return words + max_bounces + 2 + v; }
};

// How the queue of live paths shrinks between bounces (render_settings::queue):
//   pass    the strategy compacts the path state (48 bytes a path) after shade, a separate pass;
//   index   the strategy compacts 4-byte path indices, the state stays where generate put it and
//           the stages read it through the indices (gathered on use);
//   append  shade writes each surviving path straight to the next queue (producer-side append,
//           warp-aggregated on the GPU): no pass, no marks.
// (queue_mode: core/modes.hpp)

// The live paths of a wave and their marks. Stages write the columns of paths() (through index()
// for an index queue) and mark through marks(); compact() keeps the marked ones (in place, or into
// the other buffer, which it then swaps in); reordered() and appended() swap in the buffer a
// gather or shade_append filled.
template <class Backend>
class path_queue {
 public:
  // `strategy`: looked up once here, passed down to every compaction.
  path_queue(Backend& b, std::uint32_t capacity, const sieve::strategy& strategy, sieve::form form, queue_mode mode)
      : b_(b), capacity_(capacity), strategy_(strategy), form_(form), mode_(mode),
        in_place_(!strategy_.info().out_of_place),  // copy where offered: no extra pass
        flags_(mode != queue_mode::append && form == sieve::form::byte_flags ? capacity : 0),
        mask_(mode != queue_mode::append && form == sieve::form::bit_mask ? (capacity + 31) / 32 : 0),
        removals_(mode != queue_mode::append && form == sieve::form::removal_list ? capacity : 0) {
    for (int i = 0; i < 2; ++i) {
      const std::uint32_t n = i == 1 && mode == queue_mode::index ? 0 : capacity;  // an index queue: state in place
      memory_[i] = typename Backend::template array<std::byte>(path_columns::column_bytes(n));
      store_[i] = path_columns::carve(memory_[i].get(), n);
      if (mode == queue_mode::index) index_[i] = typename Backend::template array<std::uint32_t>(capacity);
    }
  }

  std::uint32_t capacity() const { return capacity_; }
  queue_mode mode() const { return mode_; }
  bool in_place() const { return in_place_; }
  const path_columns& paths() const { return store_[cur_]; }
  const path_columns& spare() const { return store_[1 - cur_]; }
  // An index queue's live entries (null otherwise), and the other index buffer.
  std::uint32_t* index() const { return mode_ == queue_mode::index ? index_[icur_].get() : nullptr; }
  std::uint32_t* spare_index() const { return mode_ == queue_mode::index ? index_[1 - icur_].get() : nullptr; }
  void restart() { cur_ = icur_ = 0; }  // a new wave: generate writes paths(), index() is 0, 1, 2, ...
  // A gather filled spare() (spare_index() for an index queue); shade_append filled spare().
  void reordered() { (mode_ == queue_mode::index ? icur_ : cur_) ^= 1; }
  void appended() { cur_ ^= 1; }

  // What compaction moves, for the first n entries: the path columns, or an index queue's indices.
  sieve::record record(std::uint32_t n) const {
    return mode_ == queue_mode::index ? sieve::record(std::span(index(), n)) : paths().record(n);
  }

  // Marks for the first n entries, cleared as the form needs (the bit mask zeroed, *removal_count 0).
  keep_marks marks(std::uint32_t n, std::uint64_t* removal_count) {
    if (mode_ == queue_mode::append) return {};  // shade_append moves the survivors itself
    return marked().begin(b_, (n + 31) / 32, low_word(removal_count), removal_count);
  }

  // Keeps the marked entries of the first n (*live of them are live; n is the live count or the
  // capacity) and writes how many to *kept.
  void compact(std::uint32_t n, const std::uint64_t* live, const std::uint64_t* removal_count, std::uint64_t* kept) {
    const sieve::record out =
        mode_ == queue_mode::index ? sieve::record(std::span(spare_index(), n)) : spare().record(n);
    marked().compact(b_, record(n), in_place_ ? nullptr : &out, n, {live, removal_count}, kept);
    if (!in_place_) (mode_ == queue_mode::index ? icur_ : cur_) ^= 1;
  }

 private:
  marked_queue marked() const { return {strategy_, form_, flags_.get(), mask_.get(), removals_.get()}; }

  Backend& b_;
  std::uint32_t capacity_;
  sieve::strategy strategy_;
  sieve::form form_;
  queue_mode mode_;
  bool in_place_;
  typename Backend::template array<std::byte> memory_[2];
  path_columns store_[2];
  typename Backend::template array<std::uint32_t> index_[2];
  int cur_ = 0, icur_ = 0;
  typename Backend::template array<std::uint8_t> flags_;
  typename Backend::template array<std::uint32_t> mask_, removals_;
};

// wave.begin: the wave's size is the live count of bounce 0, every other counter starts at zero.
template <class Exec>
void begin_wave(Exec e, const wave* w, wave_counts c) {
  exec::parallel_for(e, "wave.begin", 1, [=] SIEVE_HD(std::uint32_t) {
    c.words[0] = w->size();
    for (std::uint32_t i = 1; i < wave_counts::size(c.max_bounces); ++i) c.words[i] = 0;
  });
}

// An index queue's first entries: path i at entry i.
template <class Exec>
void iota_indices(Exec e, std::uint32_t capacity, std::uint32_t* index) {
  exec::parallel_for(e, "generate.index", capacity, [=] SIEVE_HD(std::uint32_t i) { index[i] = i; });
}

// Rays of an index queue's entries, contiguous (the BFS tracer takes a plain array).
template <class Exec>
void gather_rays(Exec e, std::uint32_t capacity, const std::uint32_t* live, const std::uint32_t* index, const ray* rays,
                 ray* out) {
  exec::parallel_for(e, "extend.gather", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < *live) out[i] = rays[index[i]];
  });
}

template <class Backend>
class wavefront_driver {
 public:
  // `wave` (backend memory) holds the wave being rendered; `film` is the image's sums (backend
  // memory); `capacity` the most paths a wave holds, `max_pixels` the most pixels.
  // `family`: the scene's one material family (prepared_scene::family), or `any`: shade's kernels are
  // compiled for it.
  wavefront_driver(Backend& b, const scene_view& view, const render_settings& settings, const render_controls& controls,
                   sieve::form form, std::uint32_t capacity, std::uint32_t max_pixels, const wave* wave, vec3* film,
                   material_family family = material_family::any)
      : b_(b), view_(view), settings_(settings), controls_(controls), capacity_(capacity), max_pixels_(max_pixels), wave_(wave), film_(film),
        family_(family),
        queue_(b, capacity, settings.strategy, form, settings.queue), hits_(capacity),
        shadow_rays_(capacity), shadow_light_(capacity), wave_film_(capacity), shadow_slots_(capacity),
        counts_(wave_counts::size(view.max_bounces)), cursor_(1),
        keys_(sorts(settings) ? 2 * std::size_t{capacity} : 0), order_(sorts(settings) ? 2 * std::size_t{capacity} : 0),
        route_keys_(settings.routing == routing_kind::multisplit ? capacity : 0),
        route_iota_(settings.routing == routing_kind::multisplit ? capacity : 0),
        route_entries_(settings.routing == routing_kind::multisplit ? capacity
                       : settings.routing == routing_kind::queues ? std::size_t{material_families} * capacity
                                                                  : 0),
        route_bounds_(material_families + 1), route_counts_(material_families) {
    b_.zero(wave_film_.get(), std::size_t{capacity} * sizeof(vec3));
    if (settings.routing == routing_kind::multisplit) route_iota(b_.exec(), capacity, route_iota_.get());
  }

  // Whether the driver radix-sorts (key, index) pairs: to reorder rays, or to route by material.
  static bool sorts(const render_settings& s) { return s.reorder != reorder_key::none || s.routing == routing_kind::sort; }

  bool in_place() const { return queue_.in_place(); }
  queue_mode mode() const { return queue_.mode(); }
  wave_counts counts() const { return {counts_.get(), view_.max_bounces}; }
  // What the compaction moves for `capacity` entries (its workspace's shape).
  sieve::record compaction_record() const { return queue_.record(capacity_); }
  // What the multisplit routing splits (its workspace's shape): the queue's entry numbers.
  sieve::record route_record() const { return sieve::record(std::span(route_entries_.get(), capacity_)); }
  vec3* wave_film() const { return wave_film_.get(); }

  // Enqueues wave w (whose copy the backend put in *wave): generate, every bounce, accumulate.
  // host_counts: read the live count each bounce (launch over it, stop at zero, look for a cancel:
  // returns false when cancelled, the wave then adds nothing to the image). Otherwise nothing is read
  // back and nothing here depends on w: every stage launches over the capacity.
  bool run(const wave& w, bool host_counts) {
    const auto e = b_.exec();
    const wave_counts c = counts();
    const std::uint32_t max_bounces = view_.max_bounces;
    const queue_mode mode = queue_.mode();
    vec3* const wfilm = wave_film_.get();
    queue_.restart();
    b_.time("generate", -1, [&] {
      const std::uint32_t n = host_counts ? w.size() : capacity_;
      begin_wave(e, wave_, c);
      generate(e, n, view_, wave_, queue_.paths());
      if (mode == queue_mode::index) iota_indices(e, n, queue_.index());
    });
    for (std::uint32_t vertex = 0; vertex <= max_bounces; ++vertex) {
      std::uint32_t n = capacity_;  // what the stages launch over
      if (host_counts) {
        n = static_cast<std::uint32_t>(b_.read(c.live(vertex)));
        if (n == 0) break;
        if (cancelled(controls_)) return false;  // Ctrl-C within a bounce, whatever the frame's size
      }
      const std::uint32_t* live = low_word(c.live(vertex));
      const path_columns paths = queue_.paths();
      const bounce_columns scratch{hits_.get(),       shadow_rays_.get(),   shadow_light_.get(),
                                   low_word(c.shadow(vertex)), shadow_slots_.get(), queue_.index()};
      const family_queues queues = family_queues_();
      if (queues) b_.time("route", -1, [&] { b_.zero(route_counts_.get(), material_families * sizeof(std::uint64_t)); });
      b_.time("extend", -1, [&] {
        if (settings_.traversal != traversal_kind::bfs)
          return extend_dfs(e, n, live, view_, paths, scratch, cursor_.get(), queues,
                            vertex == 0 ? view_.trace.camera : view_.trace.bounce);
        const ray* rays = paths.rays;
        if (scratch.index) {  // shade writes the shadow rays later: their column is free until then
          gather_rays(e, n, live, scratch.index, paths.rays, shadow_rays_.get());
          rays = shadow_rays_.get();
        }
        b_.extend_bfs(view_, rays, hits_.get(), n, live);
      });
      if (host_counts && cancelled(controls_)) return false;  // extend is the longest stage: look again after it
      const family_lists lists = route(n, vertex, queues);

      const keep_marks marks = queue_.marks(n, c.removals());
      const shade_args args{view_, paths, scratch, wfilm, marks, vertex};
      const bool append = mode == queue_mode::append && vertex < max_bounces;  // none survives the last vertex
      b_.time("shade", -1, [&] {
        if (lists.entries) {  // one kernel per family, over its entries
          const path_columns next = queue_.spare();
          const auto width = [&](std::uint32_t f) {
            return host_counts ? family_size(lists, f) : std::min(capacity_, b_.resident_threads());
          };
          return shade_families(e, width, lists, args, wave_, append ? &next : nullptr, low_word(c.live(vertex + 1)));
        }
        if (append) return shade_append(e, n, live, args, wave_, queue_.spare(), low_word(c.live(vertex + 1)), family_);
        shade(e, n, live, args, wave_, family_);
      });
      b_.time("connect", -1, [&] { connect(e, n, view_, scratch, wfilm, cursor_.get()); });  // n >= the shadow rays
      if (vertex == max_bounces) break;  // every path ended at this vertex

      if (append)
        queue_.appended();
      else
        b_.time("compact", static_cast<int>(vertex),
                [&] { queue_.compact(n, c.live(vertex), c.removals(), c.live(vertex + 1)); });

      if (settings_.reorder != reorder_key::none) {
        std::uint32_t m = capacity_;
        if (host_counts && (m = static_cast<std::uint32_t>(b_.read(c.live(vertex + 1)))) <= 1) continue;
        b_.time("reorder", -1, [&] {
          const std::uint32_t* kept = low_word(c.live(vertex + 1));
          const path_columns from = queue_.paths();
          std::uint32_t* const index = queue_.index();
          reorder_keys(e, m, kept, settings_.reorder, view_, from, keys_.get(), order_.get(), index);
          const std::uint32_t* order = b_.sort(keys_.get(), order_.get(), m, reorder_key_bits(settings_.reorder)).second;
          if (index)
            copy_indices(e, m, kept, order, queue_.spare_index());  // the sorted path indices are the queue
          else
            gather_paths(e, m, kept, order, from, queue_.spare());
          queue_.reordered();
        });
      }
    }
    b_.time("accumulate", -1, [&] { accumulate(e, max_pixels_, wave_, wfilm, film_); });
    return true;
  }

  // After wave's work completed: adds its counts (`words`, a host copy of counts()) to stats.
  static void tally(const std::uint64_t* words, std::uint32_t max_bounces, render_stats& stats) {
    for (std::uint32_t v = 0; v <= max_bounces; ++v) {
      stats.bounces[v].live += words[v];
      stats.extension_rays += words[v];
    }
    for (std::uint32_t v = 0; v <= max_bounces; ++v) stats.shadow_rays += words[max_bounces + 2 + v];
  }

 private:
  // The queues routing's per-family queues (empty otherwise), counted in route_counts_' low words.
  family_queues family_queues_() const {
    if (settings_.routing != routing_kind::queues) return {};
    return {route_entries_.get(), route_counts_.get(), capacity_, view_.surfaces, view_.material_of};
  }

  // Stage `route` after extend (n: what the stages launch over): where each family's entries lie,
  // or no entries (branch routing: one kernel).
  family_lists route(std::uint32_t n, std::uint32_t vertex, const family_queues& queues) {
    const auto e = b_.exec();
    const wave_counts c = counts();
    const std::uint32_t* live = low_word(c.live(vertex));
    std::uint64_t* const bounds = route_bounds_.get();
    switch (settings_.routing) {
      case routing_kind::multisplit:
        b_.time("route", -1, [&] {
          route_family_keys(e, n, live, view_, hits_.get(), route_keys_.get());
          b_.multisplit(route_keys_.get(), route_iota_.get(), route_entries_.get(), n, c.live(vertex), material_families,
                        bounds);
        });
        return {route_entries_.get(), bounds, nullptr, 0};
      case routing_kind::sort: {
        const int mbits = material_bits(view_.material_count);
        const std::uint32_t* entries = nullptr;
        b_.time("route", -1, [&] {
          route_sort_keys(e, n, live, view_, hits_.get(), mbits, keys_.get(), order_.get());
          const auto [keys, sorted] = b_.sort(keys_.get(), order_.get(), n, route_sort_bits(view_.material_count));
          route_bounds(e, n, live, keys, mbits, bounds);
          entries = sorted;
        });
        return {entries, bounds, nullptr, 0};
      }
      case routing_kind::queues:
        if (settings_.traversal == traversal_kind::bfs)  // the BFS tracer has no per-ray epilogue
          b_.time("route", -1, [&] { route_append(e, n, live, hits_.get(), queues); });
        return queues.lists();
      default: return {};
    }
  }

  // Family f's entry count (host counts: read from the backend's memory).
  std::uint32_t family_size(const family_lists& lists, std::uint32_t f) {
    if (!lists.bounds) return static_cast<std::uint32_t>(b_.read(route_counts_.get() + f));
    return static_cast<std::uint32_t>(b_.read(lists.bounds + f + 1) - b_.read(lists.bounds + f));
  }

  Backend& b_;
  scene_view view_;
  const render_settings& settings_;
  const render_controls& controls_;  // cancel
  std::uint32_t capacity_, max_pixels_;
  const wave* wave_;
  vec3* film_;
  material_family family_;
  path_queue<Backend> queue_;
  typename Backend::template array<hit> hits_;
  typename Backend::template array<ray> shadow_rays_;
  typename Backend::template array<vec3> shadow_light_, wave_film_;
  typename Backend::template array<std::uint32_t> shadow_slots_;  // the shadow queue's film entries
  typename Backend::template array<std::uint64_t> counts_;
  typename Backend::template array<std::uint32_t> cursor_;  // extend's and connect's walks (exec/walk.hpp)
  typename Backend::template array<std::uint32_t> keys_, order_;  // reorder's and the sort routing's pairs
  typename Backend::template array<std::uint8_t> route_keys_;       // multisplit: a family per entry
  typename Backend::template array<std::uint32_t> route_iota_, route_entries_;
  typename Backend::template array<std::uint64_t> route_bounds_, route_counts_;
};

}  // namespace sieve::render
