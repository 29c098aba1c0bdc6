#include "tests/actors/fakes.hpp"

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
constexpr std::int64_t max_gap = 1024;

broker::applied_entry dead(fake_broker& b, std::string reason) {
  b.dead_letter.push_back(reason);
  ++b.dead_lettered;
  broker::applied_entry result;
  result.result = broker::applied_entry::outcome::dead_lettered;
  result.reason = std::move(reason);
  return result;
}

/// Spends one of the failures `armed` still holds, if any: throws what an
/// unavailable Redis would, saying `what` went wrong.
void spend_failure(int& armed, const std::string& what) {
  if (armed > 0) {
    --armed;
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake broker: " + what);
  }
}

/// Why the built-in effect (effects/orders.lua) refuses an OrderPlaced's
/// payload, in its words, or "".
std::string order_problem(const std::string& payload_text) {
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

void fake_broker::fail_publishes(int count, broker::broker_errc code) {
  fail_next = count;
  fail_code = code;
}

std::vector<broker::event_entry> fake_broker::published() const {
  std::vector<broker::event_entry> all;
  for (const auto& batch : batches)
    all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

std::size_t fake_broker::times_published(const std::string& event_id) const {
  std::size_t count = 0;
  for (const auto& batch : batches)
    for (const auto& entry : batch)
      count += entry.event_id == event_id ? 1 : 0;
  return count;
}

std::vector<std::int64_t>
fake_broker::seqs_of(const std::string& aggregate_id) const {
  std::vector<std::int64_t> seqs;
  for (const auto& batch : batches)
    for (const auto& entry : batch)
      if (entry.aggregate_id == aggregate_id)
        seqs.push_back(entry.seq);
  return seqs;
}

fake_publish_port::fake_publish_port(std::shared_ptr<fake_broker> broker)
    : broker_(std::move(broker)) {}

void fake_publish_port::publish(
    const std::vector<broker::event_entry>& entries) {
  auto& b = *broker_;
  ++b.publish_calls;
  if (b.on_publish)
    b.on_publish();
  if (b.fail_next > 0) {
    --b.fail_next;
    throw broker::broker_error(b.fail_code, "fake broker: injected failure");
  }
  for (const auto& entry : entries) {
    if (b.poisoned_aggregates.count(entry.aggregate_id) > 0)
      throw broker::broker_error(broker::broker_errc::rejected,
                                 "fake broker: WRONGTYPE for aggregate " +
                                     entry.aggregate_id,
                                 broker::server_state::none, {}, {},
                                 broker::refusal_reason::wrong_type);
    if (b.poisoned_events.count(entry.event_id) > 0)
      throw broker::broker_error(broker::broker_errc::rejected,
                                 "fake broker: event " + entry.event_id +
                                     " is over max_entry_bytes",
                                 broker::server_state::none, {}, {},
                                 broker::refusal_reason::entry_too_large);
  }
  // Encode everything before pushing anything: all or nothing.
  std::vector<std::string> encoded;
  encoded.reserve(entries.size());
  for (const auto& entry : entries)
    encoded.push_back(broker::encode(entry));
  auto& list = b.lists[b.queue];
  list.insert(list.end(), encoded.begin(), encoded.end());
  b.batches.push_back(entries);
}

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
  spend_failure(broker_->fail_pops, "pop reply lost");
}

void fake_consume_port::maybe_fail_apply() {
  spend_failure(broker_->fail_applies, "apply failed");
}

void fake_consume_port::maybe_fail_remove() {
  spend_failure(broker_->fail_removes, "remove failed");
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
    return dead(b, bad->reason);
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
    for (auto s = last + 1; s < entry.seq && s <= last + max_gap; ++s)
      b.seq_gaps.insert(gap_of(s));
    if (entry.seq - 1 > last + max_gap)
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
    auto problem = order_problem(entry.payload);
    if (!problem.empty()) {
      // Set aside as the script does: its seq marked dead, its aggregate
      // moving on without it.
      b.seq_dead.insert(gap_of(entry.seq));
      advance();
      return dead(b, "effect failed: builtin:orders: OrderPlaced: " + problem);
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

namespace {

/// The recover script's move, traced: the processing list back at the
/// head of the queue, in order.
std::size_t move_back(fake_broker& b, const std::string& processing,
                      const std::string& queue) {
  if (processing == queue)
    throw std::invalid_argument("recover: the processing list is the queue");
  b.trace.push_back("recover " + processing);
  auto& in_flight = b.lists[processing];
  auto& target = b.lists[queue];
  auto moved = in_flight.size();
  target.insert(target.begin(), in_flight.begin(), in_flight.end());
  in_flight.clear();
  return moved;
}

} // namespace

std::size_t fake_consume_port::recover(const std::string& processing,
                                       const std::string& queue) {
  throw_if_fenced();
  return move_back(*broker_, processing, queue);
}

std::function<std::unique_ptr<actors::publish_port>()>
fake_publisher_factory(std::shared_ptr<fake_broker> broker) {
  return [broker] { return std::make_unique<fake_publish_port>(broker); };
}

std::function<std::unique_ptr<actors::consume_port>()>
fake_consume_port_factory(std::shared_ptr<fake_broker> broker) {
  return [broker] { return std::make_unique<fake_consume_port>(broker); };
}

fake_pipeline_port::fake_pipeline_port(std::shared_ptr<fake_pipeline> pipeline)
    : pipeline_(std::move(pipeline)) {}

namespace {

/// The fake's database as its snapshot shows it, with a change mark that
/// moves whenever its counts do (as a commit moves the real one); a test
/// may move it alone through database_mark.
metrics::pipeline_snapshot with_change_mark(metrics::pipeline_snapshot s,
                                            bool marked) {
  if (!marked) {
    s.database_mark.reset();
    return s;
  }
  // Unsigned: a hash that wraps, which signed overflow may not.
  auto mark = static_cast<std::uint64_t>(s.database_mark.value_or(0));
  for (auto n :
       {s.orders, s.outbox_rows, s.pending, s.sending, s.published, s.failed})
    mark = mark * 1'000'003u + static_cast<std::uint64_t>(n);
  s.database_mark = static_cast<std::int64_t>(mark >> 1);
  return s;
}

} // namespace

metrics::pipeline_snapshot fake_pipeline_port::snapshot() {
  ++pipeline_->snapshots;
  return with_change_mark(pipeline_->source ? pipeline_->source()
                                            : pipeline_->snapshot,
                          pipeline_->marked);
}

metrics::pipeline_snapshot fake_pipeline_port::drain_snapshot() {
  ++pipeline_->drain_reads;
  auto full = with_change_mark(pipeline_->source ? pipeline_->source()
                                                 : pipeline_->snapshot,
                               pipeline_->marked);
  metrics::pipeline_snapshot drain;
  drain.pending = full.pending + full.sending > 0 ? 1 : 0;
  drain.database_mark = full.database_mark;
  metrics::copy_redis_figures(full, drain);
  drain.trouble = full.trouble;
  drain.database_answered = full.database_answered;
  drain.redis_answered = full.redis_answered;
  drain.outage = full.outage;
  return drain;
}

std::size_t fake_pipeline_port::recover_consumer(const std::string& consumer,
                                                 const std::string& token,
                                                 const recovery_step& step) {
  pipeline_->recovered_consumers.push_back(consumer);
  pipeline_->recovery_tokens.push_back(token);
  if (pipeline_->on_recover_consumer)
    pipeline_->on_recover_consumer(consumer);
  return recover_if([&](const std::string& name) { return name == consumer; },
                    token, step);
}

std::size_t fake_pipeline_port::recover_all(const std::string& token,
                                            const recovery_step& step) {
  ++pipeline_->recover_all_calls;
  pipeline_->recovery_tokens.push_back(token);
  return recover_if([](const std::string&) { return true; }, token, step);
}

std::pair<std::string, bool> fake_pipeline_port::audit() {
  ++pipeline_->audits;
  if (pipeline_->audit_outages > 0) {
    --pipeline_->audit_outages;
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "Redis at 127.0.0.1:1 failed during HSCAN: "
                               "Connection reset by peer");
  }
  return pipeline_->verdict;
}

std::string fake_pipeline_port::acquire_consumer_lock(const std::string& token,
                                                      std::int64_t) {
  if (pipeline_->lock_unreachable)
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake: Redis unreachable");
  if (pipeline_->lock_holder.empty())
    pipeline_->lock_holder = token;
  return pipeline_->lock_holder;
}

std::string fake_pipeline_port::renew_consumer_lock(const std::string&,
                                                    std::int64_t) {
  if (pipeline_->lock_unreachable)
    throw broker::broker_error(broker::broker_errc::unavailable,
                               "fake: Redis unreachable");
  return pipeline_->lock_holder;
}

void fake_pipeline_port::release_consumer_lock(const std::string& token) {
  ++pipeline_->lock_releases;
  if (pipeline_->lock_holder == token)
    pipeline_->lock_holder.clear();
}

void fake_pipeline_port::note_relays(const std::string& process, int relays,
                                     std::int64_t) {
  pipeline_->relay_notes.emplace_back(process, relays);
}

void fake_pipeline_port::relays_stopped(const std::string& process) {
  pipeline_->relay_notes.emplace_back(process, -1);
}

std::size_t fake_pipeline_port::recover_if(
    const std::function<bool(const std::string&)>& match,
    const std::string& token, const recovery_step& step) {
  auto check_fence = [&] {
    if (!token.empty() && pipeline_->lock_holder != token)
      throw broker::broker_error(broker::broker_errc::fenced,
                                 "OUTBOX_FENCED fake: the lock is " +
                                     pipeline_->lock_holder + "'s, not " +
                                     token + "'s");
  };
  if (!pipeline_->broker) {
    check_fence(); // the real port makes one script call at least
    return 0;
  }
  // Collect first: recovering inserts into the map being walked.
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& item : pipeline_->broker->lists) {
    const auto& list = item.first;
    auto queue = pipeline_->names.queue_of(list);
    auto slash = list.rfind('/');
    if (queue && slash != std::string::npos && match(list.substr(slash + 1)))
      found.emplace_back(list, *queue);
  }
  // The pipeline's fence is its lock token, not the consumers' flag.
  if (found.empty())
    check_fence();
  std::size_t moved = 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    check_fence();
    auto here = move_back(*pipeline_->broker, found[i].first, found[i].second);
    moved += here;
    if (step)
      step(here, found.size() - i - 1);
  }
  return moved;
}

std::function<std::unique_ptr<actors::pipeline_port>()>
fake_probe_factory(std::shared_ptr<fake_pipeline> pipeline) {
  return [pipeline] { return std::make_unique<fake_pipeline_port>(pipeline); };
}

} // namespace outbox::test
