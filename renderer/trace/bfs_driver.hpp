// The BFS traversal's one loop, for the CPU (bfs.cpp) and the GPU (bfs_cuda.cu): a template over a
// backend that supplies the memory, the launch executor, the compaction call and the loop itself.
//
// Sizes live where the stages run (bfs_state: host memory on the CPU, device memory on the GPU), so
// the GPU never waits for the host: each step is planned by a one-thread stage, the other stages
// are launched over their capacity and the items past the live count return at once, and the
// compaction takes its counts from device memory (sieve::cuda::device_counts). Every buffer sits at
// a fixed place for the whole trace, so one round of steps can be captured once in a CUDA graph and
// replayed by a WHILE conditional node until no pair is left.
//
// The bounded stack of bfs.hpp is split in two: its top, the frontier, in frontier buffer `in`
// (fixed, so the compaction can write there), and the pairs below it on a spill stack. A step takes
// the top chunk: the frontier's top pairs, plus pairs popped from the spill stack when the frontier
// is smaller than the chunk; when it is larger, the rest of the frontier is spilled (copied onto the
// spill stack) by the same stage. Out of place, the children (buffer `out`) are compacted back into
// `in`; in place and with `append`, the children become the frontier where they are, so the two
// buffers trade roles each step and a round is two steps.
#pragma once

#include <exec/exec.hpp>

#include "bfs.hpp"

#include <cstring>
#include <stdexcept>

namespace sieve::render {

// What the stages read and write besides the arrays: the plan of the current step and the counts.
struct bfs_state {
  std::uint64_t slots = 0;     // child slots of the step, A m: the compaction's live count
  std::uint64_t kept = 0;      // survivors of the step (the compaction's count, or the append
                               // counter): the next step's frontier
  std::uint64_t removals = 0;  // the removal list's length, as the library takes it
  std::uint64_t peak = 0;      // the most pairs waiting at once
  std::uint64_t stack = 0;     // pairs on the spill stack
  std::uint64_t pop_base = 0, spill_base = 0;  // where this step pops from, spills to
  std::uint32_t removal_count = 0;  // the marks' counter (keep_marks counts in 32 bits)
  std::uint32_t rays = 0;           // rays live
  std::uint32_t m = 0;              // pairs this step expands
  std::uint32_t popped = 0;         // of which taken from the spill stack's top
  std::uint32_t spilled = 0;        // frontier pairs [0, spilled) moved onto the spill stack
  std::uint32_t work = 0;           // max(m, spilled): the expand stage's live count
  std::uint32_t steps = 0;
};

// Capacities for up to n rays and A = `arity` children a pair (what reserve() allocates).
struct bfs_sizes {
  std::size_t rays = 0;
  std::size_t frontier = 0;  // pairs per frontier buffer: a step's child slots, A * bfs_chunk_bound(n, A)
  std::size_t stack = 0;     // pairs of spill stack: bfs_stack_bound(n, A)
  std::size_t mask_words() const { return (frontier + 31) / 32; }
  static bfs_sizes for_rays(std::size_t n, unsigned arity = 2) {
    if (n > (std::size_t{1} << 30))  // the first frontier (n pairs) fits a buffer of A * bfs_chunk_bound(n, A)
      throw sieve::error("BFS traversal: " + std::to_string(n) + " rays in one call; at most 2^30");
    return {n, static_cast<std::size_t>(arity * bfs_chunk_bound(n, arity)),
            static_cast<std::size_t>(bfs_stack_bound(n, arity))};
  }
};

// The arrays of a trace (host or device pointers), owned by the backend's tracer.
struct bfs_memory {
  bfs_pair* frontier[2] = {nullptr, nullptr};
  bfs_pair* stack = nullptr;
  std::uint8_t* flags = nullptr;     // the marks: whichever the strategy takes
  std::uint32_t* mask = nullptr;
  std::uint32_t* removals = nullptr;
  std::uint64_t* best = nullptr;     // per ray: packed (t, primitive) of the closest hit so far
  bfs_state* state = nullptr;
};

// The stages. Each is launched over a capacity; what is live is read from the state.

// bfs.begin: every ray's best hit is "none before tmax", and the frontier is (ray i, root pair).
template <class Exec>
void bfs_begin(Exec e, std::size_t capacity, const std::uint32_t* d_count, bool empty_tree, const ray* rays,
               std::uint64_t* best, bfs_pair* frontier, bfs_state* st) {
  const std::uint32_t cap = static_cast<std::uint32_t>(capacity);
  exec::parallel_for(e, "bfs.plan", 1, [=] SIEVE_HD(std::uint32_t) {
    const std::uint32_t n = *d_count < cap ? *d_count : cap;
    *st = bfs_state{};
    st->rays = n;
    st->kept = empty_tree ? 0 : n;
  });
  exec::parallel_for(e, "bfs.begin", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i >= st->rays) return;
    best[i] = pack_hit(rays[i].tmax, ~0U);
    frontier[i] = bfs_make_pair(i, 0);  // node 0: the root's children (binary), the root (wide)
  });
}

