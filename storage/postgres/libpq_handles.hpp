#pragma once

// libpq's two handles, declared as libpq-fe.h declares them (repeating
// the typedef is allowed), for headers that only pass them around. Only
// storage/postgres's own sources include libpq-fe.h: the library links
// libpq privately, so its include folder reaches no library above it.

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
