#pragma once
// The contract of an Attested Computation concept (OKF v0.2 section 10):
// how to run the sanctioned computation and what a run must return, so an
// agent can be handed it. okfbench surfaces the contract; it never runs the
// computation or attests a result.
//
// Read from the concept's frontmatter (kept in Concept::extra) and body:
//   runtime: bigquery                                  REQUIRED for the type
//   parameters: [{name, type, required, description}]  the typed holes a caller fills
//   computation: lib/revenue.sql                       a file instead of the body fence
//   executor: {resource, receipt: [job_id, ...]}       how it runs, what a run returns
//   attester: {resource}                               what checks a receipt
// and the first code block under a "Computation" heading of the body.
// Problems (no runtime, a parameter without a name, neither a fence nor a
// computation file, a field of the wrong shape) are listed, never thrown.
#include <optional>
#include <string>
#include <vector>

#include "retrieval/bundle.hpp"

namespace okfbench::retrieval {

struct ComputationParameter {
  std::string name;
  std::string type;
  bool required = false;
  std::string description;
  bool operator==(const ComputationParameter&) const = default;
};

struct ComputationContract {
  std::string runtime;
  std::vector<ComputationParameter> parameters;
  std::string computation_file;  // the `computation:` path as written, "" when inline
  std::string code;              // the body's code block under "Computation", "" when absent
  std::string code_language;     // its fence info, e.g. "sql"
  std::string executor;          // executor.resource
  std::vector<std::string> receipt;  // executor.receipt
  std::string attester;          // attester.resource
  std::vector<std::string> problems;  // what does not follow section 10
  bool operator==(const ComputationContract&) const = default;
};

// True for `type: Attested Computation` (case-insensitive, as type filters are).
bool is_attested_computation(const Concept& concept_);

// The contract of an Attested Computation concept; nullopt for other types.
std::optional<ComputationContract> computation_contract(const Concept& concept_);

// The contract as the header lines `open` and read_concept print:
//   runtime: bigquery
//   parameters: year (integer, required)
//   computation: the sql block under # Computation      (or: the file lib/revenue.sql)
//   executor: skills/run-on-bq.md; receipt: job_id, executed_sql, result
//   attester: attesters/sql_equality.py
//   contract problem: ...                               (one line each)
std::string contract_lines(const ComputationContract& contract);

// One source with its credibility signals, as read_concept's header lists it:
//   "policy (policies/revenue.md; author human:x; last_modified 2026-06-15T00:00:00Z; usage_count 42)"
std::string source_text(const Source& source);

}  // namespace okfbench::retrieval
