// RUN: not %smpart %s --kernels='[' -- %stubflags 2>&1 | FileCheck --check-prefix=KERNELS %s
// RUN: not %smpart %s --exclude-kernels='(' -- %stubflags 2>&1 | FileCheck --check-prefix=EXCLUDE %s
// RUN: not %smpart %s --header-filter='*' -- %stubflags 2>&1 | FileCheck --check-prefix=HEADER %s
// Invalid regular expressions are rejected before anything is parsed.
#include "cuda.h"
__global__ void k() {}

// KERNELS: {{^}}smpart-transform: error: invalid regular expression for --kernels '[': brackets ([ ]) not balanced
// EXCLUDE: {{^}}smpart-transform: error: invalid regular expression for --exclude-kernels '(': parentheses not balanced
// HEADER: {{^}}smpart-transform: error: invalid regular expression for --header-filter '*': repetition-operator operand invalid
