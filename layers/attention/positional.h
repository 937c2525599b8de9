// positional.h - every position encoding heed has, in one include. Attention by itself is
// blind to order (permuting the keys and values together leaves every output unchanged);
// these put order back.
//
//   encoding                  where it acts          learned   file
//   sinusoidal (Vaswani 2017) added to the input     no        absolute_position.h
//   learned absolute          added to the input     yes       absolute_position.h
//   rotary, RoPE (Su 2021)    rotates q and k        no        rope.h (op: autograd/ops/attention/rope.h)
//   relative (Shaw 2018)      adds to scores and     yes       relative_position.h
//                             to the context                   (ops: autograd/ops/attention/relative_position.h)
//   ALiBi (Press 2022)        adds to the scores     no        autograd/ops/attention/alibi.h
//
// Read them in that order: absolute encodings give each token its position; RoPE, Shaw and
// ALiBi make the positional part of the score of (i, j) depend on j - i only.
// tests/test_positional.cpp checks each one's defining property.
#pragma once
#include "absolute_position.h"
#include "ops.h"
#include "relative_position.h"
#include "rope.h"
