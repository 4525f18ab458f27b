#pragma once
// The error a failed model call throws, and whether trying it again later can
// help. Header-only; it is an InputError (exit code 1), so code that does not
// care about the difference needs nothing new.
//
//   transient  the network, a timeout, HTTP 408, 429 or 5xx, a body cut short:
//              the same request may well succeed later (resume retries it)
//   permanent  any other 4xx, a reply that is not valid or too large, a replay
//              miss: sending the same request again gives the same failure
#include <exception>
#include <string>

#include "core/error.hpp"

namespace okfbench::agents {

enum class Failure { transient, permanent };

inline const char* to_string(Failure failure) { return failure == Failure::transient ? "transient" : "permanent"; }

class CallError : public InputError {
 public:
  CallError(Failure failure, const std::string& message) : InputError(message), failure_(failure) {}
  Failure failure() const noexcept { return failure_; }
  bool transient() const noexcept { return failure_ == Failure::transient; }

 private:
  Failure failure_;
};

// The class of whatever a model call threw: a CallError says so; anything else
// (a local InputError, a bug) is permanent, since waiting does not fix it.
inline Failure failure_of(const std::exception& error) {
  const auto* call = dynamic_cast<const CallError*>(&error);
  return call ? call->failure() : Failure::permanent;
}

}  // namespace okfbench::agents
