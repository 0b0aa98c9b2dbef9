#include "pipeline/OutputSet.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

namespace smpart {
namespace {

/// A fresh folder, removed with everything in it at the end of the test.
class TempDir {
public:
  TempDir() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("outputset", Path));
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  std::string operator/(llvm::StringRef Name) const {
    llvm::SmallString<256> P(Path);
    llvm::sys::path::append(P, Name);
    return std::string(P);
  }

private:
  llvm::SmallString<256> Path;
};

std::string contents(const std::string &Path) {
  auto Buffer = llvm::MemoryBuffer::getFile(Path);
  return Buffer ? (*Buffer)->getBuffer().str() : "<missing>";
}

TEST(OutputSet, OutputDirAndHeaderFoldersAreMade) {
  TempDir Tmp;
  OutputSet Outputs;
  Outputs.add(Tmp / "out/inc/k.cuh", "header", "/src/inc/k.cuh", "/src/k.cu");
  Outputs.add(Tmp / "out/k.cu", "main", "/src/k.cu", "/src/k.cu");
  EXPECT_TRUE(Outputs.write(Tmp / "out"));
  EXPECT_EQ(contents(Tmp / "out/k.cu"), "main");
  EXPECT_EQ(contents(Tmp / "out/inc/k.cuh"), "header");
}

TEST(OutputSet, OutputDirThatCannotBeMadeIsAnErrorNamingItOnce) {
  TempDir Tmp;
  OutputSet Outputs;
  Outputs.add(Tmp / "file/out/k.cu", "main", "/src/k.cu", "/src/k.cu");
  Outputs.add(Tmp / "file/out/j.cu", "main", "/src/j.cu", "/src/j.cu");
  {
    OutputSet File;
    File.add(Tmp / "file", "a file, not a folder", "/src/f", "/src/f");
    ASSERT_TRUE(File.write(""));
  }
  testing::internal::CaptureStderr();
  EXPECT_FALSE(Outputs.write(Tmp / "file/out"));
  const std::string Errors = testing::internal::GetCapturedStderr();
  const std::string Error =
      "smpart-transform: error: cannot create '" + Tmp / "file/out" + "'";
  const std::size_t At = Errors.find(Error);
  EXPECT_NE(At, std::string::npos) << Errors;
  EXPECT_EQ(Errors.find(Error, At + 1), std::string::npos) << Errors;
  EXPECT_FALSE(llvm::sys::fs::exists(Tmp / "file/out/k.cu"));
}

TEST(OutputSet, NoOutputDirMakesNoFolder) {
  TempDir Tmp;
  OutputSet Outputs;
  Outputs.add(Tmp / "no/such/x.cu", "main", "/src/k.cu", "/src/k.cu");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(Outputs.write(""));
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(llvm::sys::fs::exists(Tmp / "no"));
}

TEST(OutputSet, OnlyARewriteInPlaceMayReplaceAFileTheRunReads) {
  TempDir Tmp;
  {
    OutputSet File;
    File.add(Tmp / "k.cu", "source", Tmp / "k.cu", Tmp / "k.cu");
    ASSERT_TRUE(File.write(""));
  }
  OutputSet InPlace;
  InPlace.addDependency(Tmp / "k.cu");
  InPlace.add(Tmp / "k.cu", "rewrite", Tmp / "k.cu", Tmp / "k.cu");
  EXPECT_TRUE(InPlace.checkCollisions(/*InPlace=*/true));
  testing::internal::CaptureStderr();
  EXPECT_FALSE(InPlace.checkCollisions(/*InPlace=*/false));
  OutputSet Report;
  Report.addDependency(Tmp / "k.cu");
  Report.addReport(Tmp / "k.cu", "{}", "the manifest");
  EXPECT_FALSE(Report.checkCollisions(/*InPlace=*/true));
  const std::string Errors = testing::internal::GetCapturedStderr();
  EXPECT_NE(Errors.find("the manifest would replace it"), std::string::npos)
      << Errors;
  EXPECT_EQ(contents(Tmp / "k.cu"), "source");
}

TEST(OutputSet, AFailedDeviceWriteReplacesNothingAndRemovesMadeFolders) {
  TempDir Tmp;
  OutputSet Outputs;
  Outputs.add(Tmp / "out/deep/k.cu", "main", "/src/k.cu", "/src/k.cu");
  Outputs.addReport("/dev/full", "{}", "the manifest");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(Outputs.write(Tmp / "out/deep"));
  const std::string Errors = testing::internal::GetCapturedStderr();
  EXPECT_NE(Errors.find("cannot write '/dev/full'"), std::string::npos)
      << Errors;
  EXPECT_FALSE(llvm::sys::fs::exists(Tmp / "out"));
}

} // namespace
} // namespace smpart
