// The CUDA side of the multisplit benchmark: device buffers for one point, the library's designs and
// CUB's baselines as calls of one shape, validation against the reference (the index column compared
// slot by slot, or bucket by bucket as sets for unstable algorithms; a record's other words checked
// on the device), then CUDA-event or CUDA-graph timing.
#include "../compaction/measure.hpp"
#include "measure.hpp"

#include <sieve/compaction/cuda_check.hpp>
#include <sieve/compaction/cuda_device.hpp>
#include <sieve/compaction/multisplit.hpp>

#include <cub/device/device_partition.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <array>
#include <bit>
#include <functional>
#include <memory>

namespace sieve::bench {
namespace {

constexpr std::array<std::uint32_t, 4> path_widths = {4, 28, 12, 4};

template <class T>
struct device_buffer {
  T* data = nullptr;
  explicit device_buffer(std::size_t n) { SIEVE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data), std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~device_buffer() { cudaFree(data); }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
};

// Word w of item i: scale * i + w, written column by column (the items: scale 16; an index: 1).
__global__ void fill_items(std::uint32_t* col, std::uint32_t words, std::uint32_t first_word, std::uint32_t scale,
                           std::size_t n) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n * words; k += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t i = k / words;
    col[k] = static_cast<std::uint32_t>(scale * i + first_word + k % words);
  }
}

// Slots whose words are not those of the item the index column names.
__global__ void count_torn(const std::uint32_t* const* cols, const std::uint32_t* words, unsigned columns,
                           std::size_t n, unsigned long long* torn) {
  for (std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; j < n; j += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint32_t base = cols[0][j];
    std::uint32_t w0 = 0;
    for (unsigned c = 0; c < columns; ++c) {
      for (std::uint32_t w = 0; w < words[c]; ++w)
        if (cols[c][j * words[c] + w] != base + w0 + w) atomicAdd(torn, 1ULL);
      w0 += words[c];
    }
  }
}

// out[j] = in[order[j]] for the path record's columns, 4-byte words.
__global__ void gather_words(const std::uint32_t* const* in, std::uint32_t* const* out, const std::uint32_t* words,
                             unsigned columns, const std::uint32_t* order, std::size_t n) {
  for (std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; j < n; j += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t from = order[j];
    for (unsigned c = 0; c < columns; ++c)
      for (std::uint32_t w = 0; w < words[c]; ++w) out[c][j * words[c] + w] = in[c][from * words[c] + w];
  }
}

struct bucket_is {
  const std::uint8_t* ids;
  std::uint8_t b;
  __device__ bool operator()(std::uint32_t index) const { return ids[index] == b; }
};

// Everything one point needs on the device.
struct point_buffers {
  std::size_t n;
  unsigned columns;
  std::vector<std::uint32_t> words;
  device_buffer<std::uint8_t> ids, sorted_ids;
  std::vector<std::unique_ptr<device_buffer<std::uint32_t>>> in, out;
  device_buffer<std::uint32_t> index, sorted_index, parts;
  device_buffer<std::uint32_t*> in_ptrs, out_ptrs;
  device_buffer<std::uint32_t> d_words;
  device_buffer<std::uint64_t> offsets;
  device_buffer<unsigned long long> torn;
  device_buffer<int> selected;

