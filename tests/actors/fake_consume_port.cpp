#include "tests/actors/fake_consume_port.hpp"

#include "broker/broker_error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace outbox::test {

namespace {

/// How many skipped seqs of an aggregate the inbox remembers one by one.
constexpr std::int64_t fake_inbox_max_gap = 1024;

broker::applied_entry fake_dead_letter(fake_broker& b, std::string reason) {
  b.dead_letter.push_back(reason);
  ++b.dead_lettered;
  broker::applied_entry result;
  result.result = broker::applied_entry::outcome::dead_lettered;
  result.reason = std::move(reason);
  return result;
}

/// Spends one of the failures `armed` still holds, if any: throws what an
/// unavailable Redis would, saying `what` went wrong.
void spend_fake_failure(int& armed, const std::string& what) {
  if (armed > 0) {
    --armed;
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake broker: " + what);
  }
}

/// Why the built-in effect (effects/orders.lua) refuses an OrderPlaced's
/// payload, in its words, or "".
std::string fake_order_problem(const std::string& payload_text) {
  auto payload = nlohmann::json::parse(payload_text);
  auto sku = payload.contains("sku") ? payload["sku"] : nlohmann::json{};
  if (!sku.is_string() || sku.get<std::string>().empty())
    return "payload.sku must be a non-empty string";
  if (!broker::clean_text(sku.get<std::string>()))
    return "payload.sku must be UTF-8 text without control characters";
  auto qty = payload.contains("qty") ? payload["qty"] : nlohmann::json{};
  constexpr double max_integer = 9007199254740992.0;
  if (!qty.is_number() || qty.get<double>() != std::floor(qty.get<double>()) ||
      qty.get<double>() < 1 || qty.get<double>() > max_integer)
    return "payload.qty must be an integer >= 1 (at most 2^53)";
  return "";
}

} // namespace

fake_consume_port::fake_consume_port(std::shared_ptr<fake_broker> broker)
    : broker_(std::move(broker)) {}

bool fake_consume_port::wait_for_doorbell(
    const std::vector<std::string>& doorbells, int) {
  const std::string suffix = ":ready"; // broker::keys::doorbell_for
  broker_->trace.push_back("wait doorbells");
  for (const auto& doorbell : doorbells) {
    auto list = doorbell.substr(0, doorbell.size() - suffix.size());
    if (!broker_->lists[list].empty())
      return true;
  }
  return false;
}

std::vector<std::string>
fake_consume_port::pop_batch(const std::string& queue,
                             const std::string& processing,
                             std::size_t max_entries, std::size_t max_bytes) {
  if (processing == queue)
    throw std::invalid_argument("pop_batch: the processing list is the queue");
  throw_if_fenced();
  auto& source = broker_->lists[queue];
  auto& target = broker_->lists[processing];
  std::vector<std::string> batch;
  std::size_t bytes = 0;
  while (batch.size() < max_entries && !source.empty() &&
         (batch.empty() || bytes + source.front().size() <= max_bytes)) {
    bytes += source.front().size();
    batch.push_back(std::move(source.front()));
    source.pop_front();
    target.push_back(batch.back());
    broker_->trace.push_back("pop " + processing);
  }
  maybe_fail_pop();
  return batch;
}

void fake_consume_port::throw_if_fenced() {
  if (broker_->fenced)
    throw broker::broker_error(broker::broker_errc::fenced,
                               "fake broker: OUTBOX_FENCED by another holder");
}

void fake_consume_port::maybe_fail_pop() {
  spend_fake_failure(broker_->fail_pops, "pop reply lost");
}

void fake_consume_port::maybe_fail_apply() {
  spend_fake_failure(broker_->fail_applies, "apply failed");
}

void fake_consume_port::maybe_fail_remove() {
  spend_fake_failure(broker_->fail_removes, "remove failed");
}

broker::applied_entry fake_consume_port::apply(const std::string& text) {
  broker_->trace.push_back("apply 1");
  maybe_fail_apply();
  return apply_one(text);
}

std::vector<broker::applied_entry>
fake_consume_port::apply_batch(const std::vector<std::string>& entries) {
  broker_->trace.push_back("apply " + std::to_string(entries.size()));
  throw_if_fenced();
  maybe_fail_apply();
  std::vector<broker::applied_entry> results;
  for (const auto& text : entries)
    results.push_back(apply_one(text));
  return results;
}

