#pragma once

#include "broker/fence.hpp"

#include <optional>
#include <string>
#include <vector>

namespace outbox::broker {

/// What the inbox does with an event type it has no effect for
/// (consumer.unknown_types, docs/configuration.md).
enum class unknown_types {
  /// Recorded as processed, nothing else done: its dedup record and its
  /// place in the aggregate's order, as for any event (the default).
  record,
  /// Set aside on the dead-letter list, its aggregate moving on without it,
  /// as an event whose effect failed: `outbox dead-letters replay` puts it
  /// back once a consumer knows the type.
  dead_letter,
};

/// The config value's words: "record", "dead-letter".
const char* unknown_types_name(unknown_types policy);

/// Throws std::invalid_argument naming the allowed words.
unknown_types parse_unknown_types(const std::string& word);

/// How the inbox applies entries beyond dedup and order.
struct inbox_options {
  unknown_types unknown = unknown_types::record;
  /// The event types the inbox knows: the demo's order events, and those
  /// the effects give a function.
  std::vector<std::string> known_types = demo_event_types();
  /// The effects (consumer.effects_lua): nullopt for the built-in ones
  /// (builtin:orders, effects/orders.lua: the demo's reservation), "" for
  /// none, else a file's text, checked (broker/effects_check.hpp), and
  /// its name for Lua's messages.
  std::optional<std::string> effects;
  std::string effects_name;
  /// Where the effects' keys live (keys::effects_prefix()): store.key(name)
  /// is this prefix + name, and store.call refuses keys outside it. ""
  /// leaves it to the script, which finds it in the reservation hash's
  /// name.
  std::string effects_prefix;
  /// The event types whose effect runs in the consumer's own database
  /// (consumer.sink): the inbox records them without an effect of its own
  /// (no reservation, no Lua), after the sink committed them.
  std::vector<std::string> sink_types;

  static std::vector<std::string> demo_event_types();
};

/// The inbox script's ARGV[1] (docs/inbox-script.md): the fence's holder
/// alone while the options are the defaults, as callers of older versions
/// pass it, else a JSON object of the holder and the options.
std::string inbox_script_options(const fence& fenced_by,
                                 const inbox_options& options);

/// `argument` (inbox_script_options' text) with the JSON object `fields`'
/// members added: a call's own options (the sink's refusals, classify).
std::string with_call_options(const std::string& argument,
                              const std::string& fields);

} // namespace outbox::broker
