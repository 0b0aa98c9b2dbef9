# cmake -DIN=<file.cu> -DOUT=<file.cpp> -P EmulationSource.cmake
# Copies a CUDA source for the CPU emulation. The one construct the
# emulation prelude cannot express with macros is dynamic shared memory:
#   extern __shared__ T name[];  ->  T *name = (T *)<emulated dynamic smem>;
file(READ "${IN}" text)
string(REGEX REPLACE
  "extern[ \t]+__shared__[ \t]+([A-Za-z_][A-Za-z0-9_: ]*[A-Za-z0-9_])[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\\[[ \t]*\\][ \t]*;"
  "\\1 *\\2 = static_cast<\\1 *>(::smpart::emu::rt::dynamicSmem());"
  text "${text}")
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
