// The verifier node on a full or failing disk (issue 17 item 4): while a
// write or an fsync under the log fails with ENOSPC or EIO, Log.Submit
// refuses with a clear error (RESOURCE_EXHAUSTED or UNAVAILABLE), no
// checkpoint covers what it refused, and once the fault clears the same
// node accepts the same envelope with an inclusion proof, without a
// restart. The
// store-level checks are tests/store/disk_fault_test.cc; the journal and
// the audit store's are in tests/integration/power_loss_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "tests/store/simulated_disk.h"
#include "tests/verifier/verifier_node_fixture.h"

namespace layerproof::verifier {
namespace {

using namespace node_fixture;  // NOLINT: the fixture of these tests
using store::testing::SimulatedDisk;

struct Case {
  SimulatedDisk::Op op;
  SimulatedDisk::Fault fault;
  grpc::StatusCode code;
  const char* name;
};
const Case kCases[] = {
    {SimulatedDisk::Op::kWrite, SimulatedDisk::Fault::kNoSpace,
     grpc::StatusCode::RESOURCE_EXHAUSTED, "ENOSPC on write"},
    {SimulatedDisk::Op::kSync, SimulatedDisk::Fault::kNoSpace,
     grpc::StatusCode::RESOURCE_EXHAUSTED, "ENOSPC on fsync"},
    {SimulatedDisk::Op::kWrite, SimulatedDisk::Fault::kIoError,
     grpc::StatusCode::UNAVAILABLE, "EIO on write"},
    {SimulatedDisk::Op::kSync, SimulatedDisk::Fault::kIoError,
     grpc::StatusCode::UNAVAILABLE, "EIO on fsync"},
};

// The leaf at `r`'s index is `envelope`, under the checkpoint the node
// answered with.
void ExpectIncluded(Verifier& v, const v1::SubmitResult& r,
                    const std::string& envelope) {
  const store::Checkpoint c = v.Verify(v.last_checkpoint);
  EXPECT_TRUE(store::VerifyInclusion(store::LeafHash(envelope), r.leaf_index(),
                                     c.size, ToProof(r.inclusion_proof()),
                                     c.root)
                  .ok());
}

TEST(VerifierNodeDiskTest, FailingDiskRefusesSubmissionsAndRecovers) {
  for (const Case& fault : kCases) {
    SCOPED_TRACE(fault.name);
    TempDir dir;
    SimulatedDisk disk;
    NodeSetup setup;
    setup.openings = std::make_shared<HonestOpenings>();
    setup.rate = 0;
    setup.env = disk.env();
    Verifier v(dir.path(), setup);
    const Served first = Serve(ProverKey(), "prover-1", {1, 2, 3});
    const Served second = Serve(ProverKey(), "prover-1", {1, 2, 4});
    const v1::SubmitResult logged = v.SubmitOne(first.envelope);
    ASSERT_EQ(logged.code(), 0) << logged.message();

    disk.SetFault(fault.op, fault.fault);
    const v1::SubmitResult refused = v.SubmitOne(second.envelope);
    EXPECT_EQ(refused.code(), int(fault.code)) << refused.message();
    EXPECT_FALSE(refused.message().empty());
    EXPECT_GT(disk.faults_injected(), 0u);
    EXPECT_EQ(v.last_tree_size, 1u);  // no checkpoint covers it
    // Reads still answer while writes fail.
    const v1::SubmitResult again = v.SubmitOne(first.envelope);
    EXPECT_EQ(again.code(), 0) << again.message();
    EXPECT_TRUE(again.duplicate());
    ExpectIncluded(v, again, first.envelope);

    disk.ClearFaults();
    const v1::SubmitResult recovered = v.SubmitOne(second.envelope);
    ASSERT_EQ(recovered.code(), 0) << recovered.message();
    EXPECT_EQ(recovered.leaf_index(), 1u);
    // A failed fsync leaves the leaf written but refused: it is found, as a
    // duplicate, under the index it was written at. A failed write left
    // nothing.
    EXPECT_EQ(recovered.duplicate(), fault.op == SimulatedDisk::Op::kSync);
    EXPECT_EQ(v.last_tree_size, 2u);
    ExpectIncluded(v, recovered, second.envelope);
  }
}

}  // namespace
}  // namespace layerproof::verifier
