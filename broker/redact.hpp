#pragma once

#include <string>
#include <string_view>

namespace outbox::broker {

/// `text` with the secrets a Redis address can carry masked, for every
/// message, log line and report that shows an endpoint or a value the user
/// gave for one: the password of `scheme://user:password@host` becomes
/// `user:***@` (`scheme://secret@host`, a password alone, becomes
/// `***@`), and the value of a `password=` parameter becomes `***`. Text
/// without either comes back unchanged; masking twice changes nothing.
std::string redact_secrets(std::string_view text);

} // namespace outbox::broker
