// An experiment spec (engine/spec.hpp) from YAML, resolved against a
// scratch folder laid out like datasets/.
//
// Invariants: a bad spec is an InputError or a UsageError, nothing else; an
// accepted spec is inside the documented ranges (spec_checks.hpp); parsing
// is deterministic (the same text gives the same hash).
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"
#include "tests/fuzz/spec_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace okfbench;
  const std::string_view text = fuzz::as_text(data, size);
  engine::ExperimentSpec spec;
  try {
    spec = engine::parse_spec(text, "fuzz.yaml", fuzz::spec_dir());
  } catch (const InputError&) {
    return 0;
  } catch (const UsageError&) {
    return 0;
  }
  fuzz::check_spec(spec);
  fuzz::check(engine::parse_spec(text, "fuzz.yaml", fuzz::spec_dir()).hash == spec.hash,
              "the same spec text gave two hashes");
  return 0;
}
