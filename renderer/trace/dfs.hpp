// Depth-first single-ray traversal over the 64-byte pair nodes (pair_bvh, read through its
// pair_view): closest hit and any hit, one copy for the CPU and the GPU. Nearer child first; a fixed stack of 64 entries (the builder keeps trees
// within 60 levels).
#pragma once

#include "../bvh/bvh.hpp"
#include "../bvh/node_encoding.hpp"
#include "../core/hit.hpp"

namespace sieve::render {

// Boxes are culled against the closest hit so far with a small relative margin: a box's computed
// entry distance can round a few ulps above the distance of a triangle inside it, and a triangle
// tied with the closest hit must still be tested for the tie-break to be order-independent.
SIEVE_HD inline float cull_limit(float t) { return t + fabsf(t) * 1e-6f; }

// One step of the traversal: a pair node's children, their boxes tested against the ray.
struct pair_step {
  float t[2];               // entry distances (> limit: missed)
  std::uint32_t child[2], count[2];
};

SIEVE_HD inline pair_step visit(const pair_node& node, const ray& r, vec3 inv, float limit) {
  const quad a = node.q[0], b = node.q[1], z = node.q[2], c = node.q[3];  // four 16-byte loads
  pair_step s;
  s.child[0] = float_bits(c.x), s.count[0] = float_bits(c.y);
  s.child[1] = float_bits(c.z), s.count[1] = float_bits(c.w);
  s.t[0] = hit_box(aabb{{a.x, a.z, z.x}, {a.y, a.w, z.y}}, r.origin, inv, limit);
  s.t[1] = s.child[1] == no_child ? 2 * 1e30f : hit_box(aabb{{b.x, b.z, z.z}, {b.y, b.w, z.w}}, r.origin, inv, limit);
  return s;
}

// Closest hit along r within (0, r.tmax]: leaves are intersected as soon as their box is hit, the
// nearer inner child is visited first and the farther pushed with its entry distance, so a popped
// node is skipped without a second box test when the closest hit has moved in front of it.
//
// The walk is resumable: start() takes a ray, each step() visits one pair node and says whether
// the walk goes on, result() gives the hit. closest_hit() runs one walk to its end;
// exec::parallel_walk on the GPU keeps a warp's lanes busy by giving a lane whose walk ended a new
// ray between steps (closest_hits_walk below).
//
// The stack of (node, entry distance): each entry one 8-byte word, so that a push is one store. In a
// GPU thread's local memory, separate 4-byte arrays of nodes and distances made twice the L2 write
// traffic and held diffuse rays at 1170 against 1541 Mrays/s (H100, sphere room: dfs-designs.txt).
class dfs_local_stack {
 public:
  SIEVE_HD void put(int i, std::uint32_t node, float t) { entry_[i] = {node, t}; }  // one 8-byte store
  SIEVE_HD std::uint32_t node(int i) const { return entry_[i].node; }
  SIEVE_HD float t(int i) const { return entry_[i].t; }

 private:
  struct alignas(8) entry {
    std::uint32_t node;
    float t;
  };
  entry entry_[dfs_stack_size];
};

class closest_walk {
 public:
  SIEVE_HD void start(const pair_view& b, const ray& r) {
    r_ = r;
    inv_ = reciprocal(r.direction);
    best_ = hit{};
    best_.t = r.tmax;
    top_ = 0;
    node_ = 0;
    live_ = b.node_count != 0;
  }

  SIEVE_HD bool live() const { return live_; }

