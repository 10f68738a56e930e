// Builds without MPI (SIEVE_MPI=OFF, or no MPI found): a job of one. Started by mpirun as several
// processes, each would render and write the whole image: that is an error instead.
#include "mpi.hpp"

#include <sieve/compaction/error.hpp>

#include <cstdlib>
#include <utility>

namespace sieve::app::mpi {
namespace {

const world_info the_world;

int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return 0;
}

}  // namespace

bool built() { return false; }

session::session() {
  if (const int n = launched_size(); n > 1)
    throw sieve::error("mpirun started " + std::to_string(n) +
                       " processes, but this build has no MPI (configure with Open MPI installed, SIEVE_MPI=ON): "
                       "each would render the whole image");
}
session::~session() = default;

const world_info& world() { return the_world; }
int first_failure(bool failed) { return failed ? 0 : -1; }
std::string broadcast(const std::string& text) { return text; }
std::vector<std::string> gather(const std::string& text) { return {text}; }
void broadcast_bytes(std::span<std::byte>) {}
void barrier() {}
void abort(int code) { std::_Exit(code); }
int select_gpu() { return -1; }

struct shared_counter::state {
  std::uint64_t value = 0;
};
shared_counter::shared_counter() : state_(std::make_unique<state>()) {}
shared_counter::~shared_counter() = default;
std::uint64_t shared_counter::fetch_add(std::uint64_t n) { return std::exchange(state_->value, state_->value + n); }

struct stop_relay::state {};
stop_relay::stop_relay(std::atomic<bool>&, std::function<void()>) {}
stop_relay::~stop_relay() = default;
bool stop_relay::stopped_by_peer() const { return false; }

struct tile_post::state {};
tile_post::tile_post(std::span<float>) : state_(std::make_unique<state>()) {}
tile_post::~tile_post() = default;
void tile_post::send(std::uint32_t, std::span<const float>) { throw sieve::error("MPI: a tile sent in a job of one"); }
void tile_post::poll() {}
void tile_post::finish(std::uint64_t pixels) {
  if (pixels) throw sieve::error("MPI: tiles expected from other ranks in a job of one");
}

}  // namespace sieve::app::mpi
