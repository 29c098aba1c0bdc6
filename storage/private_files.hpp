#pragma once

// Files and folders on a shared host: what outbox creates holds orders,
// events and reports, so it is created for its owner only (files 0600,
// folders 0700), and a file it writes is never reached through a link
// another user planted. main() also sets umask 077, which covers what
// SQLite and the libraries create; these helpers say it explicitly where
// outbox itself creates something, and hold for library users too.

#include <filesystem>
#include <optional>
#include <string>

namespace outbox::storage {

/// Mode of the files outbox creates: read and write for the owner only.
inline constexpr unsigned private_file_mode = 0600;
/// Mode of the folders outbox creates.
inline constexpr unsigned private_folder_mode = 0700;

/// Creates `path` empty with mode 0600 unless something already exists
/// there (left as it is). SQLite then opens it as a new database, and its
/// -wal and -shm files take the database file's mode. Does not follow a
/// symbolic link at `path`. Returns false when it could not create it for
/// another reason (no such folder, no permission): the caller's own open
/// then says why.
bool create_private_file(const std::filesystem::path& path);

/// Creates `dir` and its missing parents, each with mode 0700; existing
/// folders are left as they are. Throws std::system_error naming the path.
void create_private_folders(const std::filesystem::path& dir);

/// Replaces `path` with a file holding `text`, mode 0600: written to a new
/// temporary file in the same folder, flushed, then renamed over `path`.
/// A symbolic link at `path` is replaced, never followed, and a reader sees
/// the old or the new content, never half. Throws std::runtime_error
/// naming the file.
void write_file_replacing(const std::filesystem::path& path,
                          const std::string& text);

/// Why `dir` is not safe to write outputs in on a shared host, or nothing:
/// it is owned by another user than this process's (effective) one, or
/// anyone may create and rename files in it (world-writable without the
/// sticky bit). Nothing when it does not exist.
std::optional<std::string> unsafe_folder(const std::filesystem::path& dir);

/// When `path` is this process's file and readable or writable by others,
/// sets it to 0600 and returns its previous mode; otherwise nothing.
std::optional<unsigned> tighten_to_private(const std::filesystem::path& path);

/// `mode` as four octal digits, e.g. "0644".
std::string octal_mode(unsigned mode);

} // namespace outbox::storage
