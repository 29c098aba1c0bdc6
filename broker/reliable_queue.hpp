#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/fence.hpp"
#include "broker/lua_script.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace outbox::broker {

/// What pop_batch does with an entry bigger than a consumer takes
/// (broker.max_consume_bytes): it never hands it over, but dead-letters it
/// in the same script call, keeping only its first `max_kept` bytes and its
/// size. Such a record cannot be replayed, so the limit must stay at or
/// above the largest broker.max_entry_bytes any relay published with.
struct oversized_entries {
  /// broker.max_consume_bytes; 0: no limit, every entry is handed over.
  std::size_t max_consume_bytes = 0;
  /// Where it goes (keys::dead_letter), and the hash whose
  /// `dead_lettered` counts it (keys::counters).
  std::string dead_letter;
  std::string counters;
  /// How much of it the record keeps (the inbox keeps 64 KiB of the
  /// entries it dead-letters; never more than the limit itself).
  std::size_t max_kept = 65536;
};

/// The consumer's side of a list: an entry is moved atomically from the
/// queue to the consumer's own processing list, applied, then removed there.
/// A consumer that dies leaves its entries in its processing list until
/// recover() puts them back.
class reliable_queue {
public:
  /// With an active `fenced_by`, pop_batch, remove, remove_batch and
  /// recover first check, in the same script, that this process still holds
  /// the consumers' lock, and throw broker_error(fenced), moving nothing,
  /// when it does not: a process that lost the lock cannot touch the lists
  /// of the one that took it over.
  /// With `oversized` limited, pop_batch dead-letters the entries over it.
  explicit reliable_queue(connection& conn, fence fenced_by = {},
                          oversized_entries oversized = {});

  /// Moves the head of `queue` to the tail of `processing` (BLMOVE LEFT
  /// RIGHT), waiting up to `timeout_ms` (0: do not wait). Nothing on timeout.
  /// Hands over any entry, whatever its size: the consumer pops with
  /// pop_batch, which enforces the limit.
  /// Unfenced only (a blocking move cannot check the lock): with a fence it
  /// throws std::logic_error; a fenced consumer uses pop_batch.
  std::optional<std::string> pop(const std::string& queue,
                                 const std::string& processing, int timeout_ms);

  /// Waits up to `timeout_ms` for a token on any of `doorbells` (BLPOP),
  /// which publishers push with every publish (keys::doorbell_for). Returns
  /// whether one came: a hint that a queue has entries, never a promise.
  bool wait_for_doorbell(const std::vector<std::string>& doorbells,
                         int timeout_ms);

  /// Moves up to `max_entries` entries from the head of `queue` to the tail
  /// of `processing` in one atomic step (one Lua script, one round trip),
  /// oldest first, and returns them. Stops before the entry that would take
  /// the batch over `max_bytes`, but always takes at least one, so a big
  /// entry cannot stall the queue. An entry over the oversized limit is
  /// dead-lettered instead (see oversized_entries), counting in the batch's
  /// entries and bytes. Never waits: empty when the queue is (or when all
  /// it took was set aside).
  std::vector<std::string> pop_batch(const std::string& queue,
                                     const std::string& processing,
                                     std::size_t max_entries,
                                     std::size_t max_bytes);

  /// The sizes of the entries pop_batch dead-lettered for their size since
  /// the last call, oldest first; clears them.
  std::vector<std::size_t> take_set_aside();

  /// Removes one applied entry from the processing list.
  void remove(const std::string& processing, const std::string& entry);

  /// Removes applied entries from the processing list in one round trip,
  /// with the same result as remove() on each in order. Returns how many
  /// were found and removed. Sends each entry's SHA-1, not the entry: the
  /// script compares digests inside Redis.
  std::size_t remove_batch(const std::string& processing,
                           const std::vector<std::string>& entries);

  /// Puts a dead consumer's in-flight entries back at the HEAD of `queue`, in
  /// their original order, ahead of everything still queued (they were popped
  /// first). Atomic (one Lua script), and counted in the hash `counters`
  /// (keys::counters) as `recovered`. Returns how many were moved.
  std::size_t recover(const std::string& processing, const std::string& queue,
                      const std::string& counters);

  /// Lists every list under `prefix` (SCAN), processing lists or not: see
  /// recovery_lists.hpp for those recovery may move.
  std::vector<std::string> processing_lists(const std::string& prefix);

private:
  /// The lock key the scripts check, or `placeholder` (a key the call
  /// already names) when there is no fence.
  const std::string& lock_key(const std::string& placeholder) const;

  connection& conn_;
  fence fence_;
  oversized_entries oversized_;
  std::vector<std::size_t> set_aside_;
  lua_script pop_batch_script_;
  lua_script remove_batch_script_;
  lua_script recover_script_;
};

} // namespace outbox::broker
