// A split render's side of the job (ranks.hpp).
#include "ranks.hpp"

#include <report.hpp>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <span>
#include <vector>
#include <chrono>
#include <memory>
#include <sstream>
#include <thread>
#include <type_traits>

namespace sieve::render {
namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) { return std::chrono::duration<double>(clock_type::now() - t0).count(); }

// A rank's render_stats, sent to rank 0 as JSON, and added up there.
nlohmann::json stats_json(const render_stats& st) {
  nlohmann::json j = {{"extension_rays", st.extension_rays}, {"shadow_rays", st.shadow_rays},
                      {"bfs_compact_ms", st.bfs_compact_ms}, {"seconds", st.seconds},
                      {"first_wave_extra_seconds", st.first_wave_extra_seconds},
                      {"waves", st.waves}, {"measured_waves", st.measured_waves}, {"host_syncs", st.host_syncs}, {"graphs", st.graphs},
                      {"wave_launch", st.wave_launch}, {"strategies_ran", st.strategies_ran},
                      {"stages", nlohmann::json::array()}, {"loops", nlohmann::json::array()},
                      {"bounces", nlohmann::json::array()}};
  for (const auto& s : st.stages) j["stages"].push_back({s.name, s.ms});
  for (const auto& l : st.loops) j["loops"].push_back({l.name, l.launches, l.items, l.ms});
  for (const auto& b : st.bounces) j["bounces"].push_back({b.live, b.compact_ms});
  return j;
}

void add_stats(render_stats& into, const nlohmann::json& j) {
  into.extension_rays += j["extension_rays"].get<std::uint64_t>();
  into.shadow_rays += j["shadow_rays"].get<std::uint64_t>();
  into.bfs_compact_ms += j["bfs_compact_ms"].get<double>();
  into.seconds += j["seconds"].get<double>();
  into.first_wave_extra_seconds += j["first_wave_extra_seconds"].get<double>();
  into.waves += j["waves"].get<std::uint64_t>();
  into.measured_waves += j["measured_waves"].get<std::uint64_t>();
  into.host_syncs += j["host_syncs"].get<std::uint64_t>();
  into.graphs += j["graphs"].get<std::uint64_t>();
  // Ranks may launch their waves differently (their own backends): "graph+cpu" names each once.
  const std::string launch = j["wave_launch"].get<std::string>();
  if (into.wave_launch.empty()) into.wave_launch = launch;
  else if (("+" + into.wave_launch + "+").find("+" + launch + "+") == std::string::npos) into.wave_launch += "+" + launch;
  for (const auto& name : j["strategies_ran"])
    if (std::find(into.strategies_ran.begin(), into.strategies_ran.end(), name.get<std::string>()) == into.strategies_ran.end())
      into.strategies_ran.push_back(name.get<std::string>());
  for (const auto& s : j["stages"]) into.add_stage(s[0].get<std::string>(), -1, s[1].get<double>());
  for (const auto& l : j["loops"])
    exec::add_loop_time(into.loops, {l[0].get<std::string>(), l[1].get<std::uint64_t>(), l[2].get<std::uint64_t>(),
                                     l[3].get<double>()});
  const auto& bounces = j["bounces"];
  if (into.bounces.size() < bounces.size()) into.bounces.resize(bounces.size());
  for (std::size_t b = 0; b < bounces.size(); ++b) {
    into.bounces[b].live += bounces[b][0].get<std::uint64_t>();
    into.bounces[b].compact_ms += bounces[b][1].get<double>();
  }
}

}  // namespace

// Rank 0's tree on every process: the arrays' sizes as text, then each part's bytes in place.
void share_tree(bvh& tree, job_peers& peers) {
  std::string sizes;
  for_each_part(tree, [&](auto& part) {
    if constexpr (requires { part.resize(0); }) sizes += std::to_string(part.size()) + " ";
  });
  std::istringstream in(peers.broadcast(sizes));
  for_each_part(tree, [&](auto& part) {
    if constexpr (requires { part.resize(0); }) {
      std::size_t n = 0;
      in >> n;
      part.resize(n);
      peers.broadcast_bytes(std::as_writable_bytes(std::span(part)));
    } else {
      static_assert(std::is_trivially_copyable_v<std::remove_reference_t<decltype(part)>>);
      peers.broadcast_bytes(std::as_writable_bytes(std::span(&part, 1)));
    }
  });
}

// A split render's tile source: the next tiles of the shared counter while this process is worth
// giving some (take_another; rank 0 takes tiles until none is left, so every tile is rendered), as
// many as take_size says, each take lasting delay_ms longer.
std::function<bool(std::uint32_t&, std::uint32_t&)> tile_source(job_peers& peers, const tile_plan& plan, std::uint32_t delay_ms) {
  struct pace {
    clock_type::time_point t0 = clock_type::now();
    std::uint32_t mine = 0;  // tiles
  };
  return [&peers, plan, delay_ms, p = std::make_shared<pace>()](std::uint32_t& first, std::uint32_t& n) {
    const std::uint64_t count = plan.count();
    const double s = since(p->t0);
    std::uint32_t k = 1;
    if (p->mine > 0 && s > 0 && (plan.units > 1 || peers.rank() != 0)) {
      const std::uint64_t taken = peers.count_tiles(0);
      if (taken >= count) return false;
      const auto left = static_cast<std::uint32_t>(count - taken);
      const double mine_per_s = p->mine / s, all_per_s = static_cast<double>(taken) / s;
      if (peers.rank() != 0 && !take_another(left, mine_per_s, all_per_s, static_cast<std::uint32_t>(peers.size()))) return false;
      k = take_size(left, mine_per_s, all_per_s, plan.units);
    }
    const std::uint64_t i = peers.count_tiles(k);
    if (i >= count) return false;
    if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    plan.tile(static_cast<std::uint32_t>(i), k, first, n);
    p->mine += static_cast<std::uint32_t>(std::min<std::uint64_t>(k, count - i));
    return true;
  };
}