  // The stack is the caller's, apart from the walk, so that the walk's scalars stay in registers
  // (a dynamically indexed array would take the whole object into a GPU thread's local memory).
  SIEVE_HD bool step(const pair_view& b, dfs_local_stack& stack_) {
    const pair_step s = visit(b.nodes[node_], r_, inv_, cull_limit(best_.t));
    for (int c = 0; c < 2; ++c) {
      if (s.count[c] == 0 || !(s.t[c] <= cull_limit(best_.t))) continue;
      for (std::uint32_t i = s.child[c]; i < s.child[c] + s.count[c]; ++i) {
        tri_hit h;
        if (!hit_triangle(b.triangles[i].get(), r_, best_.t, h)) continue;
        const std::uint32_t prim = b.prims[i];  // read for hits only
        if (closer(h.t, prim, best_) && accept_hit(b.alpha, r_, prim, h.u, h.v)) best_ = {h.t, prim, h.u, h.v};
      }
    }
    const float limit = cull_limit(best_.t);
    const bool h0 = s.count[0] == 0 && s.child[0] != no_child && s.t[0] <= limit;
    const bool h1 = s.count[1] == 0 && s.child[1] != no_child && s.t[1] <= limit;
    if (h0 && h1) {
      const int near = s.t[0] <= s.t[1] ? 0 : 1;
      stack_.put(top_++, s.child[1 - near], s.t[1 - near]);
      node_ = s.child[near];
      return true;
    }
    if (h0 || h1) {
      node_ = s.child[h0 ? 0 : 1];
      return true;
    }
    while (top_ > 0) {  // pop the next node still in front of the closest hit
      --top_;
      if (stack_.t(top_) <= cull_limit(best_.t)) {
        node_ = stack_.node(top_);
        return true;
      }
    }
    return live_ = false;
  }

  SIEVE_HD hit result() const {
    hit out = best_;
    if (out.prim == ~0U) out.t = 1e30f;
    return out;
  }

 private:
  ray r_;
  vec3 inv_;
  hit best_;
  std::uint32_t node_ = 0;
  int top_ = 0;
  bool live_ = false;
};

// The hits of a batch of rays as a walk for exec::parallel_walk (exec/walk.hpp), for any resumable
// traversal `Walk` (start(view, ray), live(), step(view, scratch), result()): item i's ray is ray(i),
// its result goes to hits[i]; items() is how many (both callables, SIEVE_HD).
template <class Walk, class Scratch, class View, class Ray, class Count>
struct ray_walk {
  using state = Walk;
  using scratch = Scratch;
  View bvh;
  Ray ray;
  Count items;
  hit* hits;

  SIEVE_HD std::uint32_t count() const { return items(); }
  SIEVE_HD bool start(std::uint32_t i, state& s) const {
    s.start(bvh, ray(i));
    return s.live();
  }
  SIEVE_HD bool step(state& s, scratch& stack) const { return s.step(bvh, stack); }
  SIEVE_HD void finish(std::uint32_t i, const state& s) const { hits[i] = s.result(); }
};

// The binary DFS's closest hits as such a walk.
template <class Ray, class Count>
struct closest_hits_walk : ray_walk<closest_walk, dfs_local_stack, pair_view, Ray, Count> {
  SIEVE_HD closest_hits_walk(const pair_view& v, Ray r, Count c, hit* h)
      : ray_walk<closest_walk, dfs_local_stack, pair_view, Ray, Count>{v, r, c, h} {}
};

// The pair layout of a view, with the view's cut-outs.
SIEVE_HD inline pair_view pairs_of(const bvh_view& v) {
  pair_view p = v.pairs;
  p.alpha = v.alpha;
  return p;
}

SIEVE_HD inline hit closest_hit(const pair_view& b, const ray& r) {
  closest_walk w;
  dfs_local_stack stack;
  w.start(b, r);
  if (w.live())
    while (w.step(b, stack)) {
    }
  return w.result();
}

// True when anything blocks r within (0, r.tmax): shadow rays.
SIEVE_HD inline bool any_hit(const pair_view& b, const ray& r) {
  if (b.node_count == 0) return false;
  const vec3 inv = reciprocal(r.direction);
  std::uint32_t stack[dfs_stack_size];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const pair_step s = visit(b.nodes[stack[--top]], r, inv, r.tmax);
    for (int c = 0; c < 2; ++c) {
      if (!(s.t[c] <= r.tmax)) continue;
      if (s.count[c] == 0) {
        if (s.child[c] != no_child) stack[top++] = s.child[c];
        continue;
      }
      for (std::uint32_t i = s.child[c]; i < s.child[c] + s.count[c]; ++i) {
        tri_hit h;
        if (hit_triangle(b.triangles[i].get(), r, r.tmax, h) && accept_hit(b.alpha, r, b.prims[i], h.u, h.v)) return true;
      }
    }
  }
  return false;
}

}  // namespace sieve::render