broker::applied_entry fake_consume_port::apply_one(const std::string& text) {
  auto& b = *broker_;
  auto decoded = broker::decode(text);
  if (auto* bad = std::get_if<broker::malformed_entry>(&decoded)) {
    if (!b.dead_malformed.emplace(text, bad->reason).second) {
      ++b.duplicates;
      broker::applied_entry copy;
      copy.result = broker::applied_entry::outcome::duplicate;
      return copy;
    }
    return fake_dead_letter(b, bad->reason);
  }
  // decode() refuses what the script refuses, with its reasons: what is
  // left applies, or is set aside when the built-in effect refuses it.
  auto& entry = std::get<broker::event_entry>(decoded);
  auto order_placed = entry.event_type == "OrderPlaced";
  broker::applied_entry result;
  result.committed_at = entry.committed_at;
  auto& last = b.aggregate_seq[entry.aggregate_id];
  auto gap_of = [&](std::int64_t seq) {
    return entry.aggregate_id + ":" + std::to_string(seq);
  };
  // The aggregate's applied seq moves to this one, remembering the seqs a
  // jump skipped (the script's advance()).
  auto advance = [&] {
    b.seq_gaps.erase(gap_of(entry.seq));
    for (auto s = last + 1; s < entry.seq && s <= last + fake_inbox_max_gap;
         ++s)
      b.seq_gaps.insert(gap_of(s));
    if (entry.seq - 1 > last + fake_inbox_max_gap)
      b.seq_overflow.insert(entry.aggregate_id);
    last = std::max(last, entry.seq);
  };
  auto skipped = b.seq_gaps.count(gap_of(entry.seq)) != 0 ||
                 b.seq_overflow.count(entry.aggregate_id) != 0;
  // As the inbox script: at or below the applied seq and not a seq a jump
  // skipped, it was applied already (even if its record is gone); else
  // HSETNX processed decides, and the effect goes with the record.
  if ((entry.seq <= last &&
       (!skipped || b.seq_dead.count(gap_of(entry.seq)) != 0)) ||
      b.processed.count(entry.event_id) != 0) {
    ++b.duplicates;
    result.result = broker::applied_entry::outcome::duplicate;
    return result;
  }
  if (order_placed) {
    auto problem = fake_order_problem(entry.payload);
    if (!problem.empty()) {
      // Set aside as the script does: its seq marked dead, its aggregate
      // moving on without it.
      b.seq_dead.insert(gap_of(entry.seq));
      advance();
      return fake_dead_letter(
          b, "effect failed: builtin:orders: OrderPlaced: " + problem);
    }
    auto payload = nlohmann::json::parse(entry.payload);
    b.reserved[payload["sku"].get<std::string>()] +=
        payload["qty"].get<std::int64_t>();
  }
  b.processed.emplace(entry.event_id, entry.event_type);
  result.order_violation = entry.seq != last + 1;
  if (result.order_violation)
    ++b.order_violations;
  advance();
  ++b.consumed;
  return result;
}

void fake_consume_port::remove(const std::string& processing,
                               const std::string& entry) {
  throw_if_fenced();
  broker_->trace.push_back("remove " + processing);
  maybe_fail_remove();
  remove_one(processing, entry);
}

std::size_t
fake_consume_port::remove_batch(const std::string& processing,
                                const std::vector<std::string>& entries) {
  throw_if_fenced();
  broker_->trace.push_back("remove " + processing);
  maybe_fail_remove();
  std::size_t removed = 0;
  for (const auto& entry : entries)
    removed += remove_one(processing, entry) ? 1 : 0;
  return removed;
}

bool fake_consume_port::remove_one(const std::string& processing,
                                   const std::string& entry) {
  // LREM processing 1 entry: the oldest copy.
  auto& list = broker_->lists[processing];
  auto i = std::find(list.begin(), list.end(), entry);
  if (i == list.end())
    return false;
  list.erase(i);
  return true;
}

std::size_t fake_consume_port::recover(const std::string& processing,
                                       const std::string& queue) {
  throw_if_fenced();
  return broker_->move_back(processing, queue);
}

std::function<std::unique_ptr<actors::consume_port>()>
fake_consume_port_factory(std::shared_ptr<fake_broker> broker) {
  return [broker] { return std::make_unique<fake_consume_port>(broker); };
}

} // namespace outbox::test
