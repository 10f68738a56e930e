// The device builder's CPU run (ploc_run on oneTBB, the library's CPU sort and compaction) and what
// both runs share: the checks, the trivial trees, the tree as the host holds it. See ploc.hpp.
#include "ploc.hpp"

#include <sieve/compaction/compact.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <vector>

namespace sieve::render {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) { return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count(); }

template <class T, class A>
T* at_least(std::vector<T, A>& v, std::size_t n, bool keep = false) {
  if (v.size() < n) {
    if (!keep) v.clear();
    v.resize(std::max(n, 2 * v.size()));
  }
  return v.data();
}

// ploc_block_rounds' team on the CPU: one thread.
struct serial_team {
  static std::uint32_t size() { return 1; }
  static std::uint32_t rank() { return 0; }
  static void sync() {}
  static std::uint64_t exclusive_sum(std::uint64_t v, std::uint64_t& total) {
    total = v;
    return 0;
  }
};

class cpu_backend {
 public:
  cpu_backend(fresh_vector<wide_node>& wide, fresh_vector<cw_node>& cw) : wide_(wide), cw_(cw) {}
  static void sort(const std::uint32_t* keys, const std::uint32_t* values, std::uint32_t* keys_out,
                   std::uint32_t* values_out, std::uint32_t n, int bits) {
    sort_pairs_cpu(keys, values, keys_out, values_out, n, bits);
  }
  static void compact(const const_record& in, const record& out, std::span<const std::uint8_t> flags, std::uint32_t,
                      std::uint64_t* count) {
    *count = sieve::compact_copy("scan", in, out, byte_flags{flags});
  }
  static void scan(const std::uint64_t* in, std::uint64_t* out, std::uint32_t n) {
    std::exclusive_scan(in, in + n, out, std::uint64_t{0});
  }
  static void nearest(std::uint32_t* nn, const aabb* cbox, std::uint32_t c, std::uint32_t radius) {
    exec::parallel_for(exec::cpu{}, "ploc.nearest", c, [=](std::uint32_t p) { nn[p] = ploc_nearest(cbox, c, p, radius); });
  }
  static void block_rounds(const ploc_buffers& b, std::uint32_t c, std::uint32_t next, int from, const ploc_settings& s) {
    serial_team team;
    ploc_block_rounds(team, b, c, next, from, s);
  }
  template <class T>
  static T read(const T* p) { return *p; }
  ploc_task* tasks(int which, std::size_t n) { return at_least(tasks_[which], n); }
  ploc_kid* kids(std::size_t n) { return at_least(kids_, n); }
  std::uint64_t* words(int which, std::size_t n) { return at_least(words_[which], n); }
  wide_node* wide_nodes(std::size_t n) { return at_least(wide_, n, true); }
  cw_node* cw_nodes(std::size_t n) { return at_least(cw_, n, true); }
  void lap(double* ms) {
    *ms += ms_since(mark_);
    mark_ = clock_type::now();
  }

 private:
  fresh_vector<wide_node>& wide_;
  fresh_vector<cw_node>& cw_;
  std::vector<ploc_task> tasks_[2];
  std::vector<ploc_kid> kids_;
  std::vector<std::uint64_t> words_[2];
  clock_type::time_point mark_ = clock_type::now();
};

