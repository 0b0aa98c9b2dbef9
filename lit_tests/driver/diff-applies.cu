// RUN: cp %s %t.cu
// RUN: %smpart --diff %t.cu -- %stubflags > %t.diff
// RUN: %smpart %t.cu -o %t.expected.cu -- %stubflags
// RUN: patch -s %t.cu %t.diff
// RUN: cmp %t.cu %t.expected.cu
// The same for a file whose last line has no newline: the diff says so.
// RUN: printf '#include "cuda.h"\n__global__ void k(int *p) { p[0] = 1; }' > %t2.cu
// RUN: %smpart --diff %t2.cu -- %stubflags > %t2.diff
// RUN: FileCheck --check-prefix=NOEOL %s < %t2.diff
// RUN: %smpart %t2.cu -o %t2.expected.cu -- %stubflags
// RUN: patch -s %t2.cu %t2.diff
// RUN: cmp %t2.cu %t2.expected.cu
// The --diff output applies with patch(1), also where a hunk reaches the
// end of the file (it once had a line past the end), here the kernel on
// the last line.
// NOEOL: -__global__ void k(int *p) { p[0] = 1; }
// NOEOL-NEXT: \ No newline at end of file
#include "cuda.h"

__global__ void k(int *p) { p[0] = 1; }
