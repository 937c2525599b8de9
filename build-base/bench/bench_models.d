build-base/bench/bench_models: tests/bench/bench_models.cpp \
 build-base/include/heed/autograd/flash_attention.h \
 build-base/include/heed/autograd/../core/tensor.h \
 build-base/include/heed/autograd/../core/real.h \
 build-base/include/heed/autograd/../core/shape.h \
 build-base/include/heed/autograd/attend.h \
 build-base/include/heed/autograd/attention_mask.h \
 build-base/include/heed/heed.h build-base/include/heed/core/allocator.h \
 build-base/include/heed/core/blas.h \
 build-base/include/heed/core/denormals.h \
 build-base/include/heed/core/elementwise.h \
 build-base/include/heed/core/fastmath.h \
 build-base/include/heed/core/parallel.h \
 build-base/include/heed/core/error.h \
 build-base/include/heed/core/random.h \
 build-base/include/heed/autograd/alibi.h \
 build-base/include/heed/autograd/anomaly_mode.h \
 build-base/include/heed/autograd/arith.h \
 build-base/include/heed/autograd/chunked_attention.h \
 build-base/include/heed/autograd/compare.h \
 build-base/include/heed/autograd/dropout_op.h \
 build-base/include/heed/autograd/embedding_op.h \
 build-base/include/heed/autograd/grad_mode.h \
 build-base/include/heed/autograd/gradcheck.h \
 build-base/include/heed/autograd/indexing.h \
 build-base/include/heed/autograd/layer_norm_op.h \
 build-base/include/heed/autograd/linalg.h \
 build-base/include/heed/autograd/linear_attention.h \
 build-base/include/heed/autograd/linear_op.h \
 build-base/include/heed/autograd/local_attention.h \
 build-base/include/heed/autograd/loss_ops.h \
 build-base/include/heed/autograd/lstm_cell_op.h \
 build-base/include/heed/autograd/lstm_gates.h \
 build-base/include/heed/autograd/lstm_layer_op.h \
 build-base/include/heed/autograd/node.h \
 build-base/include/heed/autograd/recompute.h \
 build-base/include/heed/autograd/reduce.h \
 build-base/include/heed/autograd/reduce_minmax.h \
 build-base/include/heed/autograd/reduce_util.h \
 build-base/include/heed/autograd/relative_position.h \
 build-base/include/heed/autograd/relative_position_op.h \
 build-base/include/heed/autograd/rope_op.h \
 build-base/include/heed/autograd/scaled_dot_product.h \
 build-base/include/heed/autograd/shape_ops.h \
 build-base/include/heed/autograd/views.h \
 build-base/include/heed/autograd/sliding_window_attention.h \
 build-base/include/heed/autograd/softmax.h \
 build-base/include/heed/autograd/sparse_attention.h \
 build-base/include/heed/autograd/to_dot.h \
 build-base/include/heed/autograd/topk.h \
 build-base/include/heed/autograd/unary.h \
 build-base/include/heed/layers/absolute_position.h \
 build-base/include/heed/layers/module.h \
 build-base/include/heed/layers/activation.h \
 build-base/include/heed/layers/additive_attention.h \
 build-base/include/heed/layers/scorer.h \
 build-base/include/heed/layers/chunked_attention.h \
 build-base/include/heed/layers/dropout.h \
 build-base/include/heed/layers/embedding.h \
 build-base/include/heed/layers/feed_forward.h \
 build-base/include/heed/layers/linear.h \
 build-base/include/heed/layers/gru.h \
 build-base/include/heed/layers/recurrent_base.h \
 build-base/include/heed/layers/init.h \
 build-base/include/heed/layers/layer_norm.h \
 build-base/include/heed/layers/linear_attention.h \
 build-base/include/heed/layers/local_attention.h \
 build-base/include/heed/layers/luong_attention.h \
 build-base/include/heed/layers/loss.h \
 build-base/include/heed/layers/lstm.h \
 build-base/include/heed/layers/multihead_attention.h \
 build-base/include/heed/layers/positional.h \
 build-base/include/heed/layers/relative_position.h \
 build-base/include/heed/layers/rope.h \
 build-base/include/heed/layers/recurrent_scan.h \
 build-base/include/heed/layers/repr.h \
 build-base/include/heed/layers/rnn_utils.h \
 build-base/include/heed/layers/scaled_dot_product.h \
 build-base/include/heed/layers/self_attention.h \
 build-base/include/heed/layers/sequential.h \
 build-base/include/heed/layers/sliding_window_attention.h \
 build-base/include/heed/layers/sparse_attention.h \
 build-base/include/heed/layers/transformer.h \
 build-base/include/heed/layers/transformer_decoder.h \
 build-base/include/heed/layers/transformer_encoder.h \
 build-base/include/heed/optim/adam.h \
 build-base/include/heed/optim/optimizer.h \
 build-base/include/heed/optim/checkpoint_file.h \
 build-base/include/heed/optim/clip.h \
 build-base/include/heed/optim/distributed_sampler.h \
 build-base/include/heed/optim/schedule.h \
 build-base/include/heed/optim/sgd.h