bvh build_cpu(std::span<const triangle> triangles, const ploc_settings& s, ploc_timing& t) {
  const auto n = static_cast<std::uint32_t>(triangles.size());
  const std::size_t all = 2 * std::size_t{n} - 1;
  std::vector<aabb> prim_box(n), centroid(lbvh_centroid_slots(n)), cbox0(n), cbox1(n);
  std::vector<std::uint32_t> keys(n), ids(n), sorted(n), order(n), cid0(n), cid1(n), nn(n), kept_list(n - 1), rank(n - 1),
      depth(1);
  std::vector<std::uint8_t> kept(n - 1);
  std::vector<std::uint64_t> counts(2), words(std::size_t{n} + 1);
  std::vector<ploc_tail_state> tail(1);
  std::vector<ploc_node> nodes(all);
  std::vector<collapse_entry> plan(n - 1);
  std::vector<ploc_shape> shape(n - 1);
  std::vector<ploc_place> place(all);
  bvh out;
  out.binary.nodes.resize(all);
  out.binary.prims.resize(n);
  if (s.pairs) out.pairs.nodes.resize(n), out.pairs.triangles.resize(n);
  if (s.wide) out.wide.prims.resize(n), out.wide.triangles.resize(n);
  if (s.cw) out.cw.triangles.resize(n);
  ploc_buffers b;
  b.triangles = triangles.data(), b.prim_box = prim_box.data(), b.centroid = centroid.data(), b.keys = keys.data();
  b.ids = ids.data(), b.sorted_keys = sorted.data(), b.order = order.data(), b.nodes = nodes.data(), b.plan = plan.data();
  b.place = place.data(), b.cid[0] = cid0.data(), b.cid[1] = cid1.data(), b.cbox[0] = cbox0.data(), b.cbox[1] = cbox1.data();
  b.nn = nn.data(), b.words = words.data(), b.tail = tail.data(), b.n = n;
  b.shape = shape.data();
  b.counts = counts.data(), b.depth = depth.data(), b.kept = kept.data(), b.kept_list = kept_list.data(), b.rank = rank.data();
  b.bin_nodes = out.binary.nodes.data(), b.prims = out.binary.prims.data();
  if (s.pairs) b.pairs = out.pairs.nodes.data(), b.leaf_triangles = out.pairs.triangles.data();
  if (s.wide) b.wide_prims = out.wide.prims.data(), b.wide_triangles = out.wide.triangles.data();
  if (s.cw) b.cw_triangles = out.cw.triangles.data();
  cpu_backend backend(out.wide.nodes, out.cw.nodes);
  const ploc_result r = ploc_run(exec::cpu{}, backend, b, n, s, t);
  t.with_copies_ms = t.device_ms;
  finish_ploc(out, r, s);
  return out;
}

}  // namespace

ploc_settings ploc_settings_of(const bvh_build_options& options, std::uint32_t radius, std::size_t triangles) {
  if (options.max_leaf < 1 || options.max_leaf > cw_leaf_max)
    throw error("BVH (ploc): max_leaf = " + std::to_string(options.max_leaf) + " is out of range (1 .. " + std::to_string(cw_leaf_max) + ")");
  if (radius < 1 || radius > 256) throw error("BVH (ploc): the search radius " + std::to_string(radius) + " is out of range (1 .. 256)");
  if (!(options.traversal_cost > 0)) throw error("BVH (ploc): the node cost must be positive");
  if (options.split_budget > 0) throw error("BVH (ploc): reference splits (split_budget) are the SAH builder's alone");
  if (triangles >= (std::size_t{1} << 31)) throw error("BVH: too many triangles (" + std::to_string(triangles) + ")");
  ploc_settings s;
  s.max_leaf = options.max_leaf, s.radius = radius, s.traversal_cost = options.traversal_cost;
  s.pairs = options.pairs, s.wide = options.wide, s.cw = options.wide && options.cw;
  return s;
}

void finish_ploc(bvh& out, const ploc_result& r, const ploc_settings& s) {
  out.binary.nodes.resize(r.bin_nodes);
  out.pairs.nodes.resize(s.pairs ? r.pairs : 0);
  if (s.wide) {
    out.wide.nodes.resize(r.wide_nodes);
    out.wide.depth = r.wide_depth;
    encode_leaf_blocks(out.wide);
  }
  if (s.cw) out.cw.nodes.resize(r.wide_nodes), out.cw.depth = r.wide_depth;
  bvh_stats& st = out.stats;
  st.nodes = out.binary.nodes.size();
  st.max_depth = r.depth;
  st.references = out.binary.prims.size();
  for (const bvh_node& node : out.binary.nodes)
    if (node.leaf()) ++st.leaves, st.max_leaf_size = std::max<std::size_t>(st.max_leaf_size, node.count);
}

bvh build_ploc(std::span<const triangle> triangles, const bvh_build_options& options, lbvh_device device, ploc_timing* timing,
               std::uint32_t radius) {
  const ploc_settings s = ploc_settings_of(options, radius, triangles.size());
  const auto t0 = clock_type::now();
  ploc_timing t;
  bvh out;
  if (triangles.size() == 1) {  // one leaf; the layouts as every builder makes them
    const triangle& tri = triangles[0];
    out.binary.nodes = {bvh_node{{min(min(tri.v0, tri.v1), tri.v2), max(max(tri.v0, tri.v1), tri.v2)}, 0, 1}};
    out.binary.prims = {0};
    out.stats.nodes = out.stats.leaves = out.stats.max_depth = out.stats.max_leaf_size = out.stats.references = 1;
    finish_bvh(out, triangles, options);
  } else if (triangles.size() > 1) {
    out = device == lbvh_device::cuda ? device_tree(triangles, options, &t, radius).to_host(&t) : build_cpu(triangles, s, t);
  }
  out.stats.seconds = ms_since(t0) * 1e-3;
  if (timing) *timing = t;
  return out;
}

}  // namespace sieve::render
