#include "pipeline/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <unistd.h>

namespace smpart {

namespace fs = llvm::sys::fs;

bool OutputFile::fail(llvm::StringRef Path, const llvm::Twine &Why) {
  llvm::errs() << "smpart-transform: error: cannot write '" << Path
               << "': " << Why << "\n";
  return false;
}

std::string OutputFile::destination(llvm::StringRef Path, bool &Special) {
  // /dev/stdout and /proc/self/fd/1 lead to whatever the shell opened,
  // which may even be a regular file that is being appended to.
  Special =
      Path.starts_with("/dev/") || Path.starts_with("/proc/") || Path == "-";
  fs::file_status Status;
  // A missing file or a dangling symlink has no status: it is created.
  if (!Special && !fs::status(Path, Status, /*Follow=*/true))
    Special = Status.type() != fs::file_type::regular_file &&
              Status.type() != fs::file_type::directory_file;
  if (Special)
    return Path.str();
  llvm::SmallString<256> Real;
  if (!fs::real_path(Path, Real))
    return std::string(Real);
  // A dangling symlink: the file it names is created (as an editor would),
  // so its chain is followed by hand. Bounded like the kernel's ELOOP.
  std::string Current = Path.str();
  for (int Hops = 0; Hops < 40; ++Hops) {
    char Link[PATH_MAX];
    ssize_t N = ::readlink(Current.c_str(), Link, sizeof(Link));
    if (N < 0)
      break;
    llvm::StringRef Target(Link, size_t(N));
    llvm::SmallString<256> Next;
    if (!llvm::sys::path::is_absolute(Target))
      Next = llvm::sys::path::parent_path(Current);
    llvm::sys::path::append(Next, Target);
    Current = std::string(Next);
  }
  return Current;
}

std::string OutputFile::problem(llvm::StringRef Path) {
  bool Special = false;
  std::string Target = destination(Path, Special);
  if (Special)
    return {};
  if (fs::is_directory(Target))
    return "it is a folder";
  llvm::SmallString<256> Folder(llvm::sys::path::parent_path(Target));
  if (Folder.empty())
    Folder = ".";
  if (!fs::is_directory(Folder))
    return ("folder '" + Folder + "' does not exist").str();
  return {};
}

bool OutputFile::write(llvm::StringRef Path, llvm::StringRef Text) {
  if (Path == "-") {
    llvm::outs() << Text;
    llvm::outs().flush();
    if (std::error_code EC = llvm::outs().error()) {
      llvm::outs().clear_error();
      return fail(Path, EC.message());
    }
    return true;
  }
  bool Special = false;
  std::string Target = destination(Path, Special);
  if (Special) {
    // Opened as it is: the device, FIFO or terminal stays what it was.
    std::error_code EC;
    llvm::raw_fd_ostream OS(Target, EC, fs::OF_None);
    if (EC)
      return fail(Path, EC.message());
    OS << Text;
    OS.close();
    if (std::error_code Err = OS.error()) {
      OS.clear_error();
      return fail(Path, Err.message());
    }
    return true;
  }
  if (std::string Why = problem(Path); !Why.empty())
    return fail(Path, Why);
  // The temporary file lives beside the target, so the rename is atomic
  // (one file system) and lands on the target, not on a symlink to it.
  fs::file_status Old;
  const bool Existed = !fs::status(Target, Old);
  llvm::Expected<fs::TempFile> Temp = fs::TempFile::create(
      Target + ".smpart-%%%%%%", fs::all_read | fs::all_write);
  if (!Temp)
    return fail(Path, llvm::toString(Temp.takeError()));
  auto Discard = [&](const llvm::Twine &Why) {
    llvm::consumeError(Temp->discard());
    return fail(Path, Why);
  };
  // -i keeps an executable script executable, a read-only group readable.
  if (Existed)
    if (std::error_code EC = fs::setPermissions(Temp->FD, Old.permissions()))
      return Discard(EC.message());
  {
    llvm::raw_fd_ostream OS(Temp->FD, /*shouldClose=*/false);
    OS << Text;
    OS.flush();
    if (std::error_code EC = OS.error()) {
      OS.clear_error();
      return Discard(EC.message());
    }
  }
  // keep() removes the temporary file itself when it cannot rename it.
  if (llvm::Error E = Temp->keep(Target))
    return fail(Path, llvm::toString(std::move(E)));
  return true;
}

} // namespace smpart