build-base/include/heed/autograd/flash_attention.h:
build-base/include/heed/autograd/../core/tensor.h:
build-base/include/heed/autograd/../core/real.h:
build-base/include/heed/autograd/../core/shape.h:
build-base/include/heed/autograd/attend.h:
build-base/include/heed/autograd/attention_mask.h:
build-base/include/heed/heed.h:
build-base/include/heed/core/allocator.h:
build-base/include/heed/core/blas.h:
build-base/include/heed/core/denormals.h:
build-base/include/heed/core/elementwise.h:
build-base/include/heed/core/fastmath.h:
build-base/include/heed/core/parallel.h:
build-base/include/heed/core/error.h:
build-base/include/heed/core/random.h:
build-base/include/heed/autograd/alibi.h:
build-base/include/heed/autograd/anomaly_mode.h:
build-base/include/heed/autograd/arith.h:
build-base/include/heed/autograd/chunked_attention.h:
build-base/include/heed/autograd/compare.h:
build-base/include/heed/autograd/dropout_op.h:
build-base/include/heed/autograd/embedding_op.h:
build-base/include/heed/autograd/grad_mode.h:
build-base/include/heed/autograd/gradcheck.h:
build-base/include/heed/autograd/indexing.h:
build-base/include/heed/autograd/layer_norm_op.h:
build-base/include/heed/autograd/linalg.h:
build-base/include/heed/autograd/linear_attention.h:
build-base/include/heed/autograd/linear_op.h:
build-base/include/heed/autograd/local_attention.h:
build-base/include/heed/autograd/loss_ops.h:
build-base/include/heed/autograd/lstm_cell_op.h:
build-base/include/heed/autograd/lstm_gates.h:
build-base/include/heed/autograd/lstm_layer_op.h:
build-base/include/heed/autograd/node.h:
build-base/include/heed/autograd/recompute.h:
build-base/include/heed/autograd/reduce.h:
build-base/include/heed/autograd/reduce_minmax.h:
build-base/include/heed/autograd/reduce_util.h:
build-base/include/heed/autograd/relative_position.h:
build-base/include/heed/autograd/relative_position_op.h:
build-base/include/heed/autograd/rope_op.h:
build-base/include/heed/autograd/scaled_dot_product.h:
build-base/include/heed/autograd/shape_ops.h:
build-base/include/heed/autograd/views.h:
build-base/include/heed/autograd/sliding_window_attention.h:
build-base/include/heed/autograd/softmax.h:
build-base/include/heed/autograd/sparse_attention.h:
build-base/include/heed/autograd/to_dot.h:
build-base/include/heed/autograd/topk.h:
build-base/include/heed/autograd/unary.h:
build-base/include/heed/layers/absolute_position.h:
build-base/include/heed/layers/module.h:
build-base/include/heed/layers/activation.h:
build-base/include/heed/layers/additive_attention.h:
build-base/include/heed/layers/scorer.h:
build-base/include/heed/layers/chunked_attention.h:
build-base/include/heed/layers/dropout.h:
build-base/include/heed/layers/embedding.h:
build-base/include/heed/layers/feed_forward.h:
build-base/include/heed/layers/linear.h:
build-base/include/heed/layers/gru.h:
build-base/include/heed/layers/recurrent_base.h:
build-base/include/heed/layers/init.h:
build-base/include/heed/layers/layer_norm.h:
build-base/include/heed/layers/linear_attention.h:
build-base/include/heed/layers/local_attention.h:
build-base/include/heed/layers/luong_attention.h:
build-base/include/heed/layers/loss.h:
build-base/include/heed/layers/lstm.h:
build-base/include/heed/layers/multihead_attention.h:
build-base/include/heed/layers/positional.h:
build-base/include/heed/layers/relative_position.h:
build-base/include/heed/layers/rope.h:
build-base/include/heed/layers/recurrent_scan.h:
build-base/include/heed/layers/repr.h:
build-base/include/heed/layers/rnn_utils.h:
build-base/include/heed/layers/scaled_dot_product.h:
build-base/include/heed/layers/self_attention.h:
build-base/include/heed/layers/sequential.h:
build-base/include/heed/layers/sliding_window_attention.h:
build-base/include/heed/layers/sparse_attention.h:
build-base/include/heed/layers/transformer.h:
build-base/include/heed/layers/transformer_decoder.h:
build-base/include/heed/layers/transformer_encoder.h:
build-base/include/heed/optim/adam.h:
build-base/include/heed/optim/optimizer.h:
build-base/include/heed/optim/checkpoint_file.h:
build-base/include/heed/optim/clip.h:
build-base/include/heed/optim/distributed_sampler.h:
build-base/include/heed/optim/schedule.h:
build-base/include/heed/optim/sgd.h:
