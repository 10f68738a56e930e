// What `auto` runs as for the renderer's path queue (renderer/frame/queue_strategy.hpp): a named
// strategy stays itself; `auto` on the GPU takes the renderer's measured pick where it fits the
// queue's form, else the library's; on the CPU the library's; every reason says what and why.
#include <frame/queue_strategy.hpp>
#include <sieve/compaction/cuda.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

namespace {

using sieve::render::pick_queue_strategy;

struct path48 {
  std::uint32_t a[12];
};

TEST(QueueStrategy, NamedStaysNamed) {
  std::vector<path48> q(1 << 10);
  const sieve::record r = std::span(q);
  const auto p = pick_queue_strategy(sieve::strategy("billeter"), sieve::backend::cpu, sieve::form::bit_mask, false, r, 0);
  EXPECT_EQ(p.strategy.name(), "billeter");
  EXPECT_EQ(p.reason, "billeter (named)");
}

TEST(QueueStrategy, AutoOnTheGpuTakesTheRenderersPick) {
  if (!sieve::compaction_strategy("atomic").takes(sieve::backend::cuda, sieve::form::bit_mask))
    GTEST_SKIP() << "this build has no CUDA backend: no strategy runs on cuda";
  if (!sieve::cuda::available()) GTEST_SKIP() << "no CUDA device: the pick reads the device's properties";
  std::vector<path48> q(1 << 10);
  const sieve::record r = std::span(q);
  for (const sieve::form f : {sieve::form::bit_mask, sieve::form::byte_flags}) {
    const auto p = pick_queue_strategy(sieve::strategy("auto"), sieve::backend::cuda, f, false, r, 0);
    EXPECT_EQ(p.strategy.name(), "atomic");
    EXPECT_EQ(p.reason.rfind("auto -> atomic (cuda, 1024 x 48-byte queue, ", 0), 0U) << p.reason;
    EXPECT_NE(p.reason.find("live count on the device"), std::string::npos) << p.reason;
  }
  // A removal list is no form `atomic` takes: the library's pick, said so.
  const auto list = pick_queue_strategy(sieve::strategy("auto"), sieve::backend::cuda, sieve::form::removal_list,
                                        true, r, 100);
  EXPECT_NE(list.strategy.name(), "atomic");
  EXPECT_NE(list.strategy.name(), "auto");
  EXPECT_NE(list.reason.find("the library's pick"), std::string::npos) << list.reason;
}

TEST(QueueStrategy, AutoOnTheCpuIsTheLibrarysPick) {
  std::vector<path48> q(1 << 12);
  const sieve::record r = std::span(q);
  const auto p = pick_queue_strategy(sieve::strategy("auto"), sieve::backend::cpu, sieve::form::bit_mask, false, r, 0);
  EXPECT_EQ(p.strategy.name(),
            sieve::strategy("auto").resolve(sieve::backend::cpu, sieve::form::bit_mask, false, q.size(), 0, 48).name());
  EXPECT_EQ(p.reason.rfind("auto -> " + std::string(p.strategy.name()) + " (cpu, 4096 x 48-byte queue", 0), 0U) << p.reason;
}

}  // namespace
