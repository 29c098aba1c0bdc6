#include "broker/inbox_reader.hpp"

#include "broker/connection.hpp"
#include "broker/dropped_dead_letters.hpp"
#include "broker/hash_scan.hpp"
#include "broker/older_reservation.hpp"
#include "text/json_text.hpp"

#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <optional>
#include <string>

namespace outbox::broker {

namespace {

std::int64_t hash_length(connection& conn, const std::string& key) {
  return conn.command({"HLEN", key})->integer;
}

/// A decimal integer as Redis's HINCRBY writes it, or nothing.
std::optional<std::int64_t> integer_of(const std::string& text) {
  std::int64_t value = 0;
  auto end = text.data() + text.size();
  auto [at, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc{} || at != end || text.empty())
    return std::nullopt;
  return value;
}

/// Names a value that is not an integer, quoting a bounded prefix of it.
std::string not_an_integer(const std::string& where, const std::string& text) {
  constexpr std::size_t shown = 40;
  return where + " is not an integer: " +
         text::json_text(nlohmann::json(text.substr(0, shown))) +
         (text.size() > shown ? "..." : "");
}

/// Reads a hash of integers, handing each to `on_value(field, n)`; what does
/// not parse becomes a finding in `malformed`.
template <class OnValue>
void read_integers(connection& conn, const std::string& key, OnValue on_value,
                   std::vector<std::string>& malformed) {
  scan_hash(conn, key, 1000, [&](hash_page& page) {
    for (auto& [field, value] : page) {
      if (auto n = integer_of(value))
        on_value(field, *n);
      else
        malformed.push_back(not_an_integer(key + "[" + field + "]", value));
    }
  });
}

/// Reads a hash of integers into `into`.
void read_integers(connection& conn, const std::string& key,
                   std::map<std::string, std::int64_t>& into,
                   std::vector<std::string>& malformed) {
  read_integers(
      conn, key,
      [&into](const std::string& field, std::int64_t n) { into[field] = n; },
      malformed);
}

/// An integer field of the trim summary (0 when absent); a malformed one
/// is a finding.
std::int64_t summary_field(connection& conn, const keys& names,
                           const char* field,
                           std::vector<std::string>* malformed) {
  auto reply = conn.command({"HGET", names.trimmed_summary(), field});
  if (reply->type != REDIS_REPLY_STRING)
    return 0;
  auto text = reply_text(*reply);
  if (auto n = integer_of(text))
    return *n;
  if (malformed != nullptr)
    malformed->push_back(
        not_an_integer(names.trimmed_summary() + "[" + field + "]", text));
  return 0;
}

/// The fields of the gaps hash, "<aggregate_id>:<seq>" or
/// "<aggregate_id>:overflow" (aggregate ids may hold ':', the suffix does
/// not); a field of neither shape is a finding.
void read_gaps(connection& conn, const keys& names, inbox_sink& sink,
               std::vector<std::string>& malformed) {
  scan_hash(conn, names.seq_gaps(), 1000, [&](hash_page& page) {
    for (auto& [field, mark] : page) {
      auto colon = field.rfind(':');
      auto suffix =
          colon == std::string::npos ? std::string{} : field.substr(colon + 1);
      auto seq = integer_of(suffix);
      if (suffix == "overflow")
        sink.gap(field.substr(0, colon), 0, mark);
      else if (seq && *seq > 0)
        sink.gap(field.substr(0, colon), *seq, mark);
      else
        malformed.push_back(names.seq_gaps() +
                            " has a field that names no "
                            "seq: " +
                            text::json_text(nlohmann::json(field)));
    }
  });
}

} // namespace

inbox_snapshot read_inbox(connection& conn, const keys& names,
                          inbox_sink& sink) {
  inbox_snapshot snapshot;
  read_waiting(conn, names,
               [&sink](const std::string& event_id, waiting_place where) {
                 sink.waiting(event_id, where);
               });
  // After the dead-letter list: a drop removes the records and keeps the
  // decision in one script, so an id missed in the list (dropped after it
  // was read) is among the decisions read now.
  // A value `drop` did not write (set by hand, cut short) is no decision:
  // it is named, and excuses nothing.
  for (const auto& [event_id, decision] :
       read_dropped_dead_letters(conn, names)) {
    if (decision.problem.empty())
      sink.waiting(event_id, waiting_place::dropped);
    else
      snapshot.malformed.push_back(
          names.dead_letter_dropped() + "[" + event_id +
          "] is not a drop decision: " + decision.problem);
  }
  auto before = hash_length(conn, names.processed);
  auto trimmed_before_read = summary_field(conn, names, "records", nullptr);
  scan_hash(conn, names.processed, 1000,
            [&](hash_page& page) { sink.processed(page); });
  // After `processed`: an event applied in between has its seq here, and
  // was applied, so it is not taken for lost.
  if (trimmed_before_read > 0) {
    read_integers(
        conn, names.aggregate_seq,
        [&sink](const std::string& aggregate, std::int64_t seq) {
          sink.applied_seq(aggregate, seq);
        },
        snapshot.malformed);
    read_gaps(conn, names, sink, snapshot.malformed);
  }
  read_integers(conn, names.reserved, snapshot.reserved, snapshot.malformed);
  // A keyspace an older version filled (older_reservation.hpp).
  auto older = older_reservation(names);
  auto left = conn.command({"EXISTS", older});
  if (left->type == REDIS_REPLY_INTEGER && left->integer == 1)
    snapshot.malformed.push_back(
        older +
        " is the reservation of an older outbox: a consumer of this "
        "version merges it into " +
        names.reserved + " as it starts");
  read_integers(conn, names.trimmed_reserved(), snapshot.trimmed_reserved,
                snapshot.malformed);
  read_integers(
      conn, names.trimmed_aggregates(),
      [&sink](const std::string& aggregate, std::int64_t n) {
        sink.trimmed(aggregate, n);
      },
      snapshot.malformed);
  snapshot.trimmed_before =
      summary_field(conn, names, "before", &snapshot.malformed);
  auto after = hash_length(conn, names.processed);
  snapshot.trimmed_records =
      summary_field(conn, names, "records", &snapshot.malformed);
  snapshot.consistent = before == after &&
                        trimmed_before_read == snapshot.trimmed_records &&
                        after == sink.processed_count();
  return snapshot;
}

namespace {

/// Keeps everything in the snapshot's maps.
class snapshot_sink : public inbox_sink {
public:
  explicit snapshot_sink(inbox_snapshot& into) : into_(into) {}
  void processed(hash_page& page) override {
    for (auto& [id, result] : page)
      into_.processed.emplace(std::move(id), std::move(result));
  }
  void trimmed(const std::string& aggregate, std::int64_t n) override {
    into_.trimmed_by_aggregate[aggregate] = n;
  }
  std::int64_t processed_count() override {
    return static_cast<std::int64_t>(into_.processed.size());
  }
  void waiting(const std::string& event_id, waiting_place where) override {
    into_.waiting.emplace(event_id, where);
  }
  void applied_seq(const std::string& aggregate, std::int64_t seq) override {
    into_.applied_seqs[aggregate] = seq;
  }
  void gap(const std::string& aggregate, std::int64_t seq,
           const std::string& mark) override {
    into_.gaps[{aggregate, seq}] = mark;
  }

private:
  inbox_snapshot& into_;
};

} // namespace

inbox_snapshot read_inbox(connection& conn, const keys& names) {
  inbox_snapshot maps;
  snapshot_sink sink{maps};
  auto snapshot = read_inbox(conn, names, sink);
  snapshot.processed = std::move(maps.processed);
  snapshot.trimmed_by_aggregate = std::move(maps.trimmed_by_aggregate);
  snapshot.waiting = std::move(maps.waiting);
  snapshot.applied_seqs = std::move(maps.applied_seqs);
  snapshot.gaps = std::move(maps.gaps);
  return snapshot;
}

} // namespace outbox::broker
