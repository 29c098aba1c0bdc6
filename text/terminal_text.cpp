#include "text/terminal_text.hpp"

#include <cstdint>

namespace outbox::text {

namespace {

/// `prefix` and the two hex digits of `byte`: \x1b, \u009b.
void append_escape(std::string& out, const char* prefix, unsigned char byte) {
  static constexpr char digits[] = "0123456789abcdef";
  out += prefix;
  out += digits[byte >> 4];
  out += digits[byte & 0xF];
}

bool is_continuation(unsigned char byte) {
  return (byte & 0xC0) == 0x80;
}

/// The length of the well-formed UTF-8 sequence of two to four bytes that
/// starts at `at`, and its code point; 0 when there is none (RFC 3629:
/// no overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence(std::string_view text, std::size_t at,
                          std::uint32_t& code_point) {
  auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  std::uint32_t minimum = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
    minimum = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
    minimum = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
    minimum = 0x10000;
  } else {
    return 0;
  }
  if (at + length > text.size())
    return 0;
  for (std::size_t i = 1; i < length; ++i) {
    auto byte = static_cast<unsigned char>(text[at + i]);
    if (!is_continuation(byte))
      return 0;
    code_point = (code_point << 6) | (byte & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF))
    return 0;
  return length;
}

} // namespace

std::string escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    auto byte = static_cast<unsigned char>(text[at]);
    if (byte >= 0x20 && byte < 0x7F) {
      out += text[at++];
      continue;
    }
    if (byte < 0x80) {
      switch (byte) {
      case 0x1B:
        out += "\\e";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        append_escape(out, "\\x", byte);
      }
      ++at;
      continue;
    }
    std::uint32_t code_point = 0;
    auto length = utf8_sequence(text, at, code_point);
    if (length == 0) {
      append_escape(out, "\\x", byte);
      ++at;
    } else if (code_point <= 0x9F) {
      // U+0080..U+009F: C1 controls; CSI (U+009B) starts an escape sequence
      // on terminals that take 8-bit controls.
      append_escape(out, "\\u00", static_cast<unsigned char>(code_point));
      at += length;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

std::size_t utf8_cut(std::string_view text, std::size_t limit) {
  if (limit >= text.size())
    return text.size();
  auto at = limit;
  // Back off continuation bytes, at most three: the cut then falls before
  // the lead byte of the sequence it would have split.
  for (int i = 0;
       i < 3 && at > 0 && is_continuation(static_cast<unsigned char>(text[at]));
       ++i)
    --at;
  return at;
}

} // namespace outbox::text
