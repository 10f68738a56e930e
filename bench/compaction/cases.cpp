#include "cases.hpp"

#include <sieve/hash.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

namespace sieve::bench {

item_type item_type_named(const std::string& name) {
  static const std::vector<item_type> known = {{"u8", 1},    {"u16", 2},    {"u32", 4},      {"u64", 8},
                                               {"float", 4}, {"double", 8}, {"struct32", 32},
                                               {"paths48", 48, {4, 28, 12, 4}}};
  for (const auto& t : known)
    if (t.name == name) return t;
  throw error("unknown item type '" + name + "'; types: u8, u16, u32, u64, float, double, struct32, paths48");
}

form form_named(const std::string& name) {
  for (const form f : {form::removal_list, form::byte_flags, form::bit_mask})  // the library's names
    if (short_name(f) == name) return f;
  throw error("unknown form '" + name + "'; forms: removal, flags, mask");
}

std::string form_short_name(form f) { return std::string(short_name(f)); }

void check_distribution(form f, const std::string& d) {
  if (f == form::removal_list) {
    if (d == "uniform") return;
    if (d.size() >= 2 && d[0] == 'r' && std::all_of(d.begin() + 1, d.end(), ::isdigit) && std::stoi(d.substr(1)) <= 100)
      return;
    throw error("distribution '" + d + "' does not fit removal lists; use uniform or r0..r100");
  }
  if (d == "uniform" || d == "cluster" || d == "clusters32") return;
  throw error("distribution '" + d + "' does not fit " + form_short_name(f) + "; use uniform, cluster or clusters32");
}

namespace {


// A pseudo-random bijection of [0, range): a 4-round Feistel network over the smallest even number
// of bits that covers range, walking the cycle until the value falls inside (fewer than 4 steps on
// average). perm(0), perm(1), ... are distinct, in random order, computed independently: k of them
// are k distinct random indices, in parallel and without an n-sized scratch array.
class random_permutation {
 public:
  random_permutation(std::uint64_t range, std::uint64_t seed) : range_(range) {
    while ((std::uint64_t{1} << (2 * half_bits_)) < range) ++half_bits_;
    for (int r = 0; r < 4; ++r) keys_[r] = mix64(seed * 4 + static_cast<std::uint64_t>(r) + 1);
  }
  std::uint64_t operator()(std::uint64_t i) const {
    do i = encrypt(i);
    while (i >= range_);
    return i;
  }

 private:
  std::uint64_t encrypt(std::uint64_t x) const {
    const std::uint64_t mask = (std::uint64_t{1} << half_bits_) - 1;
    std::uint64_t left = x >> half_bits_, right = x & mask;
    for (const std::uint64_t key : keys_) {
      const std::uint64_t next = left ^ (mix64(right ^ key) & mask);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }
  std::uint64_t range_;
  int half_bits_ = 1;
  std::uint64_t keys_[4];
};

template <class F>
void parallel_range(std::size_t n, F&& f, std::size_t grain = std::size_t{1} << 16) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, grain), [&](const auto& r) {
    for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
  });
}

// v[begin, end) = value, in parallel (a 1 GiB fill is 0.1 s on one core).
void parallel_fill(std::vector<std::uint8_t>& v, std::size_t begin, std::size_t end, std::uint8_t value) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end, std::size_t{1} << 20), [&](const auto& r) {
    std::fill(v.begin() + static_cast<std::ptrdiff_t>(r.begin()), v.begin() + static_cast<std::ptrdiff_t>(r.end()), value);
  });
}

// Kept items for the select forms: exactly m, laid out per distribution, written over all of keep.
void make_keep(std::uint64_t seed, std::size_t n, std::size_t m, const std::string& d, std::vector<std::uint8_t>& keep) {
  keep.resize(n);
  if (d == "uniform") {
    const random_permutation perm(n, seed);
    if (m * 2 <= n) {
      parallel_fill(keep, 0, n, 0);
      parallel_range(m, [&](std::size_t j) { keep[perm(j)] = 1; });
    } else {
      parallel_fill(keep, 0, n, 1);
      parallel_range(n - m, [&](std::size_t j) { keep[perm(j)] = 0; });
    }
    return;
  }
  parallel_fill(keep, 0, n, 0);
  std::mt19937_64 rng(seed);
  const std::size_t runs = d == "cluster" ? 1 : 32;
  // `runs` runs of about m / runs kept items, each at a random place in its own n / runs window.
  const std::size_t window = n / runs;
  for (std::size_t r = 0; r < runs; ++r) {
    const std::size_t len = m / runs + (r < m % runs ? 1 : 0);
    const std::size_t base = r * window, room = (r + 1 == runs ? n - base : window);
    const std::size_t start = base + (room > len ? rng() % (room - len + 1) : 0);
    parallel_fill(keep, start, start + len, 1);
  }
}

