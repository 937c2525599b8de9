// main.cpp - doctest's runner, linked into both test binaries (float and double).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
