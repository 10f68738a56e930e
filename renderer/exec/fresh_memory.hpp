// Large arrays that a parallel pass writes once (a loader's triangles, a BVH builder's layouts): the
// first write to each page of fresh memory is a page fault, and the kernel serialises much of that
// work (the page tables' locks, the memory cgroup's charge), so a loop that writes 300 MB of fresh
// memory on 16 threads spends most of its time in the kernel, and a std::vector's resize faults all
// of it in on one thread. Here such memory is faulted in by every thread at once, a 2 MiB range a
// task, before the loop writes it (and a vector's value-initialisation then runs over pages that
// are there already).
//
//   fresh_resize(v, n)    std::vector<T> v (trivial T) grown to n: the new part faulted in in
//                         parallel, then value-initialised (one pass over memory already there).
//   fresh_vector<T>       a std::vector whose fresh_resize leaves the new items unwritten (each
//                         is written by its owner), its memory faulted in in parallel.
//   fresh_array<T>(n)     n items of T (an implicit-lifetime type: an aggregate of numbers), left
//                         uninitialised (each item is written by its owner), faulted in in
//                         parallel; freed by the pointer.
//   prefault(p, bytes)    the advice and the parallel fault of any range.
//   advise_huge(p, bytes) the advice alone (huge only).
//
// Small sizes (below 4 MiB) are left to the allocator. Nothing here changes what the memory holds.
// SIEVE_FRESH_MEMORY picks the design, for measuring them against each other: recycle (the default:
// the parallel fault on 4 KiB pages, and a build's freed scratch handed to its later layouts:
// fresh_pool), pages (the parallel fault alone), huge (the ranges advised MADV_HUGEPAGE first: 2 MiB
// pages where the kernel gives them) or off (the allocator's pages, faulted by whoever writes
// first). On the H200 host (a VM) the 8.4M-triangle build with every layout takes 0.94 s on 16
// threads recycling, 1.14 s with pages alone; pages beat huge (1.65 against 1.91 s before the
// layouts were fresh_vectors) (docs/results.md).
#pragma once

#include <tbb/parallel_for.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string_view>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

namespace sieve::render {

inline constexpr std::size_t fresh_threshold = std::size_t{4} << 20;

enum class fresh_mode { huge, pages, off, recycle };

inline fresh_mode fresh_memory_mode() {
  static const fresh_mode mode = [] {
    const char* v = std::getenv("SIEVE_FRESH_MEMORY");
    const std::string_view s = v ? v : "recycle";
    return s == "off" ? fresh_mode::off : s == "huge" ? fresh_mode::huge : s == "recycle" ? fresh_mode::recycle : fresh_mode::pages;
  }();
  return mode;
}

inline constexpr std::uintptr_t huge_page = std::uintptr_t{2} << 20;

// The advice alone (for memory that a parallel pass faults in itself, as pread does).
inline void advise_huge(void* p, std::size_t bytes) {
  if (p == nullptr || bytes < fresh_threshold || fresh_memory_mode() != fresh_mode::huge) return;
  const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
  const std::uintptr_t a = (lo + huge_page - 1) & ~(huge_page - 1), b = hi & ~(huge_page - 1);
#ifdef MADV_HUGEPAGE
  if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_HUGEPAGE);  // advice only: ignored where refused
#endif
}

inline void prefault(void* p, std::size_t bytes) {
  if (p == nullptr || bytes < fresh_threshold || fresh_memory_mode() == fresh_mode::off) return;
  advise_huge(p, bytes);
  constexpr std::uintptr_t huge = huge_page, page = 4096;
  const auto lo = reinterpret_cast<std::uintptr_t>(p), hi = lo + bytes;
  // One write a page, 2 MiB a task: a huge page is faulted (and cleared) by the thread that owns it.
  const std::uintptr_t first = (lo + page - 1) & ~(page - 1);
  const std::uintptr_t tasks = (hi - first + huge - 1) / huge;
  tbb::parallel_for(std::uintptr_t{0}, tasks, [&](std::uintptr_t t) {
    const std::uintptr_t s = first + t * huge, e = std::min(hi, s + huge);
    for (std::uintptr_t q = s; q < e; q += page) *reinterpret_cast<volatile unsigned char*>(q) = 0;
  });
}

