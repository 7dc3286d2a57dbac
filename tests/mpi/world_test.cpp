// The MPI wrapper (mpi/world.h) outside a launcher: a world of one that never touches MPI, whose
// collectives return what one rank gets; a launcher's environment; a launcher refused by a build
// without MPI. Under mpirun it is tested by the sweep and moe-bench CTests (mfabric_sweep_mpirun,
// mfabric_moe_bench_mpirun).
#include "mpi/world.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_text.h"

namespace mfabric::mpi {
namespace {

using mfabric::testing::error_text;

Messages test_messages() {
  return {"do something else", [](std::int64_t bytes) {
            return Error("", "test", std::to_string(bytes) + " bytes is too many");
          }};
}

TEST(MpiWorld, WithoutALauncherIsAWorldOfOne) {
  ASSERT_FALSE(launched_by_mpi());
  World world(test_messages());
  EXPECT_FALSE(world.started());
  EXPECT_EQ(world.rank(), 0);
  EXPECT_EQ(world.size(), 1);
  world.barrier();
  EXPECT_TRUE(world.all(true));
  EXPECT_FALSE(world.all(false));
  EXPECT_EQ(world.max(2.5), 2.5);
  EXPECT_EQ(world.sum(7), 7);
  EXPECT_EQ(world.first_error(""), "");
  EXPECT_EQ(world.first_error("bad token"), "rank 0: bad token");
  EXPECT_EQ(world.broadcast_from_first({1, 2, 3}), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(world.gather("text"), (std::vector<std::string>{"text"}));
}

TEST(MpiWorld, AloneEveryMessageIsToItself) {
  World world(test_messages());
  const std::vector<std::byte> send = {std::byte{1}, std::byte{2}, std::byte{3}};
  const std::vector<std::int64_t> counts = {3};
  EXPECT_EQ(world.alltoallv(send, counts, counts), send);

  const std::vector<std::byte> first = {std::byte{4}, std::byte{5}};
  const std::vector<std::byte> second = {std::byte{6}};
  std::vector<std::byte> a(2), b(1);
  const std::vector<World::Receive> receives = {{0, a}, {0, b}};
  const std::vector<World::Send> sends = {{0, first}, {0, second}};
  world.exchange(receives, sends, 0);
  EXPECT_EQ(a, first);
  EXPECT_EQ(b, second);
}

TEST(MpiWorld, LocalRanksFromTheLauncher) {
  EXPECT_EQ(local_ranks(), 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  EXPECT_EQ(local_ranks(), 4);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "0", 1);
  EXPECT_EQ(local_ranks(), 1);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
}

TEST(MpiWorld, ALauncherIsSeenAndRefusedWithoutMpi) {
  ::setenv("PMI_SIZE", "2", 1);
  EXPECT_TRUE(launched_by_mpi());
  // With MPI, MPI_Init would start here: the CTests under mpirun cover that.
  if (!built_with_mpi()) {
    EXPECT_EQ(error_text([] { World world(test_messages()); }),
              "mpirun: this mfabric was built without MPI (OpenMPI was not found at build time): "
              "do something else");
  }
  ::unsetenv("PMI_SIZE");
  EXPECT_FALSE(launched_by_mpi());
}

}  // namespace
}  // namespace mfabric::mpi
