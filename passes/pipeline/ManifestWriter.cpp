#include "pipeline/ManifestWriter.h"

#include "llvm/Support/JSON.h"

namespace smpart {

static const char *statusName(KernelStatus S) {
  switch (S) {
  case KernelStatus::Transformed:
    return "transformed";
  case KernelStatus::Refused:
    return "refused";
  case KernelStatus::Excluded:
    return "excluded";
  }
  return "unknown";
}

void writeManifest(llvm::raw_ostream &OS,
                   const std::vector<FileOutcome> &Outcomes) {
  llvm::json::OStream J(OS, 2);
  J.object([&] {
    J.attribute("schema", "smpart.manifest/1");
    J.attributeArray("files", [&] {
      for (const FileOutcome &O : Outcomes)
        J.object([&] {
          J.attribute("file", O.File);
          J.attribute("already_transformed", O.AlreadyTransformed);
          J.attributeArray("kernels", [&] {
            for (const KernelDecision &D : O.Plan.Kernels) {
              const FunctionFacts &K = *D.Kernel;
              J.object([&] {
                J.attribute("name", K.Name);
                J.attribute("mangled_name", K.MangledName);
                J.attributeObject("location", [&] {
                  J.attribute("file", K.Where.File);
                  J.attribute("line", K.Where.Line);
                  J.attribute("column", K.Where.Col);
                });
                J.attribute("status", statusName(D.Status));
                J.attributeArray("reasons", [&] {
                  for (const Hazard &H : D.Reasons)
                    J.value(H.Reason);
                });
                J.attributeArray("warnings", [&] {
                  for (const Hazard &W : D.Warnings)
                    J.value(W.Reason);
                });
                // Where a refused kernel runs: on its partition's SMs, or
                // free on every SM (and why).
                if (D.Status == KernelStatus::Refused) {
                  J.attribute("confinement", D.Confined ? "confined" : "free");
                  if (!D.Confined)
                    J.attribute("free_because", D.FreeBecause);
                }
                J.attributeArray("parameters", [&] {
                  for (const std::string &P : K.Params)
                    J.value(P);
                });
                J.attributeObject("resource_hints", [&] {
                  for (const auto &[Name, Value] : K.ResourceHints)
                    J.attribute(Name, Value);
                });
              });
            }
          });
          // Launches through a kernel pointer: whichever kernel the
          // pointer holds runs on its partition's SMs, or free.
          J.attributeArray("pointer_launches", [&] {
            for (const PointerLaunchDecision &D : O.Plan.PointerLaunches)
              J.object([&] {
                J.attribute("callee", D.Launch->Callee);
                J.attributeObject("location", [&] {
                  J.attribute("file", D.Launch->Where.File);
                  J.attribute("line", D.Launch->Where.Line);
                  J.attribute("column", D.Launch->Where.Col);
                });
                J.attribute("confinement", D.Confined ? "confined" : "free");
                if (!D.Confined)
                  J.attribute("free_because", D.FreeBecause);
              });
          });
        });
    });
  });
  OS << "\n";
}

} // namespace smpart
