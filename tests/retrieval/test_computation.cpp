// Attested Computation contracts (OKF v0.2 section 10) on the fixture bundle
// tests/data/kb/sales and, when the reference data is there, acme_retail.
#include "retrieval/computation.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"

namespace okfbench::retrieval {
namespace {

using ::testing::ElementsAre;

TEST(ComputationContract, ReadsEveryFieldOfTheFixture) {
  const Bundle bundle = Bundle::load(test::source_dir() / "tests/data/kb/sales");
  const Concept* item = bundle.find("computations/revenue-year");
  ASSERT_NE(item, nullptr);
  std::optional<ComputationContract> c = computation_contract(*item);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->runtime, "bigquery");
  EXPECT_THAT(c->parameters, ElementsAre(ComputationParameter{"year", "integer", true, ""}));
  EXPECT_EQ(c->computation_file, "");
  EXPECT_EQ(c->code, "SELECT SUM(net_amount) AS revenue FROM sales.orders\n"
                     "WHERE status = 'delivered' AND EXTRACT(YEAR FROM order_ts) = @year\n");
  EXPECT_EQ(c->code_language, "sql");
  EXPECT_EQ(c->executor, "skills/run-on-bq.md");
  EXPECT_THAT(c->receipt, ElementsAre("job_id", "executed_sql", "result"));
  EXPECT_EQ(c->attester, "attesters/sql_equality.py");
  EXPECT_TRUE(c->problems.empty());
  EXPECT_EQ(contract_lines(*c),
            "runtime: bigquery\nparameters: year (integer, required)\ncomputation: the sql block under # Computation\n"
            "executor: skills/run-on-bq.md; receipt: job_id, executed_sql, result\nattester: attesters/sql_equality.py\n");
  ASSERT_EQ(item->sources.size(), 1u);
  EXPECT_EQ(source_text(item->sources[0]),
            "policy (policies/revenue.md; author human:finance-lead; last_modified 2026-06-15T00:00:00Z; usage_count 42)");
  // Other types have no contract.
  EXPECT_EQ(computation_contract(*bundle.find("metrics/revenue")), std::nullopt);
}

TEST(ComputationContract, ProblemsAreListedNotThrown) {
  Concept item;
  item.type = "attested computation";
  item.extra["parameters"] = "- {type: integer}\n- {name: region}\n";
  item.extra["executor"] = "skills/x.md\n";
  item.extra["computation"] = "lib/revenue.sql\n";
  item.body = "# Computation\n\nSee the file.\n\n# Other\n\n```sql\nSELECT 1\n```\n";
  std::optional<ComputationContract> c = computation_contract(item);
  ASSERT_TRUE(c.has_value());
  EXPECT_THAT(c->parameters, ElementsAre(ComputationParameter{"region", "", false, ""}));
  EXPECT_EQ(c->code, "");  // the block is under another heading
  EXPECT_EQ(c->computation_file, "lib/revenue.sql");
  EXPECT_THAT(c->problems, ElementsAre("no `runtime`; an Attested Computation must say how it runs",
                                       "a `parameters` entry has no `name`; it was left out",
                                       "`executor` is not a mapping; write `executor: { resource, receipt: [...] }`"));
  EXPECT_EQ(contract_lines(*c),
            "runtime: -\nparameters: region\ncomputation: the file lib/revenue.sql\nexecutor: -\nattester: -\n"
            "contract problem: no `runtime`; an Attested Computation must say how it runs\n"
            "contract problem: a `parameters` entry has no `name`; it was left out\n"
            "contract problem: `executor` is not a mapping; write `executor: { resource, receipt: [...] }`\n");
}

TEST(ComputationContract, AcmeRetailComputations) {
  if (!test::have_data()) GTEST_SKIP() << "no reference data";
  const Bundle bundle = Bundle::load(test::data_root() / "okf/acme_retail");
  const Concept* item = bundle.find("computations/revenue-ytd");
  ASSERT_NE(item, nullptr);
  std::optional<ComputationContract> c = computation_contract(*item);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->runtime, "bigquery");
  EXPECT_THAT(c->parameters, ElementsAre(ComputationParameter{"year", "integer", true, ""}));
  EXPECT_EQ(c->code_language, "sql");
  EXPECT_THAT(c->code, ::testing::StartsWith("SELECT\n  SUM(\n"));
  EXPECT_THAT(c->receipt, ElementsAre("job_id", "executed_sql", "result"));
  EXPECT_EQ(c->attester, "attesters/sql_equality.py");
  EXPECT_TRUE(c->problems.empty());
  ASSERT_EQ(item->sources.size(), 2u);
  EXPECT_EQ(source_text(item->sources[1]),
            "orders-table (tables/orders.md; author team:data-platform; last_modified 2026-07-01T00:00:00Z)");
}

}  // namespace
}  // namespace okfbench::retrieval