// Where fresh arrays come from. With SIEVE_FRESH_MEMORY=recycle (the default), inside a
// fresh_scope (a BVH build) a large block freed keeps its pages in a cache, and the next request
// it holds takes it (the smallest that does) instead of new pages to fault in: a build's scratch
// (its references, the sparse nodes, the collapse's plan) becomes the memory of its later layouts.
// The outermost scope's end frees the cache. What a block holds is never read: fresh arrays are
// written whole by their owners.
class fresh_pool {
 public:
  static fresh_pool& get() {
    static fresh_pool* const pool = new fresh_pool;  // never destroyed: arrays may outlive static destructors
    return *pool;
  }
  void* take(std::size_t bytes, std::size_t align) {
    const bool tracked = bytes >= fresh_threshold && fresh_memory_mode() == fresh_mode::recycle;
    if (tracked) {
      std::lock_guard<std::mutex> lock(m_);
      std::size_t best = cache_.size();
      for (std::size_t i = 0; i < cache_.size(); ++i)
        if (cache_[i].bytes >= bytes && reinterpret_cast<std::uintptr_t>(cache_[i].p) % align == 0 &&
            (best == cache_.size() || cache_[i].bytes < cache_[best].bytes))
          best = i;
      if (best < cache_.size()) {
        const block b = cache_[best];
        cache_.erase(cache_.begin() + static_cast<std::ptrdiff_t>(best));
        lent_.push_back(b);
        return b.p;
      }
    }
    void* p = std::aligned_alloc(align, (std::max<std::size_t>(bytes, 1) + align - 1) / align * align);
    if (p == nullptr) throw std::bad_alloc();
    prefault(p, bytes);
    if (tracked) {
      std::lock_guard<std::mutex> lock(m_);
      lent_.push_back({p, bytes});
    }
    return p;
  }
  void give(void* p) noexcept {
    if (p == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(m_);
      for (std::size_t i = 0; i < lent_.size(); ++i) {
        if (lent_[i].p != p) continue;
        if (scopes_ > 0) {
          try {
            cache_.push_back(lent_[i]);
          } catch (...) {
            break;  // no room to keep it: freed
          }
          lent_.erase(lent_.begin() + static_cast<std::ptrdiff_t>(i));
          return;
        }
        lent_.erase(lent_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    std::free(p);
  }
  void enter() {
    std::lock_guard<std::mutex> lock(m_);
    ++scopes_;
  }
  void leave() noexcept {
    std::vector<block> freed;
    {
      std::lock_guard<std::mutex> lock(m_);
      if (--scopes_ == 0) freed.swap(cache_);
    }
    for (const block& b : freed) std::free(b.p);
  }

 private:
  struct block {
    void* p;
    std::size_t bytes;
  };
  std::mutex m_;
  int scopes_ = 0;
  std::vector<block> cache_, lent_;  // freed and kept; handed out (large blocks while recycling)
};

// A build's span: blocks freed inside are recycled (fresh_pool), freed at the outermost one's end.
struct fresh_scope {
  fresh_scope() { fresh_pool::get().enter(); }
  ~fresh_scope() { fresh_pool::get().leave(); }
  fresh_scope(const fresh_scope&) = delete;
  fresh_scope& operator=(const fresh_scope&) = delete;
};

// An allocator for the large arrays that one parallel pass writes whole (the BVH's layouts): its
// blocks aligned to a cache line and faulted in by every thread (prefault), and, inside
// fresh_resize, the new elements left unwritten for that pass (no serial value-initialisation, a
// pass over memory as long as the parallel one that follows). Elsewhere a vector of it behaves as a
// std::vector: resize, push_back and copies initialise as usual. For implicit-lifetime types (an
// aggregate of numbers), whose objects the allocation itself creates.
inline thread_local bool fresh_unwritten = false;  // set only inside fresh_resize

template <class T>
struct fresh_allocator {
  using value_type = T;
  fresh_allocator() noexcept = default;
  template <class U>
  fresh_allocator(const fresh_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > SIZE_MAX / 2 / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(fresh_pool::get().take(n * sizeof(T), std::max<std::size_t>(alignof(T), 64)));
  }
  void deallocate(T* p, std::size_t) noexcept { fresh_pool::get().give(p); }
  template <class U>
  void construct(U* p) {
    if (!fresh_unwritten) ::new (static_cast<void*>(p)) U();
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(static_cast<A&&>(a)...);
  }
  template <class U>
  bool operator==(const fresh_allocator<U>&) const noexcept {
    return true;
  }
};

// A layout array: a std::vector over fresh_allocator.
template <class T>
using fresh_vector = std::vector<T, fresh_allocator<T>>;

// v grown to n elements left unwritten (the caller's parallel pass writes every one of them).
template <class T>
void fresh_resize(fresh_vector<T>& v, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  if (n > v.capacity()) v.reserve(n);
  fresh_unwritten = true;
  v.resize(n);  // no allocation (reserved): cannot throw
  fresh_unwritten = false;
}

template <class T>
void fresh_resize(std::vector<T>& v, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (n <= v.size()) {
    v.resize(n);
    return;
  }
  if ((n - v.size()) * sizeof(T) >= fresh_threshold) {
    if (n > v.capacity()) v.reserve(n);
    prefault(v.data() + v.size(), (n - v.size()) * sizeof(T));
  }
  v.resize(n);
}

struct fresh_free {
  void operator()(void* p) const { fresh_pool::get().give(p); }
};
template <class T>
using fresh_ptr = std::unique_ptr<T[], fresh_free>;

template <class T>
fresh_ptr<T> fresh_array(std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  if (n > SIZE_MAX / 2 / sizeof(T)) throw std::bad_alloc();
  // (a cache line; AVX lanes need 32)
  return fresh_ptr<T>(static_cast<T*>(fresh_pool::get().take(n * sizeof(T), std::max<std::size_t>(alignof(T), 64))));
}

}  // namespace sieve::render
