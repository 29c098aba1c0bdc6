#include "embed/append_request.hpp"

#include "text/event_headers.hpp"

namespace outbox::embed {

storage::event_request valid_request(const event& e) {
  storage::event_request request;
  request.aggregate_id = e.aggregate_id;
  request.event_type = e.event_type;
  request.payload = e.payload;
  request.event_id = e.event_id;
  if (auto problem = text::headers_problem(e.headers))
    throw refused_event("outbox: " + *problem);
  request.headers = text::headers_text(e.headers);
  if (auto problem = storage::validate(request))
    throw refused_event("outbox: " + *problem);
  return request;
}

} // namespace outbox::embed
