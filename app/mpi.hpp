// The ranks of an MPI job: `mpirun -np N sieve render SCENE ...` renders the film's tiles on N
// ranks, each taking the next tile when it is free (renderer/frame/tiles.hpp), and rank 0 writes the
// outputs. The only file that knows MPI
// is mpi.cpp (built when CMake finds MPI, SIEVE_MPI); mpi_missing.cpp stands in without it: a job of
// one, and a clear error when mpirun started several copies of a build that cannot split.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sieve::app::mpi {

struct world_info {
  bool launched = false;  // started by mpirun (MPI initialised): the render is split, even over 1 rank
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;  // among the ranks on this host
  std::string host;
};

// True when this build has MPI.
bool built();

// Initialises MPI when mpirun started this process (Open MPI's OMPI_COMM_WORLD_SIZE or PMIx's
// PMIX_RANK in the environment) and finalises it when destroyed; otherwise does nothing. Throws
// sieve::error when mpirun started several processes of a build without MPI.
class session {
 public:
  session();
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;
};

// This process's place in the job ({} with size 1 when not launched by mpirun).
const world_info& world();

// Thrown on the ranks that did not fail when another rank's setup failed: end with its status,
// quietly (that rank prints why).
struct peer_failed {
  int rank;
};

// Collective: the lowest rank for which `failed` is true, or -1.
int first_failure(bool failed);
// Collective: rank 0's `text` on every rank.
std::string broadcast(const std::string& text);
// Collective: every rank's `text` at rank 0, in rank order (empty elsewhere).
std::vector<std::string> gather(const std::string& text);
// Collective: rank 0's bytes in `data` on every rank (each gives a buffer of the same size).
void broadcast_bytes(std::span<std::byte> data);
// Collective: returns when every rank has called it.
void barrier();
// Ends every rank of the job with `code` (MPI_Abort); the caller has printed why.
[[noreturn]] void abort(int code);

// Under mpirun on a machine with CUDA devices: makes GPU (local rank mod devices) current, before
// anything else touches CUDA. Returns its index, or -1 (no MPI job, no CUDA device).
int select_gpu();

// A counter at rank 0 that every rank counts up without rank 0 taking part (MPI one-sided atomics):
// the tiles handed out. Created and destroyed collectively; in between, any rank may call it.
class shared_counter {
 public:
  shared_counter();
  ~shared_counter();
  shared_counter(const shared_counter&) = delete;
  shared_counter& operator=(const shared_counter&) = delete;
  // The counter's value, then adds `n` to it (0: only reads it).
  std::uint64_t fetch_add(std::uint64_t n);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// While a rank renders, a stop on any rank stops them all: a thread sends a stop to every other
// rank when `interrupted` becomes true here (a signal), and sets `interrupted` when a stop comes
// from another rank. Destroy it on every rank once its render ends (it then joins the thread and,
// collectively, takes in the stops still under way; not when an exception unwinds it: the rank
// then ends the job).
class stop_relay {
 public:
  // `also`, when given, is called on the relay's thread at each of its polls (every few ms).
  explicit stop_relay(std::atomic<bool>& interrupted, std::function<void()> also = {});
  ~stop_relay();
  stop_relay(const stop_relay&) = delete;
  stop_relay& operator=(const stop_relay&) = delete;
  // Whether a stop came from another rank.
  bool stopped_by_peer() const;

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// The tiles the ranks render, sent to rank 0 as each ends while the next renders (the reduction off
// the critical path): a rank other than 0 sends each tile without waiting (send); rank 0 takes in
// those that came whenever poll is called (the stop relay's thread calls it while rank 0 renders)
// and, in finish, the rest. Created and finished collectively; each message is the tile's first
// pixel and its sums, so no tile needs a tag of its own.
class tile_post {
 public:
  // `film` (rank 0): where the tiles land, 3 floats a pixel, at their first pixel.
  explicit tile_post(std::span<float> film);
  ~tile_post();
  tile_post(const tile_post&) = delete;
  tile_post& operator=(const tile_post&) = delete;
  // A rank other than 0: sends a tile's sums (copied: the caller's buffer is free again at once).
  void send(std::uint32_t first_pixel, std::span<const float> sums);
  // Rank 0: takes in the tiles that came. A bad message is kept as an error that finish throws.
  void poll();
  // Collective after the render: rank 0 returns once `pixels` pixels came in all (throws
  // sieve::error for a tile that does not fit the film); the others once their tiles are sent.
  void finish(std::uint64_t pixels);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace sieve::app::mpi
