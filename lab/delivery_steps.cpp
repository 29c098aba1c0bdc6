// The lab's delivery steps: the relay crash that brings a duplicate, the
// consumer that absorbs it, and the report that shows both.

#include "lab/steps.hpp"

#include "actors/messages.hpp"
#include "storage/private_files.hpp"
#include "storage/types.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace outbox::lab {

// The lab drives the pipeline's own actors and messages.
using namespace outbox::actors;

namespace {

using std::chrono::seconds;

/// relay_crash, last part: count the event in the queue, write the file.
void count_duplicate(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto entries = view(self).queue_entries();
  auto count = count_event(entries, st.event_id);
  if (count != 2) {
    lab_fail(self, "relay_crash: event " + st.event_id +
                       " entered "
                       "outbox.events " +
                       str(count) + " times, not twice");
    return;
  }
  auto line = "DUPLICATE event_id=" + st.event_id + " count=" + str(count);
  storage::write_file_replacing(st.setup.files.atleastonce_out(), line + "\n");
  lab_say(self, "The takeover relay published " + st.event_id +
                    " again and marked it PUBLISHED.");
  lab_say(self, line + "  ->  " + st.setup.files.atleastonce_out().string());
  lab_say(self, "  Publishing and updating the row can never be one atomic "
                "step: the outbox gives at-least-once delivery. Duplicates "
                "are a design premise, and the consumer must absorb them.");
  lab_step_done(self);
}

/// relay_crash, second part: the crashed relay is gone, its lease is not.
void after_crash(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto now = lab_now(self);
  auto p = view(self).outbox(now);
  auto in_queue = count_event(view(self).queue_entries(), st.event_id);
  lab_say(self, "The relay RPUSHed " + st.event_id + " (now " + str(in_queue) +
                    "x in outbox.events) and crashed before "
                    "marking it PUBLISHED: " +
                    str(p.sending) + " row(s) still SENDING under its lease.");
  lab_say(self, "Starting a normal relay: it will take the row over once the "
                "lease expires, and publish it again.");
  lab_relay_until_drained(self, [self] { count_duplicate(self); });
}

} // namespace

void lab_relay_crash(lab_coordinator_actor* self) {
  lab_spawn_writer(self, self->state.setup.clock);
  self->request(self->state.writer, seconds(30), place_atom_v, std::string{},
                std::string{"SKU-DESK"}, std::int64_t{1})
      .then(
          [self](const order_receipt& r) {
            self->state.event_id = r.event_id;
            lab_say(self, "Placed order " + str(r.order_id) + ": its event " +
                              r.event_id + " is PENDING.");
            lab_say(self, "Starting a relay with crash injection "
                          "relay_after_publish = 1: it dies right after the "
                          "broker accepts its batch.");
            lab_stop_children(self, [self] {
              lab_spawn_relay(self, true);
              lab_wait_until(
                  self, "the crashing relay to publish and die",
                  [self] { return self->state.crash_seen; },
                  [self] { after_crash(self); });
            });
          },
          [self](caf::error& err) {
            lab_fail(self, "the writer could not place the order: " +
                               self->system().render(err));
          });
}

void lab_consumer(lab_coordinator_actor* self) {
  auto& st = self->state;
  if (auto moved = view(self).recover_processing(); moved > 0)
    lab_say(self, "Put " + str(static_cast<std::int64_t>(moved)) +
                      " entries left in processing lists by dead consumers "
                      "back at the head of outbox.events.");
  auto q = view(self).queue();
  st.before = q.processed;
  auto duplicates_before = q.duplicates;
  lab_say(self, "Consumer: LLEN outbox.events = " + str(q.queued) +
                    ", HLEN processed = " + str(q.processed) + ".");
  lab_spawn_consumer(self);
  lab_wait_until(
      self, "the consumer to drain outbox.events",
      [self] {
        auto q = view(self).queue();
        return q.queued == 0 && q.in_processing == 0;
      },
      [self, duplicates_before] {
        lab_stop_children(self, [self, duplicates_before] {
          auto& st = self->state;
          auto q = view(self).queue();
          lab_say(self,
                  "Drained outbox.events: " + str(q.processed - st.before) +
                      " new events applied, " +
                      str(q.duplicates - duplicates_before) +
                      " duplicate(s) absorbed; HLEN processed = " +
                      str(q.processed) + " (one per unique event_id).");
          lab_say(self, "  The inbox script records event_id with HSETNX in "
                        "`processed` and applies the effect in the same "
                        "atomic step; a second delivery finds the id and "
                        "changes nothing. Run it again: nothing changes.");
          lab_step_done(self);
        });
      });
}

void lab_report(lab_coordinator_actor* self) {
  auto& st = self->state;
  auto c = view(self).counts();
  auto q = view(self).queue();
  auto file = st.setup.files.report_txt();
  storage::write_file_replacing(file, report_text(c));
  lab_say(self, "orders=" + str(c.orders) + " outbox=" + str(c.outbox) +
                    " enqueued=" + str(c.enqueued) + " processed_unique=" +
                    str(c.processed_unique) + "  ->  " + file.string());
  lab_say(self,
          "  enqueued = consumed " + str(q.consumed) + " + duplicates " +
              str(q.duplicates) + " + dead-lettered " + str(q.dead_lettered) +
              " (outbox.counters) + still "
              "queued " +
              str(q.queued) + " + in processing " + str(q.in_processing) + ".");
  lab_say(self, "  Every order wrote its outbox row in the same transaction "
                "(nothing lost); the relay delivered at least once (enqueued "
                ">= outbox rows published); the consumer kept one result per "
                "event (processed_unique <= enqueued).");
  if (c.enqueued < c.processed_unique) {
    lab_fail(self, "report: enqueued " + str(c.enqueued) +
                       " < processed_unique " + str(c.processed_unique));
    return;
  }
  lab_step_done(self);
}

} // namespace outbox::lab
