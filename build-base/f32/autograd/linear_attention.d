build-base/f32/autograd/linear_attention.o: autograd/linear_attention.cpp \
 autograd/linear_attention.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/allocator.h autograd/../core/error.h \
 autograd/../core/parallel.h autograd/arith.h autograd/attention_mask.h \
 autograd/compare.h autograd/linalg.h autograd/node.h \
 autograd/grad_mode.h autograd/reduce.h autograd/reduce_minmax.h \
 autograd/scaled_dot_product.h autograd/attend.h autograd/unary.h
autograd/linear_attention.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/allocator.h:
autograd/../core/error.h:
autograd/../core/parallel.h:
autograd/arith.h:
autograd/attention_mask.h:
autograd/compare.h:
autograd/linalg.h:
autograd/node.h:
autograd/grad_mode.h:
autograd/reduce.h:
autograd/reduce_minmax.h:
autograd/scaled_dot_product.h:
autograd/attend.h:
autograd/unary.h:
