// `auto`'s crossover tables: what the library embedded at configure time answers what the committed
// compaction/tuning/<device>.json files rank first, row by row.
#include "../compaction/dispatch/crossover.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> tables() {
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(SIEVE_TUNING_DIR))
    if (f.path().extension() == ".json") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  std::vector<nlohmann::json> out;
  for (const auto& f : files) out.push_back(nlohmann::json::parse(std::ifstream(f)));
  return out;
}

sieve::form form_of(const std::string& name) {
  return name == "removal" ? sieve::form::removal_list : name == "flags" ? sieve::form::byte_flags : sieve::form::bit_mask;
}

TEST(Crossover, EmbeddedTablesAnswerWhatTheJsonRanksFirst) {
  const auto all = tables();
  if (all.empty()) GTEST_SKIP() << "no compaction/tuning/*.json committed";
  for (const auto& t : all) {
    const std::string device = t["device"];
    const auto b = t["backend"] == "cpu" ? sieve::backend::cpu : sieve::backend::cuda;
    ASSERT_FALSE(t["rows"].empty()) << device;
    for (const auto& r : t["rows"]) {
      const std::vector<std::string> ranking = r["ranking"];
      const std::size_t n = r["n"];
      const std::size_t bytes = r.value("item_bytes", 4);
      const double fraction = r["fraction"].is_null() ? 0.5 : r["fraction"].get<double>();
      SCOPED_TRACE(device + " " + r["form"].get<std::string>() + " n=" + std::to_string(n) + " k/n=" + std::to_string(fraction));
      ASSERT_FALSE(ranking.empty());
      auto any = [](std::string_view) { return true; };
      EXPECT_EQ(sieve::detail::crossover_pick(b, device, form_of(r["form"]), n, fraction, bytes, any), ranking[0]);
      if (ranking.size() > 1) {
        auto not_first = [&](std::string_view s) { return s != ranking[0]; };
        EXPECT_EQ(sieve::detail::crossover_pick(b, device, form_of(r["form"]), n, fraction, bytes, not_first), ranking[1]);
      }
      auto none = [](std::string_view) { return false; };
      EXPECT_EQ(sieve::detail::crossover_pick(b, device, form_of(r["form"]), n, fraction, bytes, none), "");
    }
  }
  // A device without a table borrows the first table of its backend.
  const auto& first = all.front();
  const auto b = first["backend"] == "cpu" ? sieve::backend::cpu : sieve::backend::cuda;
  const auto& r = first["rows"][0];
  const double fraction = r["fraction"].is_null() ? 0.5 : r["fraction"].get<double>();
  EXPECT_EQ(sieve::detail::crossover_pick(b, "Some Future GPU", form_of(r["form"]), r["n"], fraction,
                                          r.value("item_bytes", 4),
                                          [](std::string_view) { return true; }),
            r["ranking"][0].get<std::string>());
  EXPECT_EQ(sieve::detail::crossover_pick(b, first["device"].get<std::string>(), sieve::form::predicate, 1000, 0.5, 4,
                                          [](std::string_view) { return true; }),
            "");
}

}  // namespace
