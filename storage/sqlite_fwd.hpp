#pragma once

// SQLiteCpp's classes that headers name without needing their definitions
// (a connection the caller owns, taken by reference; a pointer member): a
// header includes this, not <SQLiteCpp/Database.h>, and so pulls in neither
// SQLiteCpp nor sqlite3.h, which the layers above the SQLite backend may
// not include. The backend-neutral seam itself names no SQLite type.

namespace SQLite {
class Database;
class Statement;
} // namespace SQLite