// bfs.plan (one thread): the last step's survivors are the frontier; take the top chunk.
SIEVE_HD inline void bfs_plan_step(bfs_state& s, unsigned arity) {
  const std::uint64_t frontier = s.kept, total = s.stack + frontier;
  s.peak = s.peak > total ? s.peak : total;
  const std::uint64_t m = bfs_chunk(total, s.rays, arity);
  s.m = static_cast<std::uint32_t>(m);
  if (m > frontier) {  // the whole frontier, and pairs from the spill stack's top
    s.popped = static_cast<std::uint32_t>(m - frontier);
    s.spilled = 0;
    s.stack -= s.popped;
    s.pop_base = s.stack;
  } else {  // the frontier's top m pairs; the rest goes onto the spill stack
    s.popped = 0;
    s.spilled = static_cast<std::uint32_t>(frontier - m);
    s.spill_base = s.stack;
    s.stack += s.spilled;
  }
  s.work = s.m > s.spilled ? s.m : s.spilled;
  s.slots = arity * m;
  s.kept = 0;
  s.removal_count = 0;
  s.steps += m > 0;
}

template <class Exec>
void bfs_plan(Exec e, bfs_state* st, unsigned arity) {
  exec::parallel_for(e, "bfs.plan", 1, [=] SIEVE_HD(std::uint32_t) { bfs_plan_step(*st, arity); });
}

// The pair a step's item i expands, after moving item i of the spilled part (both stages below).
SIEVE_HD inline bfs_pair bfs_take(const bfs_state& s, std::uint32_t i, const bfs_pair* in, bfs_pair* stack) {
  if (i < s.spilled) stack[s.spill_base + i] = in[i];
  const std::uint32_t from_frontier = s.m - s.popped;
  if (i >= s.m) return 0;
  return i < from_frontier ? in[s.spilled + i] : stack[s.pop_base + (i - from_frontier)];
}

// bfs.expand, for a library strategy: the child slots of pair i to out[A i, A i + A), marked.
template <class Tree, class Exec>
void bfs_expand_marked(Exec e, std::size_t bound, const bfs_state* st, const bvh_view& b, const ray* rays,
                       std::uint64_t* best, const bfs_pair* in, bfs_pair* stack, bfs_pair* out, const keep_marks& marks) {
  exec::parallel_for(e, "bfs.expand", bound, [=] SIEVE_HD(std::uint32_t i) {
    if (i >= st->work) return;
    const bfs_pair p = bfs_take(*st, i, in, stack);
    if (i < st->m) expand_marked<Tree>(i, p, b, rays, best, out, marks);
  });
}

// The removal list's length in the library's count type.
template <class Exec>
void bfs_count_removals(Exec e, bfs_state* st) {
  exec::parallel_for(e, "bfs.plan", 1, [=] SIEVE_HD(std::uint32_t) { st->removals = st->removal_count; });
}

// bfs.finish: the winners' barycentrics (the packed word holds t and the primitive only).
template <class Exec>
void bfs_finish(Exec e, std::size_t capacity, const bfs_state* st, const bvh_view& b, const ray* rays,
                const std::uint64_t* best, hit* hits) {
  exec::parallel_for(e, "bfs.finish", capacity, [=] SIEVE_HD(std::uint32_t i) {
    if (i < st->rays) hits[i] = bfs_final_hit(b, rays[i], best[i]);
  });
}

// The frontier queue: its buffers and marks, and how a step's survivors become the next frontier.
// Stages only mark (or append); the loop only says "step".
class bfs_queue {
 public:
  enum class mode : std::uint8_t { append, in_place, out_of_place };

  // For the compaction a tracer checked when it was made (bfs.hpp); keeps a reference to it.
  explicit bfs_queue(const bfs_compaction& c)
      : c_(c), mode_(c.append ? mode::append : c.in_place ? mode::in_place : mode::out_of_place), form_(c.form) {}

