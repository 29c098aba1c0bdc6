#pragma once

// Text from outside (Redis keys and values, database rows, flag values,
// error messages of Redis or SQLite) may hold any bytes: an escape sequence
// would reach the operator's terminal and act on it (clear the screen, move
// the cursor, retitle the window), and bytes that are not UTF-8 garble it.
// Everything shown to a terminal goes through escaped().

#include <string>
#include <string_view>

namespace outbox::text {

/// `text` with every byte that a terminal would act on, or could not show,
/// written out visibly:
///   - ESC as `\e`; line feed, carriage return and tab as `\n`, `\r`, `\t`;
///     every other C0 control character and DEL as `\x01`..`\x7f`;
///   - C1 control characters (U+0080..U+009F, e.g. CSI U+009B) as `\u009b`;
///   - each byte that is not part of well-formed UTF-8 (stray continuation
///     bytes, overlong forms, surrogates, code points past U+10FFFF, a cut
///     sequence) as `\xff`.
/// Printable ASCII and well-formed UTF-8 are kept as they are, backslashes
/// too: escaped(escaped(t)) == escaped(t), so a value escaped where it is
/// read can pass through a log line that escapes again unchanged.
std::string escaped(std::string_view text);

/// The length of the longest prefix of `text` of at most `limit` bytes that
/// does not end inside a UTF-8 sequence: where to cut a long value.
std::size_t utf8_cut(std::string_view text, std::size_t limit);

} // namespace outbox::text
