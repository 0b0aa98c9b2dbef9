// What the matchers learn about one file, kept as plain data so that the
// facts from the host-side and the device-side parse can be merged after
// both ASTs are gone, and decisions are taken once over the union.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace smpart {

/// Which kernels keep an original-signature definition beside the
/// rewritten overload (--keep-original). Kernels declared or defined in
/// another file always do: other translation units launch them.
enum class KeepOriginal {
  All,      ///< every kernel: SMPART_DISABLE=1 can run any launch unchanged
  External, ///< kernels with external linkage: hand-declared elsewhere
  Headers,  ///< only kernels that other files must see (the minimum)
};

/// A place in a source file, already resolved to its spelling.
struct Place {
  std::string File;
  unsigned Line = 0;
  unsigned Col = 0;
  bool operator<(const Place &O) const {
    return std::tie(File, Line, Col) < std::tie(O.File, O.Line, O.Col);
  }
};

/// One textual edit: replace [Offset, Offset+Length) of File with Text.
struct Edit {
  std::string File;
  unsigned Offset = 0;
  unsigned Length = 0;
  std::string Text;
  bool operator<(const Edit &O) const {
    return std::tie(File, Offset, Length, Text) <
           std::tie(O.File, O.Offset, O.Length, O.Text);
  }
};

/// How a tagged load's tag argument is spelled (BypassLoadRewrite): the
/// planner writes it as a constant in the copies of a TagSwitchedText.
inline constexpr const char BypassTagExpr[] = "smpart_cta.bypass()";

/// A loop of a kernel body that holds tagged loads, or the whole body,
/// written once per value of the tag (BypassLoopUnswitch): where its text
/// is.
struct TagSwitchedText {
  std::string File;
  unsigned Begin = 0, End = 0;      ///< [Begin, End): its #pragma lines too
  unsigned Line = 0, Col = 0;       ///< of Begin
  unsigned EndLine = 0, EndCol = 0; ///< of End
  std::string LineFile;             ///< the file name #line uses
  bool operator<(const TagSwitchedText &O) const {
    return std::tie(File, Begin, End) < std::tie(O.File, O.Begin, O.End);
  }
};

/// Why a function cannot be transformed, with the places that show it.
struct Hazard {
  std::string Reason;
  Place Where;
  std::vector<std::pair<Place, std::string>> Notes;
  /// Why a kernel refused for this hazard must still run on every SM
  /// rather than on its partition (--confine-refused); empty: it may be
  /// confined.
  std::string RunsFree = {};
  bool operator<(const Hazard &O) const {
    return std::tie(Reason, Where) < std::tie(O.Reason, O.Where);
  }
};

/// Where a kernel's body is and what it uses. The persistent-loop prologue
/// depends on facts from both parses (a `return` or a `gridDim` may only be
/// visible with __CUDA_ARCH__ defined), so it is generated after merging.
struct KernelBody {
  std::string File;                        ///< file that holds the body
  std::string LineFile;                    ///< the name #line directives use
  unsigned OpenOffset = 0, OpenLine = 0;   ///< the body's `{`
  unsigned CloseOffset = 0, CloseLine = 0; ///< the body's `}`
  bool Valid = false;
  bool HasReturn = false;
  bool UsesBlockIdx = false;
  bool UsesGridDim = false;
};

