// Writes a whole output file (profiles, traces) the safe way, as
// smpart-transform writes its own (passes/pipeline/OutputFile): a regular
// file, or one that does not exist yet, atomically through a temporary
// file in its folder renamed onto it, keeping its permissions; a symlink
// followed to its target first, so the link stays a link; a device, a
// FIFO or /dev/stdout written directly and never replaced by a regular
// file.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

namespace smpart::detail {

/// The end of \p Path's symlink chain (\p Path if it is not a link).
inline std::string followSymlinks(std::string Path) {
  for (int Hops = 0; Hops < 40; ++Hops) {
    struct stat St;
    if (::lstat(Path.c_str(), &St) != 0 || !S_ISLNK(St.st_mode))
      return Path;
    std::string Target(static_cast<std::size_t>(St.st_size) + 256, '\0');
    const ssize_t N = ::readlink(Path.c_str(), Target.data(), Target.size());
    if (N < 0)
      return Path;
    Target.resize(static_cast<std::size_t>(N));
    const std::size_t Slash = Path.rfind('/');
    if (Target.front() != '/' && Slash != std::string::npos)
      Target = Path.substr(0, Slash + 1) + Target;
    Path = Target;
  }
  return Path;
}

/// The one of \p Inputs that writing \p Out would replace (the same
/// regular file, also behind a symlink or another spelling), or "": a
/// run must not overwrite what it reads.
template <class Paths>
std::string inputReplacedBy(const std::string &Out, const Paths &Inputs) {
  struct stat O; // stat follows symlinks
  if (::stat(Out.c_str(), &O) != 0 || !S_ISREG(O.st_mode))
    return "";
  for (const std::string &In : Inputs) {
    struct stat I;
    if (::stat(In.c_str(), &I) == 0 && I.st_dev == O.st_dev &&
        I.st_ino == O.st_ino)
      return In;
  }
  return "";
}

/// Writes \p Text to \p Path; on failure returns false with the reason
/// ("cannot write '<file>': <why>") in \p Why.
inline bool writeOutputFile(const std::string &Path, const std::string &Text,
                            std::string *Why) {
  auto fail = [&](const std::string &File, const char *Reason) {
    if (Why)
      *Why = "cannot write '" + File + "': " + Reason;
    return false;
  };
  const std::string Target = followSymlinks(Path);
  struct stat St;
  const bool Exists = ::stat(Target.c_str(), &St) == 0;
  if (Exists && S_ISDIR(St.st_mode))
    return fail(Path, "it is a folder");
  if (Exists && !S_ISREG(St.st_mode)) { // device, FIFO: write it as it is
    std::FILE *F = std::fopen(Target.c_str(), "wb");
    if (!F)
      return fail(Path, std::strerror(errno));
    bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
    Ok = std::fclose(F) == 0 && Ok;
    return Ok || fail(Path, std::strerror(errno));
  }
  const std::string Tmp = Target + ".tmp." + std::to_string(::getpid());
  std::FILE *F = std::fopen(Tmp.c_str(), "wb");
  if (!F)
    return fail(Path, std::strerror(errno));
  bool Ok = std::fwrite(Text.data(), 1, Text.size(), F) == Text.size();
  if (Exists)
    Ok = ::fchmod(::fileno(F), St.st_mode & 07777) == 0 && Ok;
  Ok = std::fclose(F) == 0 && Ok;
  if (!Ok || std::rename(Tmp.c_str(), Target.c_str()) != 0) {
    const int Err = errno;
    std::remove(Tmp.c_str());
    return fail(Path, std::strerror(Err));
  }
  return true;
}

} // namespace smpart::detail
