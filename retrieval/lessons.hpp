#pragma once
// Lessons (contextweaver's select_lessons): for a lesson, lifecycle status
// decides whether it may be selected at all, before relevance does. The
// lessons profile (LoadOptions::profile) reads `status`, `scope` and
// `expires_at` into Concept::lifecycle and reports bad values.
//
// select_lessons() applies a LessonPolicy to every concept of the bundle.
// Each concept gets the first reason that applies, in this order:
//   status:invalid      `status` is not one of the five (an error diagnostic)
//   status:rejected     rejected
//   status:deprecated   deprecated
//   status:candidate    a candidate (also: no status), unless include_candidates
//   expires_at:invalid  `expires_at` is not a timestamp (an error diagnostic)
//   expired             now >= expires_at (a date alone is midnight UTC)
// Everything else (reviewed, active, and candidates when asked for) is
// eligible. Eligible lessons whose `scope` equals preferred_scope
// (case-sensitive) are preferred: they rank before the others, each group in
// its own order. Deterministic for a given bundle, policy and `now`.
#include <string>

#include "retrieval/bundle.hpp"
#include "retrieval/selection.hpp"

namespace okfbench::retrieval {

struct LessonPolicy {
  bool include_candidates = false;
  std::string preferred_scope;  // "" = no preference
  std::string now;              // ISO-8601 clock for expires_at; "" = now_utc() at selection
};

// Throws InputError when `now` is set but is not a timestamp.
Selection select_lessons(const Bundle& bundle, const LessonPolicy& policy);

// The reason `item` is excluded under `policy` at `now` (a valid
// timestamp), or "" when it is eligible.
std::string lesson_exclusion(const Concept& item, const LessonPolicy& policy, const std::string& now);

}  // namespace okfbench::retrieval
