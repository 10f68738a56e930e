#include "compact.hpp"

#include "arrays.hpp"

#include <sieve/compaction.hpp>

#include <array>
#include <span>
#include <vector>

namespace sieve::python {
namespace {

[[noreturn]] void fail(const std::string& msg) { throw sieve::error(msg); }

std::string where(const array_view& v) { return v.on_device() ? "CUDA device memory" : "host memory"; }

void same_memory(const array_view& a, const array_view& b, const char* what) {
  if (a.on_device() != b.on_device() || (a.device >= 0 && b.device >= 0 && a.device != b.device))
    fail(std::string(what) + ": in " + where(b) + (b.device >= 0 ? " " + std::to_string(b.device) : "") +
         ", the items are in " + where(a) + (a.device >= 0 ? " " + std::to_string(a.device) : ""));
}

// The columns of a record (at most eight, equal lengths, one memory).
std::vector<array_view> columns(const py::list& arrays, std::uintptr_t stream, const char* what) {
  if (arrays.empty() || arrays.size() > record::max_columns)
    fail(std::string(what) + ": " + std::to_string(arrays.size()) + " columns; a record has 1 to " +
         std::to_string(record::max_columns));
  std::vector<array_view> cols;
  for (py::handle a : arrays) {
    cols.push_back(view_of(a, stream, what));
    const array_view& c = cols.back();
    if (c.items != cols[0].items)
      fail(std::string(what) + ": column " + std::to_string(cols.size() - 1) + " has " + std::to_string(c.items) +
           " items, column 0 has " + std::to_string(cols[0].items));
    same_memory(cols[0], c, what);
  }
  return cols;
}

record as_record(const std::vector<array_view>& cols, std::size_t n) {
  std::array<column, record::max_columns> c{};
  for (std::size_t i = 0; i < cols.size(); ++i) c[i] = {cols[i].data, cols[i].item_bytes};
  return record(std::span<const column>(c.data(), cols.size()), n);
}

// The selection over `keep`, checked against n items (byte flags: exactly n; bit mask: at least
// ceil(n / 32) words; removal list: at most n indices of 32 bits).
selection selection_of(const array_view& k, form f, std::size_t n) {
  const std::string got = std::to_string(k.items) + " " + k.dtype() + (k.item_bytes != k.element_bytes ? " items" : "");
  switch (f) {
    case form::byte_flags:
      if (k.item_bytes != 1 || (k.kind != 'b' && k.kind != 'u'))
        fail("keep: byte flags are a 1-D bool or uint8 array, got " + got);
      if (k.items != n) fail("keep: " + std::to_string(k.items) + " flags for " + std::to_string(n) + " items");
      return byte_flags{{reinterpret_cast<const std::uint8_t*>(k.data), k.items}};
    case form::bit_mask:
      if (k.item_bytes != 4 || (k.kind != 'u' && k.kind != 'i'))
        fail("keep: a bit mask is a 1-D uint32 array of words, got " + got);
      if (k.items < (n + 31) / 32)
        fail("keep: a bit mask of " + std::to_string(k.items) + " words for " + std::to_string(n) + " items (needs " +
             std::to_string((n + 31) / 32) + ")");
      return bit_mask{{reinterpret_cast<const std::uint32_t*>(k.data), k.items}};
    case form::removal_list:
      if (k.item_bytes != 4 || (k.kind != 'u' && k.kind != 'i'))
        fail("indices: a removal list is a 1-D uint32 or int32 array, got " + got);
      if (k.items > n) fail("indices: " + std::to_string(k.items) + " indices to remove from " + std::to_string(n) + " items");
      return removal_list{{reinterpret_cast<std::uint32_t*>(k.data), k.items}};
    default: fail("keep: predicates are taken as byte flags from Python");
  }
}

std::uint64_t* count_pointer(py::handle count, const array_view& items, std::uintptr_t stream, const char* what) {
  const array_view c = view_of(count, stream, what);
  if (c.item_bytes != 8 || (c.kind != 'u' && c.kind != 'i') || c.items < 1)
    fail(std::string(what) + ": one 64-bit integer (int64 or uint64), got " + std::to_string(c.items) + " " + c.dtype());
  same_memory(items, c, what);
  if (!c.writable) fail(std::string(what) + ": the array is read-only");
  return reinterpret_cast<std::uint64_t*>(c.data);
}

py::object compact_on_device(const compact_call& call, const strategy& s, const record& in, const record& out,
                             const selection& keep, const array_view& items, const options& opt) {
  const auto stream = reinterpret_cast<cuda::stream_t>(call.stream);
  const std::size_t bytes = cuda::workspace_bytes(s, in, form_of(keep), call.in_place);
  const array_view ws = view_of(call.scratch(bytes), call.stream, "scratch");
  if (ws.items * ws.item_bytes < bytes) fail("scratch: the workspace is smaller than asked");
  const cuda::workspace w{ws.data, bytes};
  if (call.count.is_none()) {
    if (!call.live_items.is_none() || !call.live_removals.is_none())
      fail("count: live counts on the device need count= (the call then does not wait)");
    std::size_t m = 0;
    {
      py::gil_scoped_release unlocked;
      m = call.in_place ? cuda::compact(s, out, keep, w, stream, opt) : cuda::compact_copy(s, in, out, keep, w, stream, opt);
    }
    return py::int_(m);
  }
  std::uint64_t* d_count = count_pointer(call.count, items, call.stream, "count");
  cuda::device_counts live;
  if (!call.live_items.is_none()) live.items = count_pointer(call.live_items, items, call.stream, "n");
  if (!call.live_removals.is_none()) live.removals = count_pointer(call.live_removals, items, call.stream, "k");
  py::gil_scoped_release unlocked;
  if (live.items) {
    if (call.in_place) cuda::compact_async(s, out, keep, live, d_count, w, stream, opt);
    else cuda::compact_copy_async(s, in, out, keep, live, d_count, w, stream, opt);
  } else if (live.removals) {
    fail("k: a live removal count needs a live item count (n=) too");
  } else if (call.in_place) {
    cuda::compact_async(s, out, keep, d_count, w, stream, opt);
  } else {
    cuda::compact_copy_async(s, in, out, keep, d_count, w, stream, opt);
  }
  return py::none();
}

}  // namespace

py::object compact(const compact_call& call) {
  const strategy s(call.strategy);
  const std::vector<array_view> in_cols = columns(call.items, call.stream, "x");
  const array_view& items = in_cols[0];
  const std::size_t n = items.items;
  const array_view keep_view = view_of(call.keep, call.stream, call.form == 0 ? "indices" : "keep");
  same_memory(items, keep_view, call.form == 0 ? "indices" : "keep");
  const selection keep = selection_of(keep_view, static_cast<form>(call.form), n);
  const std::vector<array_view> out_cols = call.in_place ? in_cols : columns(call.out, call.stream, "out");
  if (out_cols.size() != in_cols.size()) fail("out: " + std::to_string(out_cols.size()) + " columns for " + std::to_string(in_cols.size()));
  const std::size_t room = call.form == 0 ? n - keep_view.items : n;
  for (std::size_t c = 0; c < in_cols.size(); ++c) {
    const array_view& o = out_cols[c];
    if (o.item_bytes != in_cols[c].item_bytes || o.items < room)
      fail("out: column " + std::to_string(c) + " holds " + std::to_string(o.items) + " items of " +
           std::to_string(o.item_bytes) + " bytes; needs " + std::to_string(room) + " of " + std::to_string(in_cols[c].item_bytes));
    if (!o.writable) fail("out: column " + std::to_string(c) + " is read-only");
    same_memory(items, o, "out");
  }
  const record in = as_record(in_cols, n), out = as_record(out_cols, call.in_place ? n : out_cols[0].items);
  options opt;
  opt.checked = call.checked;
  if (items.on_device()) return compact_on_device(call, s, in, out, keep, items, opt);
  if (!call.live_items.is_none() || !call.live_removals.is_none())
    fail("n: live counts on the device are for CUDA arrays; the items are in host memory");
  std::size_t m = 0;
  {
    py::gil_scoped_release unlocked;
    m = call.in_place ? sieve::compact(s, out, keep, opt) : compact_copy(s, in, out, keep, opt);
  }
  if (call.count.is_none()) return py::int_(m);
  *count_pointer(call.count, items, call.stream, "count") = m;
  return py::none();
}

}  // namespace sieve::python