  point_buffers(const multisplit_point& p, const std::vector<std::uint8_t>& host_ids)
      : n(p.n), columns(p.items == "path" ? 4 : 1), ids(n), sorted_ids(n), index(n), sorted_index(n),
        parts(p.buckets <= 3 ? 3 * n : 1), in_ptrs(4), out_ptrs(4), d_words(4), offsets(257), torn(1), selected(2) {
    std::vector<std::uint32_t*> ip, op;
    std::uint32_t first = 0;
    for (unsigned c = 0; c < columns; ++c) {
      const std::uint32_t w = columns == 1 ? 1 : path_widths[c] / 4;
      words.push_back(w);
      in.push_back(std::make_unique<device_buffer<std::uint32_t>>(n * w));
      out.push_back(std::make_unique<device_buffer<std::uint32_t>>(n * w));
      if (n) fill_items<<<1024, 256>>>(in.back()->data, w, first, 16, n);
      first += w;
      ip.push_back(in.back()->data);
      op.push_back(out.back()->data);
    }
    SIEVE_CUDA_CHECK(cudaMemcpy(in_ptrs.data, ip.data(), columns * sizeof(void*), cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(out_ptrs.data, op.data(), columns * sizeof(void*), cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(d_words.data, words.data(), columns * 4, cudaMemcpyHostToDevice));
    SIEVE_CUDA_CHECK(cudaMemcpy(ids.data, host_ids.data(), n, cudaMemcpyHostToDevice));
    if (n) fill_items<<<1024, 256>>>(index.data, 1, 0, 1, n);
    SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
  }

  record columns_of(bool output) const {
    std::array<column, record::max_columns> cols{};
    for (unsigned c = 0; c < columns; ++c)
      cols[c] = {reinterpret_cast<std::byte*>((output ? out : in)[c]->data), words[c] * 4};
    return record(std::span<const column>(cols.data(), columns), n);
  }
};

// got16: word 0 of the item in each slot (16 * its index). Stable: slot by slot against the reference
// order; unstable: every slot of bucket b holds an item of bucket b, and no item twice.
std::string check_order(const multisplit_measurement& m, const std::vector<std::uint32_t>& got16,
                        const split_reference& want, bool stable, const std::vector<std::uint8_t>& ids) {
  const auto bad = [&](std::size_t j, std::uint32_t got, const std::string& why) {
    return m.algorithm + ": slot " + std::to_string(j) + " holds item " + std::to_string(got) + why;
  };
  if (stable) {
    for (std::size_t j = 0; j < want.order.size(); ++j)
      if (got16[j] / 16 != want.order[j]) return bad(j, got16[j] / 16, ", not " + std::to_string(want.order[j]));
    return "";
  }
  std::vector<bool> seen(want.order.size());
  for (std::size_t b = 0; b + 1 < want.offsets.size(); ++b)
    for (std::size_t j = want.offsets[b]; j < want.offsets[b + 1]; ++j) {
      const std::uint32_t x = got16[j] / 16;
      if (x >= seen.size() || ids[x] != b || seen[x]) return bad(j, x, " (wrong bucket, out of range or twice)");
      seen[x] = true;
    }
  return "";
}

// One algorithm as a call of one shape, and how its output is read back for validation.
struct algorithm_call {
  std::function<void(cudaStream_t)> run;
  std::function<std::string(const multisplit_measurement&)> check;
};

}  // namespace

double multisplit_copy_gbps() { return device_copy_gbps(std::size_t{1} << 30, {2, 10}); }

namespace {

std::string check_words(point_buffers& b) {
  if (b.columns == 1 || b.n == 0) return "";
  SIEVE_CUDA_CHECK(cudaMemset(b.torn.data, 0, 8));
  count_torn<<<1024, 256>>>(b.out_ptrs.data, b.d_words.data, b.columns, b.n, b.torn.data);
  unsigned long long torn = 0;
  SIEVE_CUDA_CHECK(cudaMemcpy(&torn, b.torn.data, 8, cudaMemcpyDeviceToHost));
  return torn ? std::to_string(torn) + " words of the record do not belong to the item in their slot" : "";
}

std::string check_offsets(const point_buffers& b, const split_reference& want) {
  std::vector<std::uint64_t> got(want.offsets.size());
  SIEVE_CUDA_CHECK(cudaMemcpy(got.data(), b.offsets.data, got.size() * 8, cudaMemcpyDeviceToHost));
  for (std::size_t k = 0; k < got.size(); ++k)
    if (got[k] != want.offsets[k])
      return "offset " + std::to_string(k) + " is " + std::to_string(got[k]) + ", not " + std::to_string(want.offsets[k]);
  return "";
}

std::vector<std::uint32_t> host_words(const std::uint32_t* d, std::size_t n) {
  std::vector<std::uint32_t> h(n);
  if (n) SIEVE_CUDA_CHECK(cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost));
  return h;
}

// The library's design `name`: out-of-place, host count, offsets on the device.
algorithm_call library_call(const std::string& name, point_buffers& b, const multisplit_point& p,
                            const split_reference& want, const std::vector<std::uint8_t>& ids, void*& ws,
                            std::size_t& ws_bytes) {
  const record out = b.columns_of(true);
  ws_bytes = cuda::multisplit_workspace_bytes(name, out, p.buckets);
  SIEVE_CUDA_CHECK(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 1)));
  const const_record in = b.columns_of(false);
  const bucket_ids keys{std::span<const std::uint8_t>(b.ids.data, b.n)};
  algorithm_call c;
  c.run = [=, &b](cudaStream_t s) {
    cuda::multisplit_async(name, in, out, keys, p.buckets, b.offsets.data, {ws, ws_bytes}, s, nullptr,
                           options{.checked = false});
  };
  c.check = [&b, &want, &ids, name](const multisplit_measurement& m) {
    std::string e = check_offsets(b, want);
    if (e.empty()) e = check_order(m, host_words(b.out[0]->data, b.n), want, cuda::multisplit_stable(name), ids);
    if (e.empty()) e = check_words(b);
    return e;
  };
  return c;
}

