#include "runtime/server/job_registry.h"

#include <gtest/gtest.h>

namespace perseus::server {
namespace {

JobSpec Spec(const std::string& id, int dp) {
  JobSpec spec;
  spec.id = id;
  spec.dp = dp;
  spec.schedule.microbatches = 4;
  return spec;
}

std::function<Result<std::shared_ptr<Job>>()> Creates(const JobSpec& spec, int* calls) {
  return [spec, calls]() -> Result<std::shared_ptr<Job>> {
    ++*calls;
    auto job = std::make_shared<Job>();
    job->spec = spec;
    return job;
  };
}

TEST(JobRegistryTest, RegistersOnceRefusesConflictsAndCountsQuarantinedJobs) {
  JobRegistry jobs(2);
  int calls = 0;
  auto first = jobs.Register(Spec("a", 1), Creates(Spec("a", 1), &calls));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->second);
  auto again = jobs.Register(Spec("a", 1), Creates(Spec("a", 1), &calls));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->second);
  EXPECT_EQ(again->first, first->first);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(jobs.Register(Spec("a", 2), Creates(Spec("a", 2), &calls)).status().message(),
            "job 'a' is already registered with a different spec");
  jobs.Quarantine("bad", "damaged row");
  EXPECT_EQ(jobs.Find("bad").status().code(), Status::Code::kUnavailable);
  EXPECT_EQ(jobs.Register(Spec("b", 1), Creates(Spec("b", 1), &calls)).status().code(), Status::Code::kUnavailable)
      << "a and the quarantined job fill the server";
  EXPECT_EQ(jobs.Find("nope").status().message(), "job 'nope' is not registered");
  // A failed removal keeps the quarantined job; a successful one frees its place.
  EXPECT_FALSE(jobs.RemoveQuarantined("bad", [] { return Status::IoError("disk"); }).ok());
  EXPECT_EQ(jobs.Quarantined().size(), 1u);
  EXPECT_EQ(jobs.RemoveQuarantined("a", [] { return Status::Ok(); }).value(), false);
  EXPECT_TRUE(jobs.RemoveQuarantined("bad", [] { return Status::Ok(); }).value());
  EXPECT_TRUE(jobs.Register(Spec("b", 1), Creates(Spec("b", 1), &calls)).ok());
  jobs.Remove(first->first);
  EXPECT_EQ(jobs.All().size(), 1u);
  // A failed create registers nothing.
  auto failed = jobs.Register(Spec("c", 1), [] { return Result<std::shared_ptr<Job>>(Status::IoError("full")); });
  EXPECT_EQ(failed.status().code(), Status::Code::kIoError);
  EXPECT_EQ(jobs.Find("c").status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace perseus::server
