// The checks every multisplit call makes before anything moves, on either backend.
#include <sieve/compaction/error.hpp>
#include <sieve/compaction/multisplit.hpp>

#include "internal/multisplit_table.hpp"
#include "internal/validate.hpp"

#include <string>

namespace sieve::detail {

void validate_multisplit(const const_record& in, const record& out, bool in_place, std::size_t key_count,
                         unsigned buckets, std::size_t offset_count) {
  if (buckets < 1 || buckets > multisplit_max_buckets)
    throw error("multisplit: " + std::to_string(buckets) + " buckets; 1 to 256");
  if (offset_count < std::size_t{buckets} + 1)
    throw error("multisplit: offsets has " + std::to_string(offset_count) + " entries, needs buckets + 1 = " +
                std::to_string(buckets + 1));
  if (key_count < in.size())
    throw error("multisplit: " + std::to_string(key_count) + " bucket ids for " + std::to_string(in.size()) + " items");
  // Shapes, room for every item, no overlap: as for compaction with a selection of no size.
  static constexpr auto every = [](std::size_t) { return true; };
  validate_call(in, out, predicate(every), in_place);
}

}  // namespace sieve::detail
