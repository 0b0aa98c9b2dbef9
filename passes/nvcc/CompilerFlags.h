// Turns a compile command (clang or nvcc style, from compile_commands.json
// or after `--`) into the clang-22 CUDA command line one side of the parse
// needs: nvcc-only flags translated or dropped, `-x cuda`, the CUDA path,
// the GPU arch, the resource dir, and --cuda-host-only/--cuda-device-only.
#pragma once

#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CompilationDatabase.h"

#include <memory>
#include <string>

namespace smpart {

struct CudaSetup {
  std::string CudaPath;    ///< --cuda-path (default /usr/local/cuda)
  std::string GpuArch;     ///< --cuda-gpu-arch (default sm_90)
  std::string ResourceDir; ///< clang's resource dir
  /// smpart's runtime headers (smpart/device.cuh): files rewritten by an
  /// earlier run include them, so the tool finds them itself.
  std::string RuntimeInclude;
  /// The host compiler's private include dir (omp.h, ...), searched last.
  std::string HostCompilerInclude;
  /// The tool's compatibility header (nvcc/include/nvcc_compat.h), which
  /// the parse pre-includes when it uses the toolkit's headers; none if
  /// empty.
  std::string CompatHeader;
};

/// Where the compatibility header of this build of the tool lives:
/// beside an installed smpart-transform (<prefix>/share/smpart-transform/
/// include, as clang finds its resource dir from its binary), else in the
/// source tree it was built from. Empty when neither exists.
std::string nvccCompatHeader(const char *Argv0);

/// GCC's private include dir with omp.h, if any (what nvcc's host compiler
/// sees and clang's resource dir lacks).
std::string hostCompilerInclude();

/// Rewrites an nvcc command line into clang syntax. For a command whose
/// program is nvcc every nvcc flag is translated or dropped; for any other
/// program (clang, or the arguments given after `--`) only the spellings
/// that exist in nvcc alone (`-arch=sm_80`, `-gencode`, `--expt-*`,
/// `-Xcompiler`, `-forward-unknown-to-host-compiler`, `--options-file`...)
/// are, so clang flags pass through. `--options-file F` / `-optf F` is read
/// (relative to \p Directory) and its contents translated in its place.
/// Exposed for tests.
std::vector<std::string> translateNvccArgs(const std::vector<std::string> &Args,
                                           llvm::StringRef Directory = "");

/// A compilation database whose commands come out translated by
/// translateNvccArgs (each relative to its entry's directory), so that
/// CMake's nvcc entries (Ninja and Makefiles) parse as clang commands.
class NvccTranslatingDatabase : public clang::tooling::CompilationDatabase {
public:
  explicit NvccTranslatingDatabase(
      const clang::tooling::CompilationDatabase &Inner)
      : Inner(Inner) {}
  explicit NvccTranslatingDatabase(
      std::unique_ptr<clang::tooling::CompilationDatabase> Owned)
      : Owned(std::move(Owned)), Inner(*this->Owned) {}
  std::vector<clang::tooling::CompileCommand>
  getCompileCommands(llvm::StringRef File) const override;
  std::vector<std::string> getAllFiles() const override {
    return Inner.getAllFiles();
  }
  std::vector<clang::tooling::CompileCommand>
  getAllCompileCommands() const override;

private:
  std::unique_ptr<clang::tooling::CompilationDatabase> Owned;
  const clang::tooling::CompilationDatabase &Inner;
};

/// The compile_commands.json (or compile_flags.txt) of \p BuildPath or of
/// its nearest parent that has one. nvcc entries are translated before
/// clang infers a command for a file the database lacks (by borrowing the
/// nearest entry's), since the inference parses the command with clang's
/// option table and would mangle nvcc's flags; each borrowing is noted
/// once per file on stderr. Null when there is none (\p Error empty) or it
/// cannot be read (\p Error says why).
std::unique_ptr<clang::tooling::CompilationDatabase>
loadProjectDatabase(llvm::StringRef BuildPath, std::string &Error);

/// The macros nvcc predefines (its `--dryrun` shows them) and clang does
/// not, as -D flags, so that the toolkit's headers take nvcc's branches:
/// the compiler version (__CUDACC_VER_MAJOR__ ..., from the toolkit's
/// cuda.h, which nvcc's version matches) and the API version derived from
/// it, and the cluster types of cooperative groups, which the headers give
/// only to __NVCC__ or on request (_CG_CLUSTER_INTRINSICS_AVAILABLE); clang
/// has the intrinsics they use. Not __NVCC__ itself (see the definition).
std::vector<std::string> nvccMacros(const std::string &CudaPath);

/// The adjuster for one side of the parse.
clang::tooling::ArgumentsAdjuster cudaAdjuster(const CudaSetup &Setup,
                                               bool DeviceSide);

/// Checks the resource dir, and the CUDA installation unless every file's
/// command opts out of the CUDA headers (-nocudainc); returns an error
/// message naming the flag to pass, or empty when all is usable.
std::string checkSetup(const CudaSetup &Setup,
                       const clang::tooling::CompilationDatabase &Db,
                       const std::vector<std::string> &Files);

} // namespace smpart
