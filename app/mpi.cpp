// The MPI side of a split render (mpi.hpp), over MPI_COMM_WORLD.
#include "mpi.hpp"
#include "pending.hpp"

#include <sieve/compaction/error.hpp>

#include <mpi.h>
#if SIEVE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <chrono>
#include <cstring>
#include <deque>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

namespace sieve::app::mpi {
namespace {

world_info the_world;
// The stop relay's thread and the render's thread both call MPI while a rank renders: one at a time
// (MPI_THREAD_SERIALIZED).
std::mutex serial;
constexpr int stop_tag = 0x5173;  // the stop relay's messages (MPI_COMM_WORLD)
constexpr int tile_tag = 1;       // the tiles' (tile_post's own communicator)

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw sieve::error(std::string("MPI: ") + what + ": " + std::string(text, static_cast<std::size_t>(len)));
}

bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

}  // namespace

bool built() { return true; }

session::session() {
  if (!started_by_mpirun()) return;
  int provided = 0;
  // The stop relay's thread calls MPI while the main thread renders (and never at the same time).
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw sieve::error("MPI: this MPI library gives no MPI_THREAD_SERIALIZED support, which the split render needs");
  }
  world_info w;
  w.launched = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  w.host.assign(host, static_cast<std::size_t>(len));
  the_world = w;
}

session::~session() {
  if (the_world.launched) MPI_Finalize();
}

const world_info& world() { return the_world; }

