// multisplit on the CPU: a stable counting sort by bucket id over blocks of the items (oneTBB).
// One parallel pass counts each block's items per bucket (and, in checked mode, finds the first id
// out of range); an exclusive prefix in (bucket, block) order gives every block its slice of every
// bucket; a second parallel pass moves each block's items in input order, which keeps the split
// stable. In place goes through a copy of the items.
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/multisplit.hpp>

#include "internal/cpu_call.hpp"
#include "internal/multisplit_table.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

namespace sieve {
namespace {

constexpr std::size_t block = 1 << 15;
constexpr std::size_t no_item = std::numeric_limits<std::size_t>::max();

template <class Key>
void split(const record& in, const record& out, Key key, unsigned buckets, std::span<std::uint64_t> offsets,
           bool checked) {
  const std::size_t n = in.size();
  const std::size_t blocks = (n + block - 1) / block;
  const auto bin = [buckets](unsigned id) { return detail::multisplit_bin(id, buckets); };
  std::vector<std::array<std::size_t, multisplit_max_buckets + 1>> count(blocks);
  std::vector<std::size_t> first_bad(blocks, no_item);
  const auto range = tbb::blocked_range<std::size_t>(0, blocks, 1);
  tbb::parallel_for(range, [&](const auto& r) {
    for (std::size_t b = r.begin(); b != r.end(); ++b) {
      auto& c = count[b];
      std::fill(c.begin(), c.begin() + buckets + 1, 0);
      for (std::size_t i = b * block, e = std::min(n, i + block); i < e; ++i) {
        const unsigned id = key(i);
        if (id >= buckets && first_bad[b] == no_item) first_bad[b] = i;
        ++c[bin(id)];
      }
    }
  });
  if (checked)
    for (std::size_t b = 0; b < blocks; ++b)
      if (first_bad[b] != no_item)
        throw error("multisplit: item " + std::to_string(first_bad[b]) + " has bucket id " +
                    std::to_string(key(first_bad[b])) + ", not below " + std::to_string(buckets));
  std::size_t sum = 0;
  for (unsigned d = 0; d <= buckets; ++d) {
    if (d < buckets) offsets[d] = sum;
    for (std::size_t b = 0; b < blocks; ++b) sum += std::exchange(count[b][d], sum);
  }
  offsets[buckets] = count.empty() ? 0 : count[0][buckets];  // the end of the last bucket
  detail::with_mover(in, out, [&](auto move) {
    tbb::parallel_for(range, [&](const auto& r) {
      for (std::size_t b = r.begin(); b != r.end(); ++b) {
        auto& next = count[b];
        for (std::size_t i = b * block, e = std::min(n, i + block); i < e; ++i) move(next[bin(key(i))]++, i);
      }
    });
  });
}

// The items' bytes, column by column, for the in-place form.
struct record_copy {
  std::vector<std::vector<std::byte>> bytes;
  record view;
  explicit record_copy(const record& r) {
    std::array<column, record::max_columns> cols{};
    for (std::size_t c = 0; c < r.columns(); ++c) {
      bytes.emplace_back(r[c].data, r[c].data + r.size() * r[c].width);
      cols[c] = {bytes.back().data(), r[c].width};
    }
    view = record(std::span<const column>(cols.data(), r.columns()), r.size());
  }
};

template <class Key>
void split_out_of_place(const const_record& in, const record& out, Key key, std::size_t key_count, unsigned buckets,
                        std::span<std::uint64_t> offsets, const options& opt) {
  detail::validate_multisplit(in, out, false, key_count, buckets, offsets.size());
  split(detail::as_record(in), out, key, buckets, offsets, opt.checked.value_or(checked_default()));
}

template <class Key>
void split_in_place(const record& items, Key key, std::size_t key_count, unsigned buckets,
                    std::span<std::uint64_t> offsets, const options& opt) {
  detail::validate_multisplit(items, items, true, key_count, buckets, offsets.size());
  const record_copy copy(items);
  split(copy.view, items, key, buckets, offsets, opt.checked.value_or(checked_default()));
}

auto id_of(const bucket_ids& k) {
  return [ids = k.ids](std::size_t i) { return unsigned{ids[i]}; };
}
auto id_of(const bucket_of& k) {
  if (!k.f) throw error("multisplit: bucket_of holds no function");
  return [&f = k.f](std::size_t i) { return f(i); };
}

}  // namespace

void multisplit(const_record in, record out, const bucket_ids& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt) {
  split_out_of_place(in, out, id_of(keys), keys.ids.size(), buckets, offsets, opt);
}
void multisplit(const_record in, record out, const bucket_of& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt) {
  split_out_of_place(in, out, id_of(keys), in.size(), buckets, offsets, opt);
}
void multisplit(record items, const bucket_ids& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt) {
  split_in_place(items, id_of(keys), keys.ids.size(), buckets, offsets, opt);
}
void multisplit(record items, const bucket_of& keys, unsigned buckets, std::span<std::uint64_t> offsets,
                const options& opt) {
  split_in_place(items, id_of(keys), items.size(), buckets, offsets, opt);
}

}  // namespace sieve
