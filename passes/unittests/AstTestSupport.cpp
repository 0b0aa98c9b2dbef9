#include "AstTestSupport.h"

#include "clang/Tooling/Tooling.h"

namespace smpart::test {

std::unique_ptr<clang::ASTUnit> buildCudaAst(const std::string &Code) {
  return clang::tooling::buildASTFromCodeWithArgs(
      "#include \"cuda.h\"\n" + Code,
      {"-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib",
       "-Wno-unknown-cuda-version", "-I", SMPART_STUB_INCLUDE_DIR,
       "-resource-dir=" SMPART_CLANG_RESOURCE_DIR},
      "input.cu");
}

} // namespace smpart::test