/// A __global__ or __device__ function defined in a rewritten file. Keyed
/// by the place of its defining declaration's name.
struct FunctionFacts {
  std::string Key;
  std::string Name;        ///< qualified name, e.g. ns::Class::kernel
  std::string MangledName; ///< kernels only
  Place Where;
  bool IsKernel = false;
  std::vector<std::string> Params; ///< "type name" as written
  std::map<std::string, std::string> ResourceHints;
  std::set<Hazard> Hazards; ///< refusals found in this function
  std::set<Edit> Edits;     ///< applied only if transformed
  /// Kernels: __launch_bounds__ as a register cap without padding
  /// (LaunchBoundsEdit.h), applied if transformed and not MaxBlockSizeRead.
  std::set<Edit> LaunchBoundsEdits;
  /// Kernels: named in a query that answers with its largest block
  /// (cudaFuncGetAttributes, cudaOccupancyMaxPotentialBlockSize), which
  /// KernelQueryRewrite makes ask the rewritten kernel: that answer must
  /// stay the original's, which the program may choose its blocks by.
  bool MaxBlockSizeRead = false;
  std::set<std::string> Callees; ///< keys of called functions
  bool ReadsBlockId = false;     ///< device fn: reads blockIdx/gridDim
  /// Calls a device function this run does not rewrite that reads
  /// smpart::blockIdx()/gridDim() (a header an earlier run rewrote): a
  /// kernel that reaches it publishes its logical block.
  bool ReadsLogicalBlockOpaquely = false;
  /// Device functions it calls that its translation unit does not define
  /// (another translation unit, -fgpu-rdc), by name, with the first call. They
  /// may read the block index: a kernel that reaches them publishes its logical
  /// block, which is right when their file is rewritten too, and says so.
  std::map<std::string, Place> UnseenCallees;
  /// Kernels: loops (or the whole body) written once per bypass tag, if
  /// transformed, unless a parse refused a statement in them
  /// (UnswitchRefused: file and offset of its first token).
  std::set<TagSwitchedText> TagSwitchedTexts;
  std::set<std::pair<std::string, unsigned>> UnswitchRefused;
  /// Kernel also declared in another file, or defined in a header: its
  /// original definition must stay beside the rewritten one (an overload),
  /// so that other translation units still link and launch it.
  bool NeedsOriginal = false;
  /// --keep-original asks for the original definition of this kernel too.
  bool WantsOriginal = false;
  /// A copy could not be made (spelled in macros, explicit instantiations):
  /// the original is then kept only if it must be.
  bool OriginalUncopyable = false;
  /// The copies of the original declarations and definition, applied when
  /// the planner keeps the original (empty when it cannot be copied).
  std::set<Edit> OriginalEdits;
  /// Kernels: host uses of its address other than a <<<>>> launch or a
  /// query (a graph node, a launch API, a function pointer or table), each
  /// edited to name the original overload, which they launch with the
  /// original argument list: the original must then be kept. With how the
  /// use consumes the address (KernelAddressRewrite).
  std::set<std::pair<Place, std::string>> OriginalUses;
  /// Kernels: its address is used as above, so a launch through a pointer
  /// in the file may launch it.
  bool AddressTaken = false;
  /// What refuses the kernel instead when nothing in its file launches it
  /// with <<<>>> and no other file needs it: then the rewrite would only
  /// add a kernel nothing launches.
  std::set<Hazard> UnlaunchedHazards;
  KernelBody Body; ///< kernels only
};

/// A host-side `<<<>>>` launch of a kernel defined in a rewritten file.
struct LaunchFacts {
  std::string KernelKey;
  Place Where;
  std::string MacroName; ///< non-empty when the launch is spelled in a macro
  std::set<Edit> Edits;  ///< applied if the kernel is transformed
  /// The closure that can also launch the original kernel (SMPART_DISABLE),
  /// and the one that cannot: which one depends on whether the planner
  /// keeps the kernel's original definition.
  std::set<Edit> WithOriginal, WithoutOriginal;
  /// The launch left unchanged but put on the SMs of the kernel's
  /// partition (`smpart::confined`), applied if the kernel is refused and
  /// may be confined: nullopt when the launch cannot be edited (a macro
  /// body that serves several kernels), no edit when it is confined
  /// already (a header rewritten by an earlier run).
  std::optional<std::set<Edit>> Confined;
};

/// A host-side `<<<>>>` launch through a kernel pointer (a variable, a
/// table) in a rewritten file: the kernel is known only when it runs.
struct PointerLaunchFacts {
  Place Where;
  std::string Callee; ///< as written, e.g. `kernels[i]`
  /// Its stream made `smpart::confined(<callee>, stream)`, applied with
  /// --confine-refused; nullopt when the launch cannot be edited, and then
  /// why.
  std::optional<std::set<Edit>> Confined;
  std::string FreeBecause;
};

/// Everything learnt from the parses of one main file.
struct FileFacts {
  std::map<std::string, FunctionFacts> Functions;
  std::vector<LaunchFacts> Launches;
  /// By place: both parses see a host launch.
  std::map<Place, PointerLaunchFacts> PointerLaunches;

  FunctionFacts &function(const std::string &Key) {
    FunctionFacts &F = Functions[Key];
    F.Key = Key;
    return F;
  }
};

} // namespace smpart