// A record split as an index: the library's design `name` splits the u32 index column (0, 1, ...),
// then the columns are gathered in that order ("ballot_gather": `ballot` and the gather).
algorithm_call index_gather_call(const std::string& name, point_buffers& b, const multisplit_point& p,
                                 const split_reference& want, const std::vector<std::uint8_t>& ids, void*& ws,
                                 std::size_t& ws_bytes) {
  if (b.columns == 1) throw error(name + "_gather: records only (u32 items are their own index)");
  const record sorted(std::span(b.sorted_index.data, b.n));
  ws_bytes = cuda::multisplit_workspace_bytes(name, sorted, p.buckets);
  SIEVE_CUDA_CHECK(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 1)));
  const const_record index(std::span<const std::uint32_t>(b.index.data, b.n));
  const bucket_ids keys{std::span<const std::uint8_t>(b.ids.data, b.n)};
  algorithm_call c;
  c.run = [=, &b](cudaStream_t s) {
    cuda::multisplit_async(name, index, sorted, keys, p.buckets, b.offsets.data, {ws, ws_bytes}, s, nullptr,
                           options{.checked = false});
    if (b.n) gather_words<<<2048, 256, 0, s>>>(b.in_ptrs.data, b.out_ptrs.data, b.d_words.data, b.columns, b.sorted_index.data, b.n);
  };
  c.check = [&b, &want, &ids](const multisplit_measurement& m) {
    std::string e = check_offsets(b, want);
    if (e.empty()) e = check_order(m, host_words(b.out[0]->data, b.n), want, true, ids);
    return e.empty() ? check_words(b) : e;
  };
  return c;
}

// cub::DeviceRadixSort::SortPairs over the bucket bits: of (id, item) for u32 items, of (id, index)
// then a gather for records.
algorithm_call cub_sort_call(point_buffers& b, const multisplit_point& p, const split_reference& want,
                             const std::vector<std::uint8_t>& ids, void*& ws, std::size_t& ws_bytes) {
  const int end_bit = p.buckets <= 1 ? 1 : std::bit_width(p.buckets - 1);
  const int n = static_cast<int>(b.n);
  const bool record = b.columns > 1;
  const std::uint32_t* values_in = record ? b.index.data : b.in[0]->data;
  std::uint32_t* values_out = record ? b.sorted_index.data : b.out[0]->data;
  SIEVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, ws_bytes, b.ids.data, b.sorted_ids.data, values_in,
                                                   values_out, n, 0, end_bit));
  SIEVE_CUDA_CHECK(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 1)));
  algorithm_call c;
  c.run = [=, &b](cudaStream_t s) {
    std::size_t bytes = ws_bytes;
    SIEVE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ws, bytes, b.ids.data, b.sorted_ids.data, values_in, values_out,
                                                     n, 0, end_bit, s));
    if (record && n)
      gather_words<<<2048, 256, 0, s>>>(b.in_ptrs.data, b.out_ptrs.data, b.d_words.data, b.columns, values_out, b.n);
  };
  c.check = [&b, &want, &ids](const multisplit_measurement& m) {
    std::string e = check_order(m, host_words(b.out[0]->data, b.n), want, true, ids);
    return e.empty() ? check_words(b) : e;
  };
  return c;
}

