// The eight steps of seed 000's lab: each drives the real actors through the
// coordinator's mechanics and explains what just happened.

#include "lab/steps.hpp"

#include "actors/messages.hpp"
#include "lab/dualwrite.hpp"
#include "storage/database.hpp"
#include "storage/private_files.hpp"
#include "storage/types.hpp"

#include <caf/all.hpp>

#include <array>
#include <chrono>
#include <filesystem>

namespace outbox::lab {

// The lab drives the pipeline's own actors and messages.
using namespace outbox::actors;

namespace {

using std::chrono::seconds;

// --- relay runs (relay, order_check, relay_crash) --------------------------

/// Whether the relay is done: nothing PENDING or SENDING. Says once why it
/// waits when another relay's lease still holds rows.
bool relay_drained(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto now = lab_now(self);
  auto p = view(self).outbox(now);
  view(self).queue(); // Redis going away fails the step instead of a wait
  if (p.drained())
    return true;
  for (const auto& lease : p.leases) {
    if (lease.owner == st.relay_name || lease.earliest_expiry <= now ||
        st.told_waiting)
      continue;
    st.told_waiting = true;
    auto wait = str(lease.earliest_expiry - now);
    auto ttl = str(st.setup.settings.lease.ttl);
    lab_say(self, "Waiting " + wait + " ms: " + str(lease.rows) +
                      " row(s) are SENDING under the lease of " + lease.owner +
                      ", a relay that published without acknowledging.");
    lab_say(self,
            "  Nobody may take them over before that lease expires (ttl " +
                ttl +
                " ms in the lab): its holder might still be alive "
                "and about to acknowledge.");
  }
  return false;
}

} // namespace

void lab_relay_until_drained(lab_coordinator_actor* self,
                             std::function<void()> then) {
  lab_spawn_relay(self, false);
  lab_wait_until(
      self, "the relay to publish every PENDING row",
      [self] { return relay_drained(self); },
      [self, then] { lab_stop_children(self, then); });
}

namespace {

// --- init, dualwrite, place_order ------------------------------------------

void init(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto path = st.setup.files.app_db();
  bool existed = std::filesystem::exists(path);
  if (!existed && !st.setup.reset_first) {
    // A new app.db starts a new lab: queue entries, dedup records and
    // outputs of an older one would falsify every count that follows.
    lab_say(self, "No app.db yet: starting a new lab, so resetting what an "
                  "older one left:");
    for (const auto& line : view(self).reset())
      lab_say(self, "  " + line);
  }
  storage::connect(st.setup.settings.db, storage::open_mode::migrated);
  lab_say(self, (existed ? "Migrated " : "Created ") + path.string() +
                    " (schema version " + str(storage::schema_version) +
                    (existed ? "; nothing was removed)" : ")"));
  lab_say(self, "  orders(id, sku, qty, ...) holds the business fact;");
  lab_say(self,
          "  outbox(event_id, aggregate_id, seq, event_type, payload, "
          "status DEFAULT 'PENDING', ...) holds the intent to publish it;");
  lab_say(self, "  index outbox_pending ON outbox(status) WHERE "
                "status='PENDING' lets a relay find unsent rows without "
                "reading the published history.");
  lab_step_done(self);
}

void dualwrite(lab_coordinator_actor* self) {
  auto& files = self->state.setup.files;
  auto out = naive_dual_write(files, view(self).redis());
  if (out.publish_error.empty() || out.orders == out.published)
    throw std::runtime_error("the staged broker outage did not make the "
                             "publish fail (orders=" +
                             str(out.orders) +
                             " published=" + str(out.published) + ")");
  storage::write_file_replacing(
      files.dualwrite_out(), out.line() + "\norder " + str(out.order_id) +
                                 " saved in " + files.dualwrite_db().string() +
                                 "; publish to " + out.broker +
                                 " failed: " + out.publish_error + "\n");
  lab_say(self, "Saved order " + str(out.order_id) + " in " +
                    files.dualwrite_db().string() +
                    " (committed), then published its event to the broker "
                    "at " +
                    out.broker +
                    " (a staged outage: a port that "
                    "refuses):");
  lab_say(self, "  " + out.publish_error);
  lab_say(self, out.line() + "  ->  " + files.dualwrite_out().string());
  lab_say(self, "  The database said yes, the broker said no, and nothing "
                "remembers the difference: the event is lost for good.");
  lab_say(self, "  (This demo keeps its orders in dualwrite.db, so app.db's "
                "orders stay the outbox's alone.)");
  lab_step_done(self);
}

void place_order(lab_coordinator_actor* self) {
  static const std::array<const char*, 3> skus = {"SKU-LAMP", "SKU-DESK",
                                                  "SKU-CHAIR"};
  auto placed = view(self).outbox(lab_now(self)).orders;
  auto sku = std::string{skus[static_cast<std::size_t>(placed) % 3]};
  auto qty = static_cast<std::int64_t>(placed % 3 + 1);
  lab_spawn_writer(self, self->state.setup.clock);
  self->request(self->state.writer, seconds(30), place_atom_v, std::string{},
                sku, qty)
      .then(
          [self, sku, qty](const order_receipt& r) {
            lab_guard(self, [self, r, sku, qty] {
              auto p = view(self).outbox(lab_now(self));
              lab_say(self, "The writer committed order " + str(r.order_id) +
                                " (" + sku + " x" + str(qty) +
                                ") and its OrderPlaced outbox row " +
                                r.event_id + " in ONE transaction.");
              lab_say(self,
                      "  app.db now: orders=" + str(p.orders) +
                          ", outbox rows=" +
                          str(p.pending + p.sending + p.published + p.failed) +
                          " (" + str(p.pending) + " PENDING).");
              lab_say(self, "  Both rows exist or neither does: the event "
                            "can no longer be lost, only delayed until a "
                            "relay runs.");
              lab_step_done(self);
            });
          },
          [self](caf::error& err) {
            lab_fail(self, "the writer could not place the order: " +
                               self->system().render(err));
          });
}

// --- relay, order_check ----------------------------------------------------

void relay_step(lab_coordinator_actor* self) {
  auto& st = self->state;
  st.before = view(self).queue().queued;
  auto p = view(self).outbox(lab_now(self));
  lab_say(self, "Relay: " + str(p.pending) + " PENDING and " + str(p.sending) +
                    " SENDING rows; LLEN outbox.events = " + str(st.before) +
                    ".");
  lab_relay_until_drained(self, [self] {
    auto& st = self->state;
    auto q = view(self).queue();
    auto p = view(self).outbox(lab_now(self));
    lab_say(self, "RPUSHed " + str(q.queued - st.before) +
                      " entries to outbox.events (LLEN " + str(st.before) +
                      " -> " + str(q.queued) + "); PUBLISHED rows: " +
                      str(p.published) + ", PENDING: " + str(p.pending) +
                      (p.failed > 0 ? ", FAILED: " + str(p.failed) : "") + ".");
    lab_say(self, "  Each row is marked PUBLISHED after its push, so running "
                  "the relay again finds nothing PENDING: the list does not "
                  "grow.");
    lab_step_done(self);
  });
}

void check_order(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto rows = view(self).aggregate_rows(st.aggregate_id);
  std::string seqs;
  for (const auto& row : rows)
    seqs += (seqs.empty() ? "" : ",") + str(row.seq);
  lab_say(self, "Aggregate " + st.aggregate_id + ": seq " + seqs +
                    ", every one created_at=" +
                    str(rows.empty() ? 0 : rows.front().created_at) +
                    " (the same millisecond).");
  auto verdict = check_queue_order(view(self).queue_entries());
  auto file = st.setup.files.order_check_out();
  if (!verdict.ok()) {
    std::string text = "ORDER VIOLATION\n";
    for (const auto& problem : verdict.problems)
      text += problem + "\n";
    storage::write_file_replacing(file, text);
    lab_fail(self, "order_check: events left out of seq order:\n  " +
                       verdict.problems.front() + " (see " + file.string() +
                       ")");
    return;
  }
  storage::write_file_replacing(file, "ORDER OK\n");
  lab_say(self, "ORDER OK  ->  " + file.string() + " (" +
                    str(static_cast<std::int64_t>(verdict.entries)) +
                    " entries of " +
                    str(static_cast<std::int64_t>(verdict.aggregates)) +
                    " aggregates in outbox.events, first deliveries in "
                    "ascending seq)");
  lab_say(self, "  Sorting by timestamp could not tell these events apart; "
                "seq, allocated in the writing transaction, can. The relay "
                "claims by seq and never publishes seq n+1 before n.");
  lab_step_done(self);
}

/// Appends the follow-ups of the order_check aggregate one after another,
/// then relays them.
void append_followups(lab_coordinator_actor* self, std::size_t next) {
  static const std::array<const char*, 3> types = {"OrderPaid", "OrderShipped",
                                                   "OrderDelivered"};
  if (next == types.size()) {
    lab_relay_until_drained(self, [self] { check_order(self); });
    return;
  }
  auto& st = self->state;
  self->request(st.writer, seconds(30), append_atom_v, st.aggregate_id,
                std::string{types[next]}, std::string{"{}"})
      .then(
          [self, next](const event_receipt&) {
            lab_guard(self, [self, next] { append_followups(self, next + 1); });
          },
          [self](caf::error& err) {
            lab_fail(self, "the writer could not append an event: " +
                               self->system().render(err));
          });
}

void order_check(lab_coordinator_actor* self) {
  // One clock reading for the whole aggregate: every event gets the same
  // created_at, the case where ordering by time breaks down.
  auto now = lab_now(self);
  lab_spawn_writer(self, [now] { return now; });
  self->request(self->state.writer, seconds(30), place_atom_v, std::string{},
                std::string{"SKU-LAMP"}, std::int64_t{1})
      .then(
          [self](const order_receipt& r) {
            self->state.aggregate_id = r.aggregate_id;
            lab_say(self, "Placed order " + str(r.order_id) +
                              " and appended OrderPaid, OrderShipped, "
                              "OrderDelivered, all with one timestamp.");
            lab_guard(self, [self] { append_followups(self, 0); });
          },
          [self](caf::error& err) {
            lab_fail(self, "the writer could not place the order: " +
                               self->system().render(err));
          });
}

} // namespace

void run_lab_step(lab_coordinator_actor* self, lab_step step) {
  switch (step) {
  case lab_step::init:
    return init(self);
  case lab_step::dualwrite:
    return dualwrite(self);
  case lab_step::place_order:
    return place_order(self);
  case lab_step::relay:
    return relay_step(self);
  case lab_step::order_check:
    return order_check(self);
  case lab_step::relay_crash:
    return lab_relay_crash(self);
  case lab_step::consumer:
    return lab_consumer(self);
  case lab_step::report:
    return lab_report(self);
  }
}

} // namespace outbox::lab
