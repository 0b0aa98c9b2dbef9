#pragma once
// Edited by the test to check that a header change re-runs the rewrite.
#define EXT_SCALE(x) ((x) * EXT_FACTOR)