// The kept rows block by block, in parallel: f(begin, end, j) for each block [begin, end) of the
// items, j being the output position of the block's first kept row. Returns the number kept.
template <class F>
std::size_t for_kept_blocks(std::span<const std::uint8_t> keep, F&& f) {
  constexpr std::size_t block = std::size_t{1} << 16;
  const std::size_t blocks = (keep.size() + block - 1) / block;
  std::vector<std::size_t> first(blocks + 1, 0);
  parallel_range(blocks, [&](std::size_t b) {
    const auto* p = keep.data() + b * block;
    first[b + 1] = static_cast<std::size_t>(
        std::count_if(p, p + std::min(block, keep.size() - b * block), [](std::uint8_t v) { return v != 0; }));
  }, 1);
  std::partial_sum(first.begin(), first.end(), first.begin());
  parallel_range(blocks, [&](std::size_t b) { f(b * block, std::min(keep.size(), (b + 1) * block), first[b]); }, 1);
  return first[blocks];
}

const unsigned char* row_at(std::span<const std::byte> rows, std::size_t i, std::size_t w) {
  return reinterpret_cast<const unsigned char*>(rows.data() + i * w);
}

// The digest of the kept rows of `items`, in input order (the expected output), without building
// them. Returns the number kept.
std::size_t digest_kept(std::span<const std::byte> items, std::size_t w, std::span<const std::uint8_t> keep,
                        row_digest& digest) {
  std::vector<row_digest> per_block((keep.size() + (std::size_t{1} << 16) - 1) >> 16);
  const std::size_t kept = for_kept_blocks(keep, [&](std::size_t begin, std::size_t end, std::size_t j) {
    row_digest d;
    for (std::size_t i = begin; i < end; ++i)
      if (keep[i]) add_row(row_hash(row_at(items, i, w), static_cast<std::uint32_t>(w)), j++, d.ordered, d.unordered);
    per_block[begin >> 16] = d;
  });
  digest = {};
  for (const row_digest& d : per_block) {
    digest.ordered += d.ordered;
    digest.unordered += d.unordered;
  }
  return kept;
}

}  // namespace

case_inputs make_inputs(const bench_case& c, std::uint64_t seed, case_inputs reuse) {
  case_inputs in;
  const std::size_t n = c.n, w = c.type.width;
  in.n = n;
  in.width = c.type.width;
  // Row i holds bytes of a mix of i: distinct rows for wide types, collisions only where the width forces them.
  if (reuse.n == n && reuse.width == w && reuse.items.size() == n * w) {
    in.items = std::move(reuse.items);
  } else {
    reuse.items = {};  // freed before the new rows are allocated
    in.items.resize(n * w);
    parallel_range(n, [&](std::size_t i) {
      std::uint64_t x = mix64(i + 1);
      for (std::size_t b = 0; b < w; b += 8) {
        std::memcpy(&in.items[i * w + b], &x, std::min<std::size_t>(8, w - b));
        x = mix64(x);
      }
    });
  }
  // The selection's bytes go to the flags for that form, to `keep` otherwise, in recycled memory.
  std::vector<std::uint8_t>& keep = c.f == form::byte_flags ? in.flags : in.keep;
  keep = std::move(reuse.flags.capacity() >= reuse.keep.capacity() ? reuse.flags : reuse.keep);
  const auto count = std::min<std::size_t>(static_cast<std::size_t>(std::llround(c.fraction * static_cast<double>(n))), n);
  if (c.f == form::removal_list) {
    const std::size_t k = count, z = n - k;
    in.removals = std::move(reuse.removals);
    in.removals.resize(k);
    if (c.distribution == "uniform") {
      const random_permutation perm(n, seed);
      parallel_range(k, [&](std::size_t j) { in.removals[j] = static_cast<std::uint32_t>(perm(j)); });
    } else {
      // r % of the k indices inside the red zone [z, n), as far as the z slots below it allow.
      const double r = std::stoi(c.distribution.substr(1)) / 100.0;
      const std::size_t outside = std::min(z, k - static_cast<std::size_t>(std::llround(r * static_cast<double>(k))));
      const random_permutation order(k, seed), below(z ? z : 1, seed + 1), zone(k, seed + 2);
      parallel_range(k, [&](std::size_t j) {
        const std::uint64_t q = order(j);
        in.removals[j] = static_cast<std::uint32_t>(q < outside ? below(q) : z + zone(q - outside));
      });
    }
    keep.resize(n);
    parallel_fill(keep, 0, n, 1);
    parallel_range(k, [&](std::size_t j) { keep[in.removals[j]] = 0; });
  } else {
    make_keep(seed, n, count, c.distribution, keep);
    if (c.f == form::bit_mask) {
      in.mask = std::move(reuse.mask);
      in.mask.resize((n + 31) / 32);
      parallel_range(in.mask.size(), [&](std::size_t wd) {
        std::uint32_t bits = 0;
        for (std::size_t b = 0; b < 32 && wd * 32 + b < n; ++b) bits |= std::uint32_t{keep[wd * 32 + b]} << b;
        in.mask[wd] = bits;
      }, std::size_t{1} << 12);
    }
  }
  in.exact = c.where == backend::cpu || n * w <= exact_check_bytes;
  in.kept = c.where == backend::cuda ? digest_kept(in.items, w, keep, in.digest)
                                     : for_kept_blocks(keep, [](std::size_t, std::size_t, std::size_t) {});
  if (in.exact) {
    in.expected.resize(in.kept * w);
    for_kept_blocks(keep, [&](std::size_t begin, std::size_t end, std::size_t j) {
      for (std::size_t i = begin; i < end; ++i)
        if (keep[i]) std::memcpy(&in.expected[w * j++], &in.items[i * w], w);
    });
  }
  return in;
}

