// `outbox status --check`: the verdict a probe or a script acts on.

#include "cli/status_snapshot.hpp"
#include "text/plural.hpp"

namespace outbox::cli {

health judge(const status_snapshot& snapshot,
             storage::millis max_unpublished_age) {
  health verdict;
  verdict.max_unpublished_age = max_unpublished_age;
  const auto& db = snapshot.outbox;
  if (auto failed = db.count("FAILED"); failed > 0)
    verdict.problems.push_back(text::plural(failed, "FAILED row") +
                               " (outbox failed lists them)");
  auto unpublished = db.count("PENDING") + db.count("SENDING");
  if (unpublished > 0 && db.oldest_unpublished_age > max_unpublished_age)
    verdict.problems.push_back("the oldest unpublished row is " +
                               rounded_duration(db.oldest_unpublished_age) +
                               " old (over " +
                               rounded_duration(max_unpublished_age) + ")");
  if (!snapshot.redis)
    verdict.problems.push_back("Redis unavailable: " + snapshot.redis_error);
  // The pipeline cannot write (or consume) through this user: not an
  // outage, it lasts until someone changes the ACL or the proxy.
  if (!snapshot.refused.empty())
    verdict.problems.push_back(
        "Redis refuses the pipeline's commands (not an outage: fix the ACL or "
        "the proxy): " +
        broker::describe(snapshot.refused));
  // A dead-lettered entry is an event neither applied nor given up on: its
  // aggregate moved on without it, and only an operator (replay or drop)
  // settles it.
  if (snapshot.redis && snapshot.redis->dead_letter > 0)
    verdict.problems.push_back(
        text::plural(snapshot.redis->dead_letter, "dead-lettered entry waits",
                     "dead-lettered entries wait") +
        " in the dead-letter list (outbox dead-letters lists them: fix the "
        "cause and replay them, or drop them with a reason)");
  return verdict;
}

} // namespace outbox::cli
