// ops.h - the attention functions and types of autograd/ops/attention/ under their heed::nn
// names, as torch.nn.functional.scaled_dot_product_attention names a torch op.
//
// The ops, masks and block layouts are heed:: names: they live in autograd/, which holds the
// graph and the ops (autograd/ops/attention/README.md). Code written against heed::nn
// (nn::AttentionMask, nn::scaled_dot_product_attention, nn::bigbird_layout, ...) reaches
// the same functions and types through the using-declarations below; each module header of
// layers/attention/ includes this one.
//   nn::Attended a = nn::scaled_dot_product_attention(q, k, v, nn::AttentionMask().causal());
#pragma once
#include "../../autograd/ops/attention/alibi.h"
#include "../../autograd/ops/attention/attend.h"
#include "../../autograd/ops/attention/attention_mask.h"
#include "../../autograd/ops/attention/block_layout.h"
#include "../../autograd/ops/attention/block_sparse_attention.h"
#include "../../autograd/ops/attention/chunked_attention.h"
#include "../../autograd/ops/attention/local_attention.h"
#include "../../autograd/ops/attention/relative_position_terms.h"
#include "../../autograd/ops/attention/scaled_dot_product.h"
#include "../../autograd/ops/attention/sliding_window_attention.h"
#include "../../autograd/ops/attention/sparse_attention.h"

namespace heed::nn {

// attention_mask.h: which keys a query may see
using heed::AttentionMask;
using heed::causal_last_key;
using heed::causal_mask;
using heed::check_bias;
using heed::check_mask;
using heed::check_mask_values;
using heed::query_position;
using heed::real_key;
using heed::visible;

// attend.h: mask -> softmax -> dropout -> weighted sum
using heed::Attended;
using heed::attend;
using heed::masked_softmax;

// scaled_dot_product.h
using heed::attention_scale;
using heed::check_qkv;
using heed::scaled_dot_product_attention;

// block_layout.h, sparse_attention.h, block_sparse_attention.h
using heed::BlockLayout;
using heed::bigbird_layout;
using heed::fixed_layout;
using heed::fixed_pattern;
using heed::longformer_layout;
using heed::pattern_density;
using heed::sliding_window_layout;
using heed::sliding_window_pattern;
using heed::sparse_attention;
using heed::strided_layout;
using heed::strided_pattern;

// chunked_attention.h, sliding_window_attention.h, local_attention.h
using heed::chunked_attention;
using heed::in_window;
using heed::local_attention;
using heed::sliding_window_attention;

// alibi.h, relative_position_terms.h: positions
using heed::alibi_bias;
using heed::alibi_slopes;
using heed::relative_distance_index;
using heed::relative_key_bias;
using heed::relative_key_bias_reference;
using heed::relative_value_context;
using heed::relative_value_context_reference;

}  // namespace heed::nn
