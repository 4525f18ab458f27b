#!/usr/bin/env bash
# Regenerates every golden file under tests/golden/ from the current code:
# builds the test programs that own golden files and runs them with
# OKFBENCH_UPDATE_GOLDEN=1, which makes expect_golden() write instead of compare.
# Review the diff (git diff tests/golden) before committing it.
#   scripts/update-golden.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
[[ -d "$build" ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target okfbench test_reports test_engine test_cli
OKFBENCH_UPDATE_GOLDEN=1 "$build/tests/test_reports" --gtest_brief=1
# The CLI goldens: `okfbench grade`, the default experiment's headline and `okfbench show`.
OKFBENCH_UPDATE_GOLDEN=1 "$build/tests/test_cli" --gtest_brief=1 --gtest_filter='GradeCommand.*Golden:DefaultExperiment.*:ShowCommand.*Golden*'
# The command reference, generated from the program itself.
"$build/cli/okfbench" help --markdown >cli/CLI.md
# README.md's picture of the layers, from the libraries' link lists.
scripts/layers.sh --build "$build"
# README.md's run output and the verdict line of reports/docs/headline.md, from a real run.
scripts/run-figures.sh --build "$build"

git status --short tests/golden cli/CLI.md README.md reports/docs/headline.md
