#include "queue_strategy.hpp"

#include <string_view>

namespace sieve::render {
namespace {

// The renderer's pick per backend, as measured side by side in `sieve bench render` (every shipped
// scene and a third-party one, the pass queue; bench/results/<device>/render-auto-*.txt), first
// that fits the queue's form and in-place choice. Empty: the library's pick for the queue's size.
struct regime_pick {
  sieve::backend b;
  std::string_view name, why;
};
constexpr regime_pick picks[] = {
    {sieve::backend::cuda, "atomic",
     "launched over the capacity with the live count on the device, its one read of the live words follows "
     "the count; fastest on every scene measured"},
};

}  // namespace

queue_strategy pick_queue_strategy(const sieve::strategy& asked, sieve::backend b, sieve::form f, bool in_place,
                                   const sieve::record& queue, std::size_t removed) {
  if (!asked.is_auto()) return {asked, std::string(asked.name()) + " (named)"};
  const std::string where = std::string(sieve::to_string(b)) + ", " + std::to_string(queue.size()) + " x " +
                            std::to_string(queue.item_bytes()) + "-byte queue, " + std::string(sieve::to_string(f));
  for (const regime_pick& p : picks) {
    if (p.b != b) continue;
    const sieve::strategy_info& i = sieve::compaction_strategy(p.name);
    if (i.takes(b, f) && (in_place ? i.in_place : i.out_of_place))
      return {sieve::strategy(p.name), "auto -> " + std::string(p.name) + " (" + where + "): " + std::string(p.why)};
  }
  const sieve::strategy s = asked.resolve(b, f, in_place, queue.size(), removed, queue.item_bytes());
  return {s, "auto -> " + std::string(s.name()) + " (" + where + "): the library's pick for this size and record"};
}

}  // namespace sieve::render
