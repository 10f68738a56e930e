#include "measure.hpp"

#include <algorithm>

#include <chrono>
#include <cstring>

namespace sieve::bench {

measurement measure_cpu(const bench_case& c, const case_inputs& in, timing_plan plan) {
  const std::uint32_t w = c.type.width;
  std::vector<std::byte> items(in.items.size()), out(c.in_place ? 0 : in.items.size());
  std::vector<std::uint32_t> removals(in.removals.size());
  const column item_col{items.data(), w}, out_col{out.data(), w};
  const record items_rec(std::span(&item_col, 1), c.n), out_rec(std::span(&out_col, 1), c.n);

  selection keep = byte_flags{in.flags};
  if (c.f == form::removal_list) keep = removal_list{removals};
  if (c.f == form::bit_mask) keep = bit_mask{in.mask};

  phase_times times;
  options opt;
  opt.checked = plan.checked;  // off by default: validation happens here, against the reference
  opt.times = &times;
  auto restore = [&] {
    // std::copy, not memcpy: an empty vector's data() may be null, which memcpy must not be given
    // (UBSan found it on the flags suites, which have no removal list).
    std::copy(in.items.begin(), in.items.end(), items.begin());
    std::copy(in.removals.begin(), in.removals.end(), removals.begin());
  };
  auto call = [&] {
    return c.in_place ? compact(c.strategy, items_rec, keep, opt) : compact_copy(c.strategy, items_rec, out_rec, keep, opt);
  };

  measurement m;
  const bool stable = compaction_strategy(c.strategy).stable;
  try {
    restore();
    m.kept = call();
    m.error = check_output(in, c.in_place ? items : out, m.kept, w, stable);
    m.validated = m.error.empty();
    if (!m.validated) return m;
    std::vector<double> ms, phase1;
    for (int r = 0; r < plan.warmup + plan.repeats; ++r) {
      restore();
      const auto t0 = std::chrono::steady_clock::now();
      call();
      const auto t1 = std::chrono::steady_clock::now();
      if (r < plan.warmup) continue;
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      phase1.push_back(times.phase1_ms);
    }
    m.ms = summarize(ms);
    m.phase1_ms = summarize(phase1).median;
  } catch (const std::exception& e) {
    m.validated = false;
    m.error = e.what();
  }
  return m;
}

}  // namespace sieve::bench
