// RocksDatabase (store/rocksdb_database.h): atomic creation, what open and
// read-only open make of a half-made directory, and the one error mapping.
#include "store/rocksdb_database.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/metadata.h"
#include "rocksdb/options.h"
#include "tests/store/temp_dir.h"

namespace layerproof::store {
namespace {

using fixture::TempDir;
namespace fs = std::filesystem;
using Mode = RocksDatabase::Mode;

const std::vector<std::string> kFamilies = {"alpha", "beta"};

TEST(RocksDatabaseTest, CreatesEveryFamilyAndReopensReadOnly) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  {
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
        RocksDatabase::Open(dir, kFamilies, Mode::kReadWrite, "test db");
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ((*db)->family(0)->GetName(), "alpha");
    EXPECT_EQ((*db)->family(1)->GetName(), "beta");
    ASSERT_TRUE((*db)->db()->Put(SyncWrite(), (*db)->family(1), "k", "v").ok());
  }
  EXPECT_FALSE(fs::exists(dir + ".creating"));
  absl::StatusOr<std::unique_ptr<RocksDatabase>> ro =
      RocksDatabase::Open(dir, kFamilies, Mode::kReadOnly, "test db");
  ASSERT_TRUE(ro.ok()) << ro.status();
  absl::StatusOr<std::optional<std::string>> v =
      (*ro)->Get((*ro)->family(1), "k", "k");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->value_or(""), "v");
}

// The table files (.sst) of the database in `dir` this process holds open
// now, read off /proc/self/fd.
int OpenTableFiles(const std::string& dir) {
  const std::string prefix = fs::canonical(dir).string() + "/";
  int n = 0;
  for (const fs::directory_entry& fd :
       fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = fs::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind(prefix, 0) == 0 &&
        fs::path(target).extension() == ".sst") {
      ++n;
    }
  }
  return n;
}

// One count of the open tables: some (the reads opened them), at most the
// cap.
void ExpectSomeTablesOpenWithinTheCap(const std::string& dir) {
  const int open = OpenTableFiles(dir);
  EXPECT_GT(open, 0);
  EXPECT_LE(open, RocksDatabase::kMaxOpenTables);
}

// Reads back the keys OpenTablesAreBounded wrote, each in a table of its own.
void ReadEveryKey(const RocksDatabase& db, int keys) {
  for (int i = 0; i < keys; ++i) {
    absl::StatusOr<std::optional<std::string>> v =
        db.Get(db.family(0), "key" + std::to_string(i), "key");
    ASSERT_TRUE(v.ok()) << v.status();
    ASSERT_EQ(v->value_or(""), "value") << i;
  }
}

// Open table files are bounded (kMaxOpenTables), in both modes: RocksDB's
// default keeps every table of a growing store open, so a long-lived node's
// descriptors grew with its store (the first soak). A store of twice as
// many tables as the bound, each of them read, holds at most the bound open.
TEST(RocksDatabaseTest, OpenTablesAreBounded) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  constexpr int kTables = 2 * RocksDatabase::kMaxOpenTables;
  {
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
        RocksDatabase::Open(dir, kFamilies, Mode::kReadWrite, "test db");
    ASSERT_TRUE(db.ok()) << db.status();
    rocksdb::DB* rocks = (*db)->db();
    // One table per flush, and no compaction to merge them.
    ASSERT_TRUE(rocks
                    ->SetOptions((*db)->family(0),
                                 {{"disable_auto_compactions", "true"}})
                    .ok());
    for (int i = 0; i < kTables; ++i) {
      ASSERT_TRUE(rocks
                      ->Put(SyncWrite(), (*db)->family(0),
                            "key" + std::to_string(i), "value")
                      .ok());
      ASSERT_TRUE(rocks->Flush(rocksdb::FlushOptions(), (*db)->family(0)).ok());
    }
    std::vector<rocksdb::LiveFileMetaData> tables;
    rocks->GetLiveFilesMetaData(&tables);
    ASSERT_GE(tables.size(), static_cast<size_t>(kTables));
    ReadEveryKey(**db, kTables);
    ExpectSomeTablesOpenWithinTheCap(dir);
  }
  for (Mode mode : {Mode::kReadOnly, Mode::kReadWrite}) {
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
        RocksDatabase::Open(dir, kFamilies, mode, "test db");
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ((*db)->db()->GetDBOptions().max_open_files,
              RocksDatabase::kMaxOpenTables);
    ReadEveryKey(**db, kTables);
    ExpectSomeTablesOpenWithinTheCap(dir);
  }
}

