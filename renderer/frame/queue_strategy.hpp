// What `auto` runs as for the renderer's path queue, and why. The library's `auto` ranks strategies
// by calls sized to their live count; the renderer launches its compaction over the wave's capacity
// with the live count on the device (a graph replays the same launches whatever the count), and its
// pass queue moves 48-byte records of four columns. The choice here is the one measured in that
// regime, scene by scene, by `sieve bench render` (docs/strategies.md, "auto in the renderer").
#pragma once

#include <sieve/compaction.hpp>

#include <cstddef>
#include <string>

namespace sieve::render {

struct queue_strategy {
  sieve::strategy strategy;  // never auto
  std::string reason;        // one line: what was asked, what runs and why
};

// The strategy that compacts a queue of `queue`'s shape (capacity and record) in form f on backend b
// when `asked` names it (`auto` resolved), with the reason shown by `sieve render`.
queue_strategy pick_queue_strategy(const sieve::strategy& asked, sieve::backend b, sieve::form f, bool in_place,
                                   const sieve::record& queue, std::size_t removed);

}  // namespace sieve::render
