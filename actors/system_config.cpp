#include "actors/system_config.hpp"

#include "actors/messages.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

namespace outbox::actors {

void register_outbox_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<order_receipt>("outbox::order_receipt");
  cfg.add_message_type<event_receipt>("outbox::event_receipt");
  cfg.add_message_type<std::vector<order_ticket>>("outbox::order_tickets");
  cfg.add_message_type<std::vector<event_ticket>>("outbox::event_tickets");
  cfg.add_message_type<std::vector<order_outcome>>("outbox::order_outcomes");
  cfg.add_message_type<std::vector<event_outcome>>("outbox::event_outcomes");
  // The renderer overload: add_error_category<T>(atom) does not compile
  // with CAF 0.17's to_string lookup.
  cfg.add_error_category(
      caf::atom("outbox"),
      [](std::uint8_t code, caf::atom_value, const caf::message& context) {
        auto text = "outbox: " + to_string(static_cast<ec>(code));
        return context.empty() ? text : text + " " + to_string(context);
      });
}

void tune_scheduler(caf::actor_system_config& cfg) {
  cfg.set("work-stealing.moderate-poll-attempts", 0);
}

void use_test_coordinator(caf::actor_system_config& cfg) {
  cfg.set("scheduler.policy", caf::atom("testing"));
}

} // namespace outbox::actors
