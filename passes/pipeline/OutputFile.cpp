#include "pipeline/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <unistd.h>

namespace smpart {

namespace fs = llvm::sys::fs;

OutputFile::OutputFile(std::string P, std::string T)
    : Path(std::move(P)), Text(std::move(T)) {
  Target = destination(Path, Special);
}

OutputFile::OutputFile(OutputFile &&Other) noexcept
    : Path(std::move(Other.Path)), Text(std::move(Other.Text)),
      Target(std::move(Other.Target)), Special(Other.Special),
      Temp(std::move(Other.Temp)) {
  Other.Temp.reset();
}

bool OutputFile::fail(llvm::StringRef Path, const llvm::Twine &Why) {
  llvm::errs() << "smpart-transform: error: cannot write '" << Path
               << "': " << Why << "\n";
  return false;
}

std::optional<int> OutputFile::streamOf(llvm::StringRef Path) {
  if (Path == "-" || Path == "/dev/stdout")
    return 1;
  if (Path == "/dev/stderr")
    return 2;
  llvm::StringRef Fd = Path;
  if (!Fd.consume_front("/dev/fd/") && !Fd.consume_front("/proc/self/fd/"))
    return std::nullopt;
  int N = -1;
  if (Fd.getAsInteger(10, N) || N < 0)
    return std::nullopt;
  return N;
}

std::string OutputFile::destination(llvm::StringRef Path, bool &Special) {
  // /dev/stdout and /proc/self/fd/1 lead to whatever the shell opened,
  // which may even be a regular file that is being appended to.
  Special =
      streamOf(Path) || Path.starts_with("/dev/") || Path.starts_with("/proc/");
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
  // Still a link after following the chain: a loop (ELOOP).
  if (fs::is_symlink_file(Target))
    return "too many levels of symbolic links";
  llvm::SmallString<256> Folder(llvm::sys::path::parent_path(Target));
  if (Folder.empty())
    Folder = ".";
  if (fs::exists(Folder) && !fs::is_directory(Folder))
    return ("'" + Folder + "' is not a folder").str();
  if (!fs::is_directory(Folder))
    return ("folder '" + Folder + "' does not exist").str();
  return {};
}

bool OutputFile::stage() {
  if (Special || Temp)
    return true;
  if (std::string Why = problem(Path); !Why.empty())
    return fail(Path, Why);
  // The temporary file lives beside the target, so the rename is atomic
  // (one file system) and lands on the target, not on a symlink to it.
  llvm::Expected<fs::TempFile> Made = fs::TempFile::create(
      Target + ".smpart-%%%%%%", fs::all_read | fs::all_write);
  if (!Made)
    return fail(Path, llvm::toString(Made.takeError()));
  Temp.emplace(std::move(*Made));
  // -i keeps an executable script executable, a read-only group readable.
  fs::file_status Old;
  if (!fs::status(Target, Old))
    if (std::error_code EC = fs::setPermissions(Temp->FD, Old.permissions())) {
      discard();
      return fail(Path, EC.message());
    }
  llvm::raw_fd_ostream OS(Temp->FD, /*shouldClose=*/false);
  OS << Text;
  OS.flush();
  if (std::error_code EC = OS.error()) {
    OS.clear_error();
    discard();
    return fail(Path, EC.message());
  }
  return true;
}

bool OutputFile::commit() {
  if (!Special) {
    if (!Temp && !stage())
      return false;
    // keep() removes the temporary file itself when it cannot rename it.
    llvm::Error E = Temp->keep(Target);
    Temp.reset();
    if (E)
      return fail(Path, llvm::toString(std::move(E)));
    return true;
  }
  if (std::optional<int> Fd = streamOf(Path)) {
    // Written where the stream already points; llvm::outs() for standard
    // output, so that nothing else printed there is reordered.
    llvm::raw_fd_ostream Stream(*Fd, /*shouldClose=*/false);
    llvm::raw_fd_ostream &OS = *Fd == 1 ? llvm::outs() : Stream;
    OS << Text;
    OS.flush();
    if (std::error_code EC = OS.error()) {
      OS.clear_error();
      return fail(Path, EC.message());
    }
    return true;
  }
  // Opened as it is: the device or FIFO stays what it was.
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

void OutputFile::discard() {
  if (Temp)
    llvm::consumeError(Temp->discard());
  Temp.reset();
}

} // namespace smpart
