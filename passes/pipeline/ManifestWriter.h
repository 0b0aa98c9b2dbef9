// The JSON manifest (--manifest): per kernel its name, mangled name,
// location, status (transformed / refused / excluded) with reasons,
// parameters and resource hints.
#pragma once

#include "pipeline/TransformPipeline.h"

#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace smpart {

void writeManifest(llvm::raw_ostream &OS,
                   const std::vector<FileOutcome> &Outcomes);

} // namespace smpart
