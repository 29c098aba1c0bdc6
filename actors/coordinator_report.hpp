#pragma once

// The end of a run: once every child is down, the coordinator reads the
// final state and the audit and answers run_atom with the report.

#include "actors/coordinator.hpp"

namespace outbox::actors {

/// Writes the report once the coordinator is stopping and every child is
/// down; does nothing before that. If Redis or the database is out just as
/// a run that ended by itself (until_drained) reads its final state, waits
/// for them (final_read_atom, up to setup.final_read_patience_ms) rather
/// than report an outage as a failed run: its work is committed either way.
/// A run stopped on request reports at once.
void finish_if_all_down(coordinator_actor* self);

/// Handler of final_read_atom: tries the final read again.
void retry_final_read(coordinator_actor* self);

/// A request to stop (SIGINT, SIGTERM, an exit from outside): the final
/// read will not wait for the stores; if it is waiting now, one last read,
/// then the report, whatever it says.
void stop_waiting(coordinator_actor* self);

} // namespace outbox::actors
