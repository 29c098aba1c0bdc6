#include "broker/redact.hpp"

#include <cctype>
#include <cstring>

namespace outbox::broker {

namespace {

constexpr std::string_view mask = "***";

/// Where an address ends inside a longer text: a message quotes it, a
/// path or a query follows its host.
bool ends_token(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0 ||
         std::strchr("'\"/,;()<>[]{}", c) != nullptr;
}

bool ends_parameter(char c) {
  return c == '&' || c == '#' || ends_token(c);
}

/// Masks the user information of every address in `text`: the part after
/// its first ':' (user:password), or all of it when it has none (a password
/// alone, as redis-cli reads `redis://secret@host`). It runs up to the last
/// '@' of the address, so a password with an '@' in it is masked whole.
std::string mask_user_info(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    auto end = i;
    while (end < text.size() && !ends_token(text[end]))
      ++end;
    if (end == i) {
      out += text[i++];
      continue;
    }
    // Right after a scheme's "//", the user information runs to the last
    // '@' before a space or a quote, whatever it holds: a password with a
    // ',' or a '/' in it is masked whole too.
    if (i >= 2 && text[i - 1] == '/' && text[i - 2] == '/') {
      auto stop = i;
      while (stop < text.size() &&
             std::isspace(static_cast<unsigned char>(text[stop])) == 0 &&
             text[stop] != '\'' && text[stop] != '"')
        ++stop;
      auto last_at = text.substr(i, stop - i).rfind('@');
      if (last_at != std::string_view::npos && i + last_at > end) {
        end = i + last_at;
        while (end < text.size() && !ends_token(text[end]))
          ++end;
      }
    }
    auto token = text.substr(i, end - i);
    auto at = token.rfind('@');
    auto colon = token.substr(0, at).find(':');
    auto secret = colon == std::string_view::npos ? 0 : colon + 1;
    if (at == std::string_view::npos || secret >= at) {
      out.append(token);
    } else {
      out.append(token.substr(0, secret));
      out.append(mask);
      out.append(token.substr(at));
    }
    i = end;
  }
  return out;
}

/// Masks the value of every `password=` parameter (any case).
std::string mask_password_parameters(const std::string& text) {
  static constexpr std::string_view key = "password=";
  std::string lower = text;
  for (auto& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string out;
  std::size_t copied = 0;
  for (auto found = lower.find(key); found != std::string::npos;
       found = lower.find(key, found + 1)) {
    auto value = found + key.size();
    auto end = value;
    while (end < text.size() && !ends_parameter(text[end]))
      ++end;
    if (end == value || text.compare(value, end - value, mask) == 0)
      continue;
    out.append(text, copied, value - copied);
    out.append(mask);
    copied = end;
  }
  out.append(text, copied);
  return out;
}

} // namespace

std::string redact_secrets(std::string_view text) {
  return mask_password_parameters(mask_user_info(text));
}

} // namespace outbox::broker