row_digest digest_rows(std::span<const std::byte> rows, std::uint32_t w) {
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, rows.size() / w, 1 << 16), row_digest{},
      [&](const tbb::blocked_range<std::size_t>& r, row_digest d) {
        for (std::size_t j = r.begin(); j != r.end(); ++j) add_row(row_hash(row_at(rows, j, w), w), j, d.ordered, d.unordered);
        return d;
      },
      [](row_digest a, row_digest b) { return row_digest{a.ordered + b.ordered, a.unordered + b.unordered}; });
}

std::string check_digest(const case_inputs& in, const row_digest& got, std::size_t m, bool stable) {
  if (m != in.kept) return "kept " + std::to_string(m) + " items, expected " + std::to_string(in.kept);
  if (got.unordered != in.digest.unordered) return "the kept items are not the expected multiset (checksum)";
  if (stable && got.ordered != in.digest.ordered)
    return "the kept items are the expected multiset but not in the stable order (checksum)";
  return "";
}

namespace {
// An order-independent digest of rows: sums of two 64-bit mixes of each row.
std::pair<std::uint64_t, std::uint64_t> multiset_digest(std::span<const std::byte> rows, std::size_t w) {
  using digest = std::pair<std::uint64_t, std::uint64_t>;
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, rows.size() / w, 1 << 16), digest{0, 0},
      [&](const tbb::blocked_range<std::size_t>& r, digest d) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) {
          std::uint64_t h1 = 0x243F6A8885A308D3ULL, h2 = 0x13198A2E03707344ULL;
          for (std::size_t j = 0; j < w; ++j) {
            const auto v = static_cast<std::uint64_t>(rows[i * w + j]);
            h1 = mix64(h1 ^ v);
            h2 = (h2 + v + 1) * 0x9E3779B97F4A7C15ULL;
          }
          d.first += h1;
          d.second += mix64(h2);
        }
        return d;
      },
      [](digest a, digest b) { return digest{a.first + b.first, a.second + b.second}; });
}
}  // namespace

std::string check_output(const case_inputs& in, std::span<const std::byte> out, std::size_t m, std::uint32_t w,
                         bool stable) {
  if (m != in.kept) return "kept " + std::to_string(m) + " items, expected " + std::to_string(in.kept);
  const auto got = out.first(m * w);
  if (!in.exact) return check_digest(in, digest_rows(got, w), m, stable);
  if (stable) {
    if (std::equal(got.begin(), got.end(), in.expected.begin())) return "";
    std::size_t i = 0;
    while (std::memcmp(&got[i * w], &in.expected[i * w], w) == 0) ++i;
    return "item " + std::to_string(i) + " differs from the stable reference";
  }
  if (multiset_digest(got, w) == multiset_digest(in.expected, w)) return "";
  return "the kept items are not the expected multiset";
}

double nominal_bytes(const bench_case& c, std::size_t kept) {
  const double n = static_cast<double>(c.n), w = c.type.width;
  if (c.f == form::removal_list) {
    const double k = n - static_cast<double>(kept);
    return 4 * k + 2 * k * w;
  }
  const double selection = c.f == form::byte_flags ? n : std::ceil(n / 32) * 4;
  return selection + n * w + static_cast<double>(kept) * w;
}

}  // namespace sieve::bench