int first_failure(bool failed) {
  int mine = failed ? the_world.rank : the_world.size, lowest = mine;
  check(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return lowest < the_world.size ? lowest : -1;
}

std::string broadcast(const std::string& text) {
  unsigned long long n = text.size();
  check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = the_world.rank == 0 ? text : std::string(n, '\0');
  check(MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

std::vector<std::string> gather(const std::string& text) {
  const int n = static_cast<int>(text.size());
  std::vector<int> sizes(the_world.rank == 0 ? the_world.size : 0), offsets(sizes.size());
  check(MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::string all;
  if (the_world.rank == 0) {
    int at = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) offsets[r] = std::exchange(at, at + sizes[r]);
    all.resize(static_cast<std::size_t>(at));
  }
  check(MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < sizes.size(); ++r) out.push_back(all.substr(offsets[r], sizes[r]));
  return out;
}

void broadcast_bytes(std::span<std::byte> data) {
  constexpr std::size_t chunk = std::size_t{1} << 30;  // MPI counts are int
  for (std::size_t at = 0; at < data.size(); at += chunk)
    check(MPI_Bcast(data.data() + at, static_cast<int>(std::min(chunk, data.size() - at)), MPI_BYTE, 0, MPI_COMM_WORLD),
          "MPI_Bcast");
}

void barrier() { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

struct shared_counter::state {
  MPI_Win win = MPI_WIN_NULL;
  std::uint64_t* base = nullptr;
};

shared_counter::shared_counter() : state_(std::make_unique<state>()) {
  const MPI_Aint bytes = the_world.rank == 0 ? sizeof(std::uint64_t) : 0;
  check(MPI_Win_allocate(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &state_->base, &state_->win),
        "MPI_Win_allocate");
  if (the_world.rank == 0) *state_->base = 0;
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");  // zeroed before anyone counts
  check(MPI_Win_lock_all(MPI_MODE_NOCHECK, state_->win), "MPI_Win_lock_all");
}

shared_counter::~shared_counter() {
  if (std::uncaught_exceptions() > 0) return;  // the rank ends the job (mpi::abort): no collective
  MPI_Win_unlock_all(state_->win);
  MPI_Win_free(&state_->win);
}

std::uint64_t shared_counter::fetch_add(std::uint64_t n) {
  std::uint64_t old = 0;
  const std::lock_guard lock(serial);
  check(MPI_Fetch_and_op(&n, &old, MPI_UINT64_T, 0, 0, n ? MPI_SUM : MPI_NO_OP, state_->win), "MPI_Fetch_and_op");
  check(MPI_Win_flush(0, state_->win), "MPI_Win_flush");
  return old;
}

void abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

int select_gpu() {
#if SIEVE_HAVE_CUDA
  int n = 0;
  if (!the_world.launched || cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return -1;
  }
  const int device = the_world.local_rank % n;
  if (cudaSetDevice(device) != cudaSuccess) {
    cudaGetLastError();
    throw sieve::error("rank " + std::to_string(the_world.rank) + ": cannot use GPU " + std::to_string(device));
  }
  return device;
#else
  return -1;
#endif
}

struct stop_relay::state {
  std::atomic<bool>& interrupted;
  std::function<void()> also;
  std::atomic<bool> done{false}, by_peer{false};
  bool sent = false;
  std::vector<char> received;  // per rank: its stop came in
  std::vector<MPI_Request> sends;
  char token = 0;
  std::thread thread;

  state(std::atomic<bool>& i, std::function<void()> a)
      : interrupted(i), also(std::move(a)), received(static_cast<std::size_t>(the_world.size), 0) {}

  // Sends the stop once, when interrupted here; takes in the stops of the others.
  void poll() {
    const std::lock_guard lock(serial);
    if (interrupted.load() && !by_peer.load() && !sent) {
      for (int r = 0; r < the_world.size; ++r)
        if (r != the_world.rank) {
          sends.emplace_back();
          MPI_Isend(&token, 1, MPI_CHAR, r, stop_tag, MPI_COMM_WORLD, &sends.back());
        }
      sent = true;
    }
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, stop_tag, MPI_COMM_WORLD, &flag, &st);
    if (flag) {
      char t;
      MPI_Recv(&t, 1, MPI_CHAR, st.MPI_SOURCE, stop_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      received[static_cast<std::size_t>(st.MPI_SOURCE)] = 1;
      if (!interrupted.load()) by_peer.store(true);
      interrupted.store(true);
    }
  }
  void poll_all() {
    poll();
    if (also) also();
  }
};

stop_relay::stop_relay(std::atomic<bool>& interrupted, std::function<void()> also)
    : state_(std::make_unique<state>(interrupted, std::move(also))) {
  if (!the_world.launched || the_world.size < 2) return;
  state_->thread = std::thread([s = state_.get()] {
    while (!s->done.load()) {
      s->poll_all();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Once more after the render returned: a stop raised here within the last sleep (a GPU ends a
    // wave in under a millisecond) still goes out, or the others would render on and this rank would
    // wait for them at the closing collective.
    s->poll_all();
  });
}

stop_relay::~stop_relay() {
  if (!state_->thread.joinable()) return;
  state_->done.store(true);
  state_->thread.join();
  // Leaving on an exception: this rank is about to end the job (mpi::abort); the others may still be
  // rendering, so no collective here.
  if (std::uncaught_exceptions() > 0) return;
  // Every rank learns who sent a stop and takes in those it has not yet received, so no message is
  // left in flight at MPI_Finalize.
  const char sent = state_->sent ? 1 : 0;
  std::vector<char> senders(static_cast<std::size_t>(the_world.size));
  MPI_Allgather(&sent, 1, MPI_CHAR, senders.data(), 1, MPI_CHAR, MPI_COMM_WORLD);
  for (int r = 0; r < the_world.size; ++r)
    if (r != the_world.rank && senders[static_cast<std::size_t>(r)] && !state_->received[static_cast<std::size_t>(r)]) {
      char t;
      MPI_Recv(&t, 1, MPI_CHAR, r, stop_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  MPI_Waitall(static_cast<int>(state_->sends.size()), state_->sends.data(), MPI_STATUSES_IGNORE);
}

bool stop_relay::stopped_by_peer() const { return state_->by_peer.load(); }

struct tile_post::state {
  MPI_Comm comm = MPI_COMM_NULL;          // the tiles' own: no tag of theirs meets another message
  std::span<float> film;                  // rank 0
  std::uint64_t received = 0;             // rank 0: pixels
  std::string error;                      // rank 0: the first bad message
  std::deque<std::vector<std::byte>> out; // the others: the messages in flight
  std::vector<MPI_Request> sends;
  // Rank 0: the messages being received (a matched probe, then a receive that does not wait: a
  // large message moves only as its sender's MPI makes progress, a few ms apart while it renders,
  // and rank 0 must not wait for that holding the lock its own tile counter needs).
  struct incoming {
    std::vector<std::byte> bytes;
    int source = 0;
  };
  std::vector<incoming> arriving;
  std::vector<MPI_Request> receives;

  void start(MPI_Message& message, const MPI_Status& st) {
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    arriving.push_back({std::vector<std::byte>(static_cast<std::size_t>(bytes)), st.MPI_SOURCE});
    check(MPI_Imrecv(arriving.back().bytes.data(), bytes, MPI_BYTE, &message, &receives.emplace_back()), "MPI_Imrecv");
  }
  // Starts receiving every tile that came.
  void start_arrived() {
    for (;;) {
      int flag = 0;
      MPI_Message message;
      MPI_Status st;
      check(MPI_Improbe(MPI_ANY_SOURCE, tile_tag, comm, &flag, &message, &st), "MPI_Improbe");
      if (!flag) return;
      start(message, st);
    }
  }
  // Puts the tiles received into the film; `wait`: after waiting for at least one.
  void complete(bool wait) {
    if (receives.empty()) return;
    std::vector<int> done(receives.size());
    int n = 0;
    const int count = static_cast<int>(receives.size());
    if (wait) check(MPI_Waitsome(count, receives.data(), &n, done.data(), MPI_STATUSES_IGNORE), "MPI_Waitsome");
    else check(MPI_Testsome(count, receives.data(), &n, done.data(), MPI_STATUSES_IGNORE), "MPI_Testsome");
    if (n == MPI_UNDEFINED || n == 0) return;
    for (int k = 0; k < n; ++k) place(arriving[static_cast<std::size_t>(done[static_cast<std::size_t>(k)])]);
    keep_pending(receives, arriving, MPI_REQUEST_NULL);  // the receives still under way, in order
  }
  // A tile's message: its first pixel, then its sums.
  void place(const incoming& m) {
    std::uint32_t first = 0;
    const std::size_t n = m.bytes.size() < sizeof first ? 0 : (m.bytes.size() - sizeof first) / (3 * sizeof(float));
    if (n == 0 || m.bytes.size() != sizeof first + n * 3 * sizeof(float)) {
      error = "a tile message of " + std::to_string(m.bytes.size()) + " bytes from rank " + std::to_string(m.source);
      return;
    }
    std::memcpy(&first, m.bytes.data(), sizeof first);
    if (std::uint64_t{first} + n > film.size() / 3) {
      error = "rank " + std::to_string(m.source) + " sent a tile [" + std::to_string(first) + ", +" + std::to_string(n) +
              ") outside the film's " + std::to_string(film.size() / 3) + " pixels";
      return;
    }
    std::memcpy(film.data() + 3 * std::size_t{first}, m.bytes.data() + sizeof first, n * 3 * sizeof(float));
    received += n;
  }
};

tile_post::tile_post(std::span<float> film) : state_(std::make_unique<state>()) {
  state_->film = film;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &state_->comm), "MPI_Comm_dup");
}

tile_post::~tile_post() {
  if (std::uncaught_exceptions() > 0) return;  // the rank ends the job (mpi::abort): no collective
  MPI_Comm_free(&state_->comm);
}

void tile_post::send(std::uint32_t first_pixel, std::span<const float> sums) {
  const std::size_t bytes = sizeof first_pixel + sums.size_bytes();
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw sieve::error("MPI: a tile of " + std::to_string(sums.size() / 3) + " pixels is more than one message moves");
  std::vector<std::byte>& m = state_->out.emplace_back(bytes);
  std::memcpy(m.data(), &first_pixel, sizeof first_pixel);
  std::memcpy(m.data() + sizeof first_pixel, sums.data(), sums.size_bytes());
  const std::lock_guard lock(serial);
  check(MPI_Isend(m.data(), static_cast<int>(bytes), MPI_BYTE, 0, tile_tag, state_->comm, &state_->sends.emplace_back()),
        "MPI_Isend");
}

void tile_post::poll() {
  const std::lock_guard lock(serial);
  state_->start_arrived();
  state_->complete(false);
}

void tile_post::finish(std::uint64_t pixels) {
  const std::lock_guard lock(serial);
  state& s = *state_;
  if (the_world.rank != 0) {
    check(MPI_Waitall(static_cast<int>(s.sends.size()), s.sends.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    s.sends.clear();
    s.out.clear();
    return;
  }
  for (;;) {
    s.start_arrived();
    s.complete(false);
    if (s.received >= pixels || !s.error.empty()) break;
    if (!s.receives.empty()) {
      s.complete(true);
    } else {
      MPI_Message message;
      MPI_Status st;
      check(MPI_Mprobe(MPI_ANY_SOURCE, tile_tag, s.comm, &message, &st), "MPI_Mprobe");
      s.start(message, st);
    }
  }
  if (!s.error.empty()) throw sieve::error("split render: " + s.error);
  if (s.received != pixels)
    throw sieve::error("split render: " + std::to_string(s.received) + " pixels came in tiles, the ranks rendered " +
                       std::to_string(pixels));
}

}  // namespace sieve::app::mpi
