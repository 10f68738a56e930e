// The compaction benchmark's digest check (bench/compaction/digest.hpp, cases.cpp): what validates a
// 1 GiB point on the GPU without copying its output back.
#include "compaction/cases.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace sieve::bench {
namespace {

std::vector<std::byte> rows_of(std::initializer_list<std::uint64_t> values) {
  std::vector<std::byte> rows(values.size() * 8);
  std::size_t i = 0;
  for (std::uint64_t v : values) std::memcpy(&rows[8 * i++], &v, 8);
  return rows;
}

TEST(BenchDigest, RowHashSeesEveryByteAndTheWidth) {
  unsigned char row[32] = {};
  const std::uint64_t h = row_hash(row, 32);
  for (int b = 0; b < 32; ++b) {
    row[b] = 1;
    EXPECT_NE(row_hash(row, 32), h) << "byte " << b;
    row[b] = 0;
  }
  EXPECT_NE(row_hash(row, 4), row_hash(row, 8));
}

TEST(BenchDigest, SwapChangesOnlyTheOrderedSum) {
  const auto rows = rows_of({11, 22, 33, 44});
  const auto swapped = rows_of({11, 33, 22, 44});
  const row_digest a = digest_rows(rows, 8), b = digest_rows(swapped, 8);
  EXPECT_NE(a.ordered, b.ordered);
  EXPECT_EQ(a.unordered, b.unordered);
}

TEST(BenchDigest, ChangedByteDuplicateOrLossChangesBothSums) {
  const auto rows = rows_of({11, 22, 33, 44});
  for (const auto& other : {rows_of({11, 22, 33, 45}), rows_of({11, 22, 22, 44}), rows_of({11, 22, 33})}) {
    const row_digest a = digest_rows(rows, 8), b = digest_rows(other, 8);
    EXPECT_NE(a.ordered, b.ordered);
    EXPECT_NE(a.unordered, b.unordered);
  }
  // One byte of a 1-byte row.
  const std::vector<std::byte> bytes = {std::byte{1}, std::byte{2}, std::byte{3}};
  const std::vector<std::byte> changed = {std::byte{1}, std::byte{2}, std::byte{4}};
  EXPECT_NE(digest_rows(bytes, 1).ordered, digest_rows(changed, 1).ordered);
  EXPECT_NE(digest_rows(bytes, 1).unordered, digest_rows(changed, 1).unordered);
}

bench_case point(form f, const std::string& type, std::size_t n, double fraction, const std::string& distribution) {
  return {backend::cuda, "cub", f, item_type_named(type), n, fraction, distribution, false};
}

// make_inputs computes the expected digest block by block without building the rows; it must equal
// the digest of the rows built the plain way.
TEST(BenchDigest, ExpectedDigestMatchesTheKeptRows) {
  for (const auto& c : {point(form::byte_flags, "u8", 300001, 0.37, "uniform"),
                        point(form::byte_flags, "u32", 1 << 18, 0.93, "uniform"),
                        point(form::bit_mask, "u16", 200003, 0.5, "cluster"),
                        point(form::bit_mask, "u64", 1 << 17, 0.05, "clusters32"),
                        point(form::byte_flags, "struct32", 4099, 0.61, "clusters32"),
                        point(form::removal_list, "u32", 1 << 18, 0.2, "r50"),
                        point(form::byte_flags, "double", 1000, 0.0, "uniform")}) {
    const case_inputs in = make_inputs(c, 7);
    ASSERT_TRUE(in.exact);
    EXPECT_EQ(in.expected.size(), in.kept * c.type.width);
    EXPECT_EQ(in.digest, digest_rows(in.expected, c.type.width)) << c.type.name << " " << form_short_name(c.f);
  }
}

// The inputs made from the previous point's buffers are the inputs made afresh.
TEST(BenchDigest, RecycledBuffersGiveTheSameInputs) {
  const auto a = point(form::bit_mask, "u16", 1 << 16, 0.3, "uniform"), b = point(form::bit_mask, "u16", 1 << 16, 0.8, "cluster");
  const case_inputs fresh = make_inputs(b, 3), recycled = make_inputs(b, 3, make_inputs(a, 3));
  EXPECT_EQ(fresh.items, recycled.items);
  EXPECT_EQ(fresh.mask, recycled.mask);
  EXPECT_EQ(fresh.keep, recycled.keep);
  EXPECT_EQ(fresh.expected, recycled.expected);
  EXPECT_EQ(fresh.digest, recycled.digest);
  const auto f = point(form::byte_flags, "u8", 1 << 17, 0.5, "uniform");
  const case_inputs flags_fresh = make_inputs(f, 3), flags_recycled = make_inputs(f, 3, make_inputs(b, 3));
  EXPECT_EQ(flags_fresh.items, flags_recycled.items);
  EXPECT_EQ(flags_fresh.flags, flags_recycled.flags);
  EXPECT_EQ(flags_fresh.digest, flags_recycled.digest);
}

// check_output by digest (how a large point is checked): right rows pass, rows swapped pass only
// where order does not matter, a changed byte or a wrong count fails.
TEST(BenchDigest, CheckOutputByDigest) {
  const auto c = point(form::byte_flags, "u32", 1 << 16, 0.5, "uniform");
  case_inputs in = make_inputs(c, 1);
  std::vector<std::byte> out = in.expected;
  in.exact = false;
  in.expected.clear();
  const std::uint32_t w = 4;
  EXPECT_EQ(check_output(in, out, in.kept, w, true), "");
  EXPECT_EQ(check_output(in, out, in.kept, w, false), "");

  std::vector<std::byte> swapped = out;
  std::swap_ranges(swapped.begin() + 10 * w, swapped.begin() + 11 * w, swapped.begin() + 500 * w);
  EXPECT_NE(check_output(in, swapped, in.kept, w, true), "");
  EXPECT_EQ(check_output(in, swapped, in.kept, w, false), "");

  std::vector<std::byte> changed = out;
  changed[123] ^= std::byte{0x10};
  EXPECT_NE(check_output(in, changed, in.kept, w, true), "");
  EXPECT_NE(check_output(in, changed, in.kept, w, false), "");

  EXPECT_NE(check_output(in, out, in.kept - 1, w, false), "");
  EXPECT_NE(check_digest(in, digest_rows(out, w), in.kept + 1, false), "");
}

}  // namespace
}  // namespace sieve::bench
