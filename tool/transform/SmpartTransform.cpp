// smpart-transform: rewrites CUDA kernels into persistent-thread,
// preemptible, SM-restricted form. Options and dispatch only; the work is
// in passes/.
#include "pipeline/TransformPipeline.h"

#include "clang/Tooling/CommonOptionsParser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory Category("smpart-transform options");

static cl::extrahelp CommonHelp(
    clang::tooling::CommonOptionsParser::HelpMessage);
static cl::extrahelp MoreHelp(R"(
Each __global__ function of the input (and of headers matched by
--header-filter) becomes a persistent kernel whose CTAs take logical blocks
from a device counter, yield on preemption, stay on the SMs of their mask and
tag L1-bypassing CTAs; each host <<<...>>> launch of such a kernel becomes a
call of smpart::launch. Compile the output with -I<smpart>/runtime/include
and link libsmpart. Kernels that cannot be transformed are left unchanged
with a warning "smpart: kernel 'K' not transformed: <reason>".

Examples:
  smpart-transform saxpy.cu -o saxpy.smpart.cu -- -I include
  smpart-transform -p build/ --output-dir build/smpart src/*.cu
  smpart-transform -i --manifest=kernels.json kernels.cu
)");

static cl::opt<std::string> Output("o", cl::desc("Write the rewritten file here "
                                                 "(one input; default stdout)"),
                                   cl::value_desc("file"), cl::cat(Category));
static cl::opt<std::string>
    OutputDir("output-dir",
              cl::desc("Write each rewritten file into this directory"),
              cl::value_desc("dir"), cl::cat(Category));
static cl::opt<bool> InPlace("i", cl::desc("Rewrite the files in place"),
                             cl::cat(Category));
static cl::opt<std::string> HeaderFilter(
    "header-filter",
    cl::desc("Regular expression of headers whose kernels are rewritten too"),
    cl::cat(Category));
static cl::opt<std::string>
    Kernels("kernels", cl::desc("Transform only kernels whose qualified name "
                                "matches this regular expression"),
            cl::cat(Category));
static cl::opt<std::string> ExcludeKernels(
    "exclude-kernels",
    cl::desc("Leave kernels whose qualified name matches this unchanged"),
    cl::cat(Category));
static cl::opt<std::string>
    Manifest("manifest", cl::desc("Write the JSON kernel manifest here"),
             cl::value_desc("file.json"), cl::cat(Category));
static cl::opt<std::string> CudaPath("cuda-path",
                                     cl::desc("CUDA toolkit root"),
                                     cl::init("/usr/local/cuda"),
                                     cl::cat(Category));
static cl::opt<std::string>
    GpuArch("cuda-gpu-arch",
            cl::desc("GPU arch of the device-side parse when the compile "
                     "command names none"),
            cl::init("sm_90"), cl::cat(Category));
static cl::opt<std::string>
    ResourceDir("resource-dir",
                cl::desc("Clang resource directory (CUDA wrapper headers)"),
                cl::init(SMPART_CLANG_RESOURCE_DIR), cl::cat(Category));
static cl::opt<std::string> RuntimeInclude(
    "runtime-include",
    cl::desc("smpart's runtime headers, for files an earlier run rewrote "
             "(default: the build's runtime/include, else <exe>/../include)"),
    cl::init(SMPART_RUNTIME_INCLUDE_DIR), cl::cat(Category));
static cl::opt<bool> RefusalsAreErrors(
    "refusals-as-errors",
    cl::desc("Treat a kernel that cannot be transformed as an error "
             "(exit 1, nothing written)"),
    cl::cat(Category));

int main(int argc, const char **argv) {
  // Without `-p` or `--`, parse with no extra flags (the tool adds the CUDA
  // ones) instead of searching for a compilation database and warning.
  std::vector<const char *> Args(argv, argv + argc);
  auto Given = [&](StringRef Flag) {
    return llvm::any_of(Args, [&](const char *A) {
      return StringRef(A) == Flag || StringRef(A).starts_with(Flag.str() + "=");
    });
  };
  if (!Given("--") && !Given("-p"))
    Args.push_back("--");
  int ArgCount = static_cast<int>(Args.size());
  auto Parser = clang::tooling::CommonOptionsParser::create(
      ArgCount, Args.data(), Category, cl::OneOrMore);
  if (!Parser) {
    errs() << toString(Parser.takeError());
    return 1;
  }
  const std::vector<std::string> &Files = Parser->getSourcePathList();
  auto Fail = [](const Twine &Message) {
    errs() << "smpart-transform: error: " << Message << "\n";
    return 1;
  };
  if (!Output.empty() && Files.size() != 1)
    return Fail("-o takes exactly one input file; use --output-dir");
  if (int(!Output.empty()) + int(!OutputDir.empty()) + int(InPlace) > 1)
    return Fail("-o, --output-dir and -i exclude each other");
  for (const cl::opt<std::string> *Re :
       {&HeaderFilter, &Kernels, &ExcludeKernels}) {
    std::string Why;
    if (!Re->empty() && !Regex(*Re).isValid(Why))
      return Fail("invalid regular expression for --" + Re->ArgStr + " '" +
                  *Re + "': " + Why);
  }

  smpart::TransformOptions Options;
  std::string Runtime = RuntimeInclude;
  if (!llvm::sys::fs::exists(Runtime + "/smpart/device.cuh")) {
    // An installed tool: <prefix>/bin/smpart-transform, <prefix>/include.
    SmallString<256> Installed(llvm::sys::path::parent_path(
        llvm::sys::fs::getMainExecutable(argv[0], (void *)&RuntimeInclude)));
    llvm::sys::path::append(Installed, "..", "include");
    if (llvm::sys::fs::exists(Installed + "/smpart/device.cuh"))
      Runtime = std::string(Installed);
  }
  Options.Cuda = {CudaPath, GpuArch, ResourceDir, Runtime,
                  smpart::hostCompilerInclude()};
  Options.OutputFile = Output;
  Options.OutputDir = OutputDir;
  Options.InPlace = InPlace;
  Options.HeaderFilter = HeaderFilter;
  Options.Kernels = Kernels;
  Options.ExcludeKernels = ExcludeKernels;
  Options.ManifestFile = Manifest;
  Options.RefusalsAreErrors = RefusalsAreErrors;
  if (std::string Problem = smpart::checkSetup(
          Options.Cuda, Parser->getCompilations(), Files);
      !Problem.empty())
    return Fail(Problem);

  return smpart::TransformPipeline(Parser->getCompilations(), Options)
      .run(Files);
}