// cub::DevicePartition::If, three-way: bucket 0, bucket 1, the rest, into three arrays.
algorithm_call cub_partition_call(point_buffers& b, const multisplit_point& p, const split_reference& want,
                                  const std::vector<std::uint8_t>& ids, void*& ws, std::size_t& ws_bytes) {
  if (p.buckets > 3 || b.columns > 1) throw error("cub_partition: u32 items and at most 3 buckets");
  const int n = static_cast<int>(b.n);
  const bucket_is first{b.ids.data, 0}, second{b.ids.data, 1};
  std::uint32_t* part = b.parts.data;
  SIEVE_CUDA_CHECK(cub::DevicePartition::If(nullptr, ws_bytes, b.index.data, part, part + b.n, part + 2 * b.n,
                                            b.selected.data, n, first, second));
  SIEVE_CUDA_CHECK(cudaMalloc(&ws, std::max<std::size_t>(ws_bytes, 1)));
  algorithm_call c;
  c.run = [=, &b](cudaStream_t s) {
    std::size_t bytes = ws_bytes;
    SIEVE_CUDA_CHECK(cub::DevicePartition::If(ws, bytes, b.index.data, part, part + b.n, part + 2 * b.n,
                                              b.selected.data, n, first, second, s));
  };
  c.check = [&b, &want, &ids, part](const multisplit_measurement& m) {
    std::vector<std::uint32_t> got;
    for (std::size_t q = 0; q < 3; ++q) {
      const std::size_t count = q + 1 < want.offsets.size() ? want.offsets[q + 1] - want.offsets[q] : 0;
      const auto h = host_words(part + q * b.n, count);
      for (auto x : h) got.push_back(16 * x);
    }
    return check_order(m, got, want, false, ids);
  };
  return c;
}

stats time_events(const algorithm_call& c, multisplit_plan plan) {
  cuda::event_timer t;
  std::vector<double> ms;
  for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
    t.start();
    c.run(nullptr);
    const double e = t.stop_ms();
    if (r >= plan.warmup) ms.push_back(e);
  }
  return summarize(ms);
}

// The call captured once; each sample is the mean of `replays` launches of the graph.
stats time_graph(const algorithm_call& c, multisplit_plan plan) {
  constexpr int replays = 100;
  cudaStream_t s;
  SIEVE_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t g;
  SIEVE_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  c.run(s);
  SIEVE_CUDA_CHECK(cudaStreamEndCapture(s, &g));
  cudaGraphExec_t exec;
  SIEVE_CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  cuda::event_timer t(s);
  std::vector<double> ms;
  for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
    t.start();
    for (int k = 0; k < replays; ++k) SIEVE_CUDA_CHECK(cudaGraphLaunch(exec, s));
    const double e = t.stop_ms() / replays;
    if (r >= plan.warmup) ms.push_back(e);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  return summarize(ms);
}

}  // namespace

std::vector<multisplit_measurement> measure_multisplit_cuda(const std::vector<std::string>& algorithms,
                                                            const multisplit_point& p,
                                                            const std::vector<std::uint8_t>& host_ids,
                                                            const split_reference& want, multisplit_plan plan) {
  point_buffers b(p, host_ids);
  std::vector<multisplit_measurement> out;
  for (const auto& a : algorithms) {
    multisplit_measurement m;
    m.algorithm = a;
    m.timing = plan.graph ? "graph" : "events";
    void* ws = nullptr;
    try {
      const bool gathers = a.size() > 7 && a.ends_with("_gather");
      algorithm_call c = a == "cub_sort"        ? cub_sort_call(b, p, want, host_ids, ws, m.workspace_bytes)
                         : a == "cub_partition" ? cub_partition_call(b, p, want, host_ids, ws, m.workspace_bytes)
                         : gathers ? index_gather_call(a.substr(0, a.size() - 7), b, p, want, host_ids, ws, m.workspace_bytes)
                                   : library_call(a, b, p, want, host_ids, ws, m.workspace_bytes);
      for (unsigned k = 0; k < b.columns; ++k)
        SIEVE_CUDA_CHECK(cudaMemset(b.out[k]->data, 0xA5, std::max<std::size_t>(b.n, 1) * 4 * b.words[k]));
      SIEVE_CUDA_CHECK(cudaMemset(b.offsets.data, 0xA5, 257 * 8));
      c.run(nullptr);
      SIEVE_CUDA_CHECK(cudaDeviceSynchronize());
      m.error = c.check(m);
      m.validated = m.error.empty();
      if (m.validated) m.ms = plan.graph ? time_graph(c, plan) : time_events(c, plan);
    } catch (const std::exception& e) {
      m.validated = false;
      m.error = e.what();
    }
    cudaFree(ws);
    out.push_back(m);
  }
  return out;
}

}  // namespace sieve::bench
