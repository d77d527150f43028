// SimulatedDisk: a RocksDB Env whose file system writes through to the real
// disk but remembers what a power loss would take away, and fails writes
// and syncs on demand (a full disk, a failing one). In the spirit of
// LevelDB's FaultInjectionTestEnv and RocksDB's FaultInjectionTestFS, which
// neither Debian package ships. Test code only: no product binary links it.
//
// What is modelled. For every file written through env() since the last
// PowerOn (or since construction):
//   - data: the length last made durable by Sync or Fsync of the file
//     (RangeSync makes nothing durable: sync_file_range(2) persists no
//     metadata); at power loss the file is cut back to that length;
//   - names: a file or directory created, or renamed into place, is not
//     durable until its parent directory is fsynced (FSDirectory::Fsync).
//     At power loss a name never made durable goes: a created file or
//     directory is deleted (a directory with everything in it); a file
//     created over an existing name, or renamed over one, gets that name's
//     previous durable contents back; a rename whose source name was durable
//     is undone (the file gets its old name back, with its durable data).
// What is not modelled: deletions are durable at once (a real file system
// may bring a deleted name back; RocksDB ignores such files); the order of
// writes within a sync interval (a power loss keeps no unsynced byte, never
// a partial one: stricter than a disk); writes through files opened before
// tracking began or through NewRandomRWFile, links and the info LOG are not
// tracked (RocksDB's recovery reads none of them as its own durable state).
//
// Power loss, in two steps: PowerOff() makes every later mutating call fail
// (IOError "simulated power loss") and waits for those in flight (an fsync
// in flight fails too and makes nothing durable), so the database on the
// disk can be torn down without writing anything more;
// PowerOn(), once every file opened for writing is closed, drops what was
// not durable (above), forgets the tracking and accepts writes again.
//
// Faults: SetFault(op, kind) makes every later write (file appends and
// creations, directory creations, renames) or every later sync (file and
// directory) fail with NoSpace (ENOSPC) or IOError (EIO), until ClearFault.
// A failed write writes nothing; a failed sync makes nothing durable (the
// bytes stay in the file, as in a page cache, until a power loss).
//
// Thread safety: every method may be called from any thread, concurrently
// with the databases using env().
#ifndef LAYERPROOF_TESTS_STORE_SIMULATED_DISK_H_
#define LAYERPROOF_TESTS_STORE_SIMULATED_DISK_H_

#include <cstdint>
#include <memory>

#include "rocksdb/env.h"

namespace layerproof::store::testing {

class FaultFileSystem;

class SimulatedDisk {
 public:
  enum class Op { kWrite, kSync };
  enum class Fault { kNone, kNoSpace, kIoError };

  SimulatedDisk();
  ~SimulatedDisk();
  SimulatedDisk(const SimulatedDisk&) = delete;
  SimulatedDisk& operator=(const SimulatedDisk&) = delete;

  // The Env to open databases with; lives as long as this object.
  rocksdb::Env* env() const { return env_.get(); }

  // From now on every write of `op`'s kind fails with `fault` (kNone clears).
  void SetFault(Op op, Fault fault);
  void ClearFaults();
  // How many calls failed because of SetFault so far.
  uint64_t faults_injected() const;

  // See the header comment. PowerOn requires every file opened for writing
  // through env() to be closed (the databases torn down); it returns how
  // many files it cut back or removed.
  void PowerOff();
  uint64_t PowerOn();

 private:
  std::shared_ptr<FaultFileSystem> fs_;
  std::unique_ptr<rocksdb::Env> env_;
};

}  // namespace layerproof::store::testing

#endif  // LAYERPROOF_TESTS_STORE_SIMULATED_DISK_H_
