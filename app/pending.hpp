// keep_pending: drops the finished entries of two parallel lists, requests and the buffers they
// fill, keeping the others in order (the split render's tile receives, app/mpi.cpp).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace sieve::app {

// Keeps the entries whose request is not `done`, in order. An entry never moves onto itself: a
// std::vector moved onto itself frees its buffer, which a receive still under way writes into.
template <class Request, class Item>
void keep_pending(std::vector<Request>& requests, std::vector<Item>& items, const Request& done) {
  std::size_t keep = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == done) continue;
    if (keep != i) {
      requests[keep] = requests[i];
      items[keep] = std::move(items[i]);
    }
    ++keep;
  }
  requests.resize(keep);
  items.resize(keep);
}

}  // namespace sieve::app