TEST(RocksDatabaseTest, ReadOnlyOpenOfNothingIsNotFoundAndCreatesNothing) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/absent";
  absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
      RocksDatabase::Open(dir, kFamilies, Mode::kReadOnly, "test db");
  EXPECT_TRUE(absl::IsNotFound(db.status())) << db.status();
  EXPECT_NE(db.status().message().find(dir), std::string::npos);
  EXPECT_FALSE(fs::exists(dir));
}

TEST(RocksDatabaseTest, CreatesInAnExistingEmptyDirectory) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/empty";
  fs::create_directory(dir);
  absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
      RocksDatabase::Open(dir + "/", kFamilies, Mode::kReadWrite, "test db");
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE(fs::exists(dir + "/CURRENT"));
}

// A creation cut short leaves `<dir>.creating`; nothing in it was ever
// acknowledged, so the next open discards it and creates afresh.
TEST(RocksDatabaseTest, LeftoverOfACreationCutShortIsDiscarded) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  fs::create_directory(dir + ".creating");
  std::ofstream(dir + ".creating/CURRENT") << "MANIFEST-000001\n";
  absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
      RocksDatabase::Open(dir, kFamilies, Mode::kReadWrite, "test db");
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_FALSE(fs::exists(dir + ".creating"));
}

TEST(RocksDatabaseTest, FilesWithoutADatabaseAreRefusedAndKept) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  fs::create_directory(dir);
  std::ofstream(dir + "/notes.txt") << "mine";
  absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
      RocksDatabase::Open(dir, kFamilies, Mode::kReadWrite, "test db");
  EXPECT_EQ(db.status().code(), absl::StatusCode::kFailedPrecondition)
      << db.status();
  EXPECT_TRUE(fs::exists(dir + "/notes.txt"));
  EXPECT_FALSE(fs::exists(dir + "/CURRENT"));
}

// What a non-atomic creation killed between CURRENT and the column families
// left: read-write and read-only opens agree that it is not a database of
// this kind, and neither changes it.
TEST(RocksDatabaseTest, MissingFamilyIsRefusedByBothModesAlike) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/db";
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
    delete raw;
  }
  for (Mode mode : {Mode::kReadWrite, Mode::kReadOnly}) {
    absl::StatusOr<std::unique_ptr<RocksDatabase>> db =
        RocksDatabase::Open(dir, kFamilies, mode, "test db");
    EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument)
        << db.status();
    EXPECT_NE(db.status().message().find("test db " + dir), std::string::npos)
        << db.status();
  }
}

TEST(RocksDatabaseTest, OneMappingFromRocksDbErrors) {
  EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), "x").ok());
  EXPECT_EQ(FromRocks(rocksdb::Status::NotFound(), "x").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FromRocks(rocksdb::Status::Corruption(), "x").code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(FromRocks(rocksdb::Status::NoSpace(), "x").code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(FromRocks(rocksdb::Status::IOError("fsync"), "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(FromRocks(rocksdb::Status::Busy(), "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(FromRocks(rocksdb::Status::NotSupported(), "x").code(),
            absl::StatusCode::kInternal);
  const absl::Status named = FromRocks(rocksdb::Status::IOError("eio"), "db w");
  EXPECT_NE(named.message().find("db w"), std::string::npos);
}

}  // namespace
}  // namespace layerproof::store
