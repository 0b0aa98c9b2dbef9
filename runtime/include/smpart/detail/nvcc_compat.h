// Pre-included by smpart-transform (never by compiled code) when it parses
// a file with the CUDA toolkit's headers: what nvcc's own headers bring in
// that clang's CUDA wrapper does not, so that code nvcc compiles parses
// too. nvcc's crt/common_functions.h includes these C headers, and real
// code relies on it (time(), srand(), memcpy(), printf() without the
// include).
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
