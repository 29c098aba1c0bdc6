#include "sink/sink.hpp"

#include "sink/backends.hpp"
#include "storage/db_options.hpp"

namespace outbox::sink {

bool sink_target::postgres() const {
  storage::db_options options;
  options.path = location;
  return options.postgres();
}

std::string sink_target::display_name() const {
  storage::db_options options;
  options.path = location;
  return options.display_name();
}

std::unique_ptr<sink> open_sink(const sink_target& target,
                                const std::string& consumer,
                                sql_effects effects) {
  auto session = target.postgres() ? open_postgres_session(target)
                                   : open_sqlite_session(target);
  return make_sink(std::move(session), consumer, std::move(effects));
}

void create_sink_schema(const sink_target& target) {
  if (target.postgres())
    create_postgres_sink(target);
  else
    create_sqlite_sink(target);
}

void execute(const sink_target& target, const std::string& sql) {
  if (target.postgres())
    execute_postgres(target, sql);
  else
    execute_sqlite(target, sql);
}

} // namespace outbox::sink
