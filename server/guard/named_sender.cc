#include "server/guard/named_sender.h"

#include <string>

namespace lockstep {
namespace {

const char* NamedRole(wire::Role role) {
  switch (role) {
    case wire::Role::Worker:
      return "worker";
    case wire::Role::Evaluator:
      return "evaluator";
    case wire::Role::Server:
      return "server";
    default:
      return "coordinator";
  }
}

}  // namespace

Status CheckSender(const Message& msg, uint32_t workers) {
  const char* named = NamedRole(msg.envelope->sender_role());
  const int rank = msg.envelope->sender_rank();
  if (msg.rank >= 0 && msg.role == "server") {
    return FailedPrecondition(
        "a server's connection pushes and pulls nothing (it sent a " +
        std::string(BodyName(msg.envelope->body_type())) + ")");
  }
  if (msg.rank >= 0 && (msg.role != named || rank != msg.rank)) {
    return FailedPrecondition(
        "the " + msg.role + " " + std::to_string(msg.rank) +
        "'s connection sent a " + BodyName(msg.envelope->body_type()) + " as " +
        named + " " + std::to_string(rank));
  }
  const bool evaluator = msg.envelope->sender_role() == wire::Role::Evaluator;
  if (evaluator && msg.envelope->body_type() != wire::Body::Pull) {
    return InvalidArgument("the evaluator only pulls");
  }
  // An evaluation point's image waits for the shard to reach it: a
  // worker's far-future point would be kept without bound.
  if (!evaluator && msg.envelope->body_type() == wire::Body::Pull &&
      msg.envelope->body_as_Pull()->eval_point() >= 0) {
    return InvalidArgument("only the evaluator reads an evaluation point");
  }
  if (!evaluator && (rank < 0 || static_cast<uint32_t>(rank) >= workers)) {
    return InvalidArgument("sender rank " + std::to_string(rank) +
                           " is not a worker of this job");
  }
  return Status::Ok();
}

}  // namespace lockstep