// The per-rank row of a split render's report (sent to rank 0 as JSON).
nlohmann::json rank_row(job_peers& peers, const render_outcome& out, sieve::backend backend, double cpu_s) {
  const bool gpu = backend == sieve::backend::cuda;
  const render_result& r = out.result;
  nlohmann::json row = peers.describe();
  row["gpu"] = gpu ? row.value("gpu_index", -1) : -1;
  row.erase("gpu_index");
  std::uint64_t pixels = 0;
  nlohmann::json tiles = nlohmann::json::array();
  for (const tile_done& t : r.tiles) {
    pixels += t.pixels;
    tiles.push_back({t.first_pixel, t.pixels, t.samples, t.ahead});
  }
  row.update({{"rank", peers.rank()},
              {"backend", std::string(sieve::to_string(backend))},
              {"device", gpu ? report::machine_info(true)["gpu"] : report::machine_info(false)["cpu"]},
              {"threads", tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)},
              {"tiles", r.tiles.size()},
              {"pixels", pixels},
              {"tile_list", tiles},
              {"setup_seconds", out.setup_seconds},
              // setup's parts: the scene's loading, the BVH (built here, or built by rank 0 and
              // received), the render's own setup (upload, graph capture)
              {"load_seconds", out.load_seconds},
              {"bvh_seconds", out.bvh_seconds},
              {"render_setup_seconds", r.stats.setup_seconds},
              {"render_seconds", out.render_seconds},
              {"wait_seconds", out.wait_seconds},
              {"reduction_seconds", out.reduction_seconds},
              {"seconds", r.stats.seconds},
              {"cpu_seconds", cpu_s},
              {"rays", r.stats.extension_rays + r.stats.shadow_rays},
              {"stats", stats_json(r.stats)}});
  return row;
}

// The ranks' rows added into rank 0's statistics, and the report's "ranks" object: the per-rank
// rows and the job's times (the slowest rank's setup, rendering and waiting; rank 0's reduction).
nlohmann::json reduce_ranks(render_stats& stats, nlohmann::json rows, const render_outcome& lead, const tile_plan& plan) {
  const sieve::form form = stats.form;
  stats = render_stats{};
  stats.form = form;
  stats.wave_launch.clear();
  double setup = 0, rendering = 0, busy = 0, wait = 0;
  for (auto& rk : rows) {
    add_stats(stats, rk["stats"]);
    rk.erase("stats");
    setup = std::max(setup, rk["setup_seconds"].get<double>());
    rendering = std::max(rendering, rk["render_seconds"].get<double>());
    busy += rk["render_seconds"].get<double>();
    wait = std::max(wait, rk["wait_seconds"].get<double>());
  }
  const double n = static_cast<double>(rows.size()), seconds = lead.seconds;
  return {{"count", rows.size()},
          {"split", "tiles of the film taken on demand, each pixel rendered by one rank"},
          {"tiles", plan.count()},
          {"tile_pixels", plan.tile_pixels},
          {"tile_units", plan.units},  // the most tiles one take holds
          {"per_rank", rows},
          {"setup_seconds", setup},
          {"render_seconds", rendering},
          {"wait_seconds", wait},
          {"reduction_seconds", lead.reduction_seconds},
          {"reduction_share", seconds > 0 ? lead.reduction_seconds / seconds : 0},
          {"job_seconds", lead.total_seconds},
          // The ranks' render time over the time of the job (all ranks rendering until the
          // reduction ends): 1 when every rank renders for the whole job; setup, imbalance and the
          // reduction lower it.
          {"efficiency", seconds > 0 ? busy / (n * seconds) : 0},
          {"efficiency_rendering", rendering > 0 ? busy / (n * rendering) : 0}};
}

tile_plan agree_tiles(job_peers& peers, sieve::backend backend, const film_desc& film, std::uint32_t max_queue,
                      const render_request& rq) {
  const std::uint32_t pixels = film.width * film.height;
  const std::string mine(sieve::to_string(backend));
  const std::vector<std::string> backends = peers.gather(mine);
  const bool mixed = std::any_of(backends.begin(), backends.end(), [&](const std::string& b) { return b != mine; });
  const tile_plan plan = plan_tiles(pixels, film.spp, max_queue, static_cast<std::uint32_t>(peers.size()), rq.tile_pixels,
                                    rq.tile_units ? rq.tile_units : mixed ? 8 : 1);
  std::istringstream in(peers.broadcast(std::to_string(plan.tile_pixels) + " " + std::to_string(plan.units)));
  tile_plan agreed;
  agreed.pixels = pixels;
  in >> agreed.tile_pixels >> agreed.units;
  return agreed;
}

tiled_film assemble_film(nlohmann::json& rows, std::vector<vec3> own, std::span<const vec3> inbox) {
  tiled_film film(std::move(own));  // rank 0's own tiles are in place
  for (auto& row : rows) {
    const bool mine = &row == &rows[0];
    for (const auto& tj : row["tile_list"]) {
      const tile_done t{tj[0].get<std::uint32_t>(), tj[1].get<std::uint32_t>(), tj[2].get<std::uint32_t>(), tj[3].get<std::uint32_t>()};
      if (mine) film.place(t);
      else if (t.first_pixel < inbox.size() && t.pixels <= inbox.size() - t.first_pixel)
        film.add(t, inbox.subspan(t.first_pixel, t.pixels));
      else film.place(t);  // throws: the tile does not fit the film
    }
    row.erase("tile_list");
  }
  return film;
}

}  // namespace sieve::render