  mode how() const { return mode_; }
  sieve::form form() const { return form_; }
  bool in_place() const { return mode_ == mode::in_place; }

  // Steps per round: after a round the frontier is in frontier[0] again.
  int steps_per_round() const { return mode_ == mode::out_of_place ? 1 : 2; }
  // Step s of a round reads the frontier from input(s) and writes the children to output(s).
  bfs_pair* input(const bfs_memory& m, int s) const { return mode_ == mode::out_of_place ? m.frontier[0] : m.frontier[s & 1]; }
  bfs_pair* output(const bfs_memory& m, int s) const {
    return mode_ == mode::out_of_place ? m.frontier[1] : m.frontier[(s + 1) & 1];
  }

  // One step: expand the chunk, mark or append its children, compact them into the next frontier.
  template <class Tree, class Backend>
  void step(Backend& be, const bfs_memory& m, const bfs_sizes& z, int s, const bvh_view& b, const ray* rays) const {
    const auto e = be.exec();
    bfs_plan(e, m.state, Tree::arity);
    bfs_pair *in = input(m, s), *out = output(m, s);
    const std::size_t bound = be.extent(z.frontier, [&] { return m.state->work; });
    if (mode_ == mode::append) {  // survivors appended to out[0, kept): the backend reserves the slots
      be.template expand_appended<Tree>(bound, m.state, b, rays, m.best, in, m.stack, out);
      return;
    }
    const marked_queue q{c_.strategy, form_, m.flags, m.mask, m.removals};
    const std::size_t mask_words =
        form_ == sieve::form::bit_mask ? be.extent(z.mask_words(), [&] { return (m.state->slots + 31) / 32; }) : 0;
    const keep_marks marks = q.begin(be, mask_words, &m.state->removal_count);  // bfs.plan reset the count
    bfs_expand_marked<Tree>(e, bound, m.state, b, rays, m.best, in, m.stack, out, marks);
    if (form_ == sieve::form::removal_list) bfs_count_removals(e, m.state);
    const sieve::record children(std::span(out, z.frontier)), frontier(std::span(in, z.frontier));
    q.compact(be, children, mode_ == mode::in_place ? nullptr : &frontier, z.frontier,
              {&m.state->slots, &m.state->removals}, &m.state->kept);
  }

 private:
  const bfs_compaction& c_;
  mode mode_ = mode::append;
  sieve::form form_ = sieve::form::byte_flags;
};

// One trace: closest hits of rays[0, *d_count) (capacity: what the memory was sized for). The
// backend's loop(state, round) runs `round` while pairs are left (on the CPU and in the GPU's
// host-driven mode: the host looks; in the GPU's graph mode: a WHILE node, its body one round).
// step_begins() and stepped(state) bracket each step (timing, statistics).
template <class Tree, class Backend>
void bfs_run(Backend& be, const bfs_queue& q, const bfs_memory& m, const bfs_sizes& z, const bvh_view& b,
             const ray* rays, hit* hits, const std::uint32_t* d_count) {
  bfs_begin(be.exec(), z.rays, d_count, Tree::empty(b), rays, m.best, m.frontier[0], m.state);
  be.loop(m.state, [&] {
    for (int s = 0; s < q.steps_per_round(); ++s) {
      be.step_begins();
      q.template step<Tree>(be, m, z, s, b, rays);
      be.stepped(m.state);
    }
  });
  bfs_finish(be.exec(), z.rays, m.state, b, rays, m.best, hits);
}

// bfs_run over the tracer's tree: the one place the tree is picked (its kernels instantiated for both).
template <class Backend>
void bfs_run(trace_tree tree, Backend& be, const bfs_queue& q, const bfs_memory& m, const bfs_sizes& z,
             const bvh_view& b, const ray* rays, hit* hits, const std::uint32_t* d_count) {
  const std::uint32_t wide_nodes = tree == trace_tree::compressed ? b.cw.node_count : b.wide.node_count;
  if (tree != trace_tree::binary && wide_nodes == 0 && b.binary.node_count != 0)
    throw sieve::error("BFS traversal over the wide tree: the BVH was built without the wide layout");
  if (tree == trace_tree::wide) {
    bfs_run<bfs_wide_tree>(be, q, m, z, b, rays, hits, d_count);
  } else if (tree == trace_tree::compressed) {
    bfs_run<bfs_cw_tree>(be, q, m, z, b, rays, hits, d_count);
  } else {
    bfs_run<bfs_binary_tree>(be, q, m, z, b, rays, hits, d_count);
  }
}

}  // namespace sieve::render
