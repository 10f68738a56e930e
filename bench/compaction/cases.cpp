#include "cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

namespace sieve::bench {

item_type item_type_named(const std::string& name) {
  static const std::vector<item_type> known = {{"u8", 1},    {"u16", 2},    {"u32", 4},      {"u64", 8},
                                               {"float", 4}, {"double", 8}, {"struct32", 32}};
  for (const auto& t : known)
    if (t.name == name) return t;
  throw error("unknown item type '" + name + "'; types: u8, u16, u32, u64, float, double, struct32");
}

form form_named(const std::string& name) {
  if (name == "removal") return form::removal_list;
  if (name == "flags") return form::byte_flags;
  if (name == "mask") return form::bit_mask;
  throw error("unknown form '" + name + "'; forms: removal, flags, mask");
}

std::string form_short_name(form f) {
  switch (f) {
    case form::removal_list: return "removal";
    case form::byte_flags: return "flags";
    case form::bit_mask: return "mask";
    case form::predicate: return "predicate";
  }
  return "?";
}

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

// k distinct values from [lo, hi), in random order (Floyd's sampling for small k, a shuffle otherwise).
void sample_distinct(std::mt19937_64& rng, std::size_t lo, std::size_t hi, std::size_t k, std::vector<std::uint32_t>& out) {
  const std::size_t range = hi - lo;
  if (k * 4 >= range) {
    std::vector<std::uint32_t> all(range);
    std::iota(all.begin(), all.end(), static_cast<std::uint32_t>(lo));
    for (std::size_t i = 0; i < k; ++i) std::swap(all[i], all[i + rng() % (range - i)]);
    out.insert(out.end(), all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k));
    return;
  }
  std::vector<std::uint64_t> seen((range + 63) / 64, 0);
  for (std::size_t j = range - k; j < range; ++j) {
    std::size_t t = rng() % (j + 1);
    if (seen[t / 64] >> (t % 64) & 1) t = j;
    seen[t / 64] |= std::uint64_t{1} << (t % 64);
    out.push_back(static_cast<std::uint32_t>(lo + t));
  }
}

// Kept items for the select forms: exactly round(fraction * n), laid out per distribution.
std::vector<std::uint8_t> make_keep(std::mt19937_64& rng, std::size_t n, std::size_t m, const std::string& d) {
  std::vector<std::uint8_t> keep(n, 0);
  if (d == "uniform") {
    std::vector<std::uint32_t> idx;
    if (m * 2 <= n) {
      sample_distinct(rng, 0, n, m, idx);
      for (auto i : idx) keep[i] = 1;
    } else {
      std::fill(keep.begin(), keep.end(), 1);
      sample_distinct(rng, 0, n, n - m, idx);
      for (auto i : idx) keep[i] = 0;
    }
    return keep;
  }
  const std::size_t runs = d == "cluster" ? 1 : 32;
  // `runs` runs of about m / runs kept items, each at a random place in its own n / runs window.
  const std::size_t window = n / runs;
  for (std::size_t r = 0; r < runs; ++r) {
    const std::size_t len = m / runs + (r < m % runs ? 1 : 0);
    const std::size_t base = r * window, room = (r + 1 == runs ? n - base : window);
    const std::size_t start = base + (room > len ? rng() % (room - len + 1) : 0);
    std::fill(keep.begin() + static_cast<std::ptrdiff_t>(start), keep.begin() + static_cast<std::ptrdiff_t>(start + len), 1);
  }
  return keep;
}

}  // namespace

case_inputs make_inputs(const bench_case& c, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  case_inputs in;
  const std::size_t n = c.n, w = c.type.width;
  in.items.resize(n * w);
  // Row i holds bytes of a mix of i: distinct rows for wide types, collisions only where the width forces them.
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ULL;
    for (std::size_t b = 0; b < w; b += 8) {
      x ^= x >> 31;
      x *= 0xBF58476D1CE4E5B9ULL;
      std::memcpy(&in.items[i * w + b], &x, std::min<std::size_t>(8, w - b));
    }
  }
  std::vector<std::uint8_t> keep;
  const auto count = static_cast<std::size_t>(std::llround(c.fraction * static_cast<double>(n)));
  if (c.f == form::removal_list) {
    const std::size_t k = std::min(count, n), z = n - k;
    if (c.distribution == "uniform") {
      sample_distinct(rng, 0, n, k, in.removals);
    } else {
      const double r = std::stoi(c.distribution.substr(1)) / 100.0;
      const std::size_t inside = std::min<std::size_t>(static_cast<std::size_t>(std::llround(r * k)), k);
      const std::size_t outside = std::min(k - inside, z);
      sample_distinct(rng, z, n, k - outside, in.removals);
      sample_distinct(rng, 0, z, outside, in.removals);
      std::shuffle(in.removals.begin(), in.removals.end(), rng);
    }
    keep.assign(n, 1);
    for (auto i : in.removals) keep[i] = 0;
  } else {
    keep = make_keep(rng, n, std::min(count, n), c.distribution);
    if (c.f == form::byte_flags) in.flags = keep;
    in.mask.assign((n + 31) / 32, 0);
    if (c.f == form::bit_mask)
      for (std::size_t i = 0; i < n; ++i) in.mask[i / 32] |= std::uint32_t{keep[i]} << (i % 32);
    else
      in.mask.clear();
  }
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i]) in.expected.insert(in.expected.end(), in.items.begin() + static_cast<std::ptrdiff_t>(i * w),
                                    in.items.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  in.kept = in.expected.size() / (w ? w : 1);
  return in;
}

namespace {
// An order-independent digest of rows: sums of two 64-bit mixes of each row.
std::pair<std::uint64_t, std::uint64_t> multiset_digest(std::span<const std::byte> rows, std::size_t w) {
  std::uint64_t a = 0, b = 0;
  for (std::size_t i = 0; i + w <= rows.size(); i += w) {
    std::uint64_t h1 = 0x243F6A8885A308D3ULL, h2 = 0x13198A2E03707344ULL;
    for (std::size_t j = 0; j < w; ++j) {
      const auto v = static_cast<std::uint64_t>(rows[i + j]);
      h1 = (h1 ^ v) * 0x100000001B3ULL;
      h2 = (h2 + v + 1) * 0x9E3779B97F4A7C15ULL;
      h2 ^= h2 >> 29;
    }
    h1 ^= h1 >> 33;
    h1 *= 0xFF51AFD7ED558CCDULL;
    h1 ^= h1 >> 33;
    a += h1;
    b += h2;
  }
  return {a, b};
}
}  // namespace

std::string check_output(const case_inputs& in, std::span<const std::byte> out, std::size_t m, std::uint32_t w,
                         bool stable) {
  if (m != in.kept) return "kept " + std::to_string(m) + " items, expected " + std::to_string(in.kept);
  const auto got = out.first(m * w);
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
