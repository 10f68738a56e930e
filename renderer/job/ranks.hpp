// A split render's side of the job (render_job.cpp keeps the steps): the processes' shared tree,
// the tile source each rank takes its tiles from, the per-rank rows sent to rank 0 and the job's
// statistics reduced there.
#pragma once

#include "render_job.hpp"

#include <frame/tiles.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace sieve::render {

// Rank 0's tree on every process: the arrays' sizes as text, then each part's bytes in place.
void share_tree(bvh& tree, job_peers& peers);

// The film's tiles every rank takes from (rank 0 cuts them; the others receive its plan): of the
// size asked for, else as plan_tiles sizes them, with takes of 8 tiles where the ranks' backends
// differ (ranks of unequal speed).
tile_plan agree_tiles(job_peers& peers, sieve::backend backend, const film_desc& film, std::uint32_t max_queue,
                      const render_request& rq);

// Rank 0's film put together from the rows' tile lists: its own tiles in place in `own`, the
// others' from `inbox` (where they arrived as they ended). Erases each row's "tile_list"; throws on
// a tile that does not fit the film.
tiled_film assemble_film(nlohmann::json& rows, std::vector<vec3> own, std::span<const vec3> inbox);

// A split render's tile source: the next tiles of the shared counter while this process is worth
// giving some (take_another; rank 0 takes tiles until none is left, so every tile is rendered), as
// many as take_size says, each take lasting delay_ms longer.
std::function<bool(std::uint32_t&, std::uint32_t&)> tile_source(job_peers& peers, const tile_plan& plan, std::uint32_t delay_ms);

// The per-rank row of a split render's report (sent to rank 0 as JSON), its statistics included.
nlohmann::json rank_row(job_peers& peers, const render_outcome& out, sieve::backend backend, double cpu_s);

// The ranks' rows added into rank 0's statistics, and the report's "ranks" object: the per-rank
// rows and the job's times (the slowest rank's setup, rendering and waiting; rank 0's reduction).
nlohmann::json reduce_ranks(render_stats& stats, nlohmann::json rows, const render_outcome& lead, const tile_plan& plan);

}  // namespace sieve::render
