build-base/f32/autograd/flash_attention.o: autograd/flash_attention.cpp \
 autograd/flash_attention.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h autograd/attend.h \
 autograd/attention_mask.h autograd/../core/allocator.h \
 autograd/../core/blas.h autograd/../core/elementwise.h \
 autograd/../core/fastmath.h autograd/../core/parallel.h \
 autograd/../core/error.h autograd/arith.h autograd/linalg.h \
 autograd/node.h autograd/grad_mode.h autograd/scaled_dot_product.h
autograd/flash_attention.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/attend.h:
autograd/attention_mask.h:
autograd/../core/allocator.h:
autograd/../core/blas.h:
autograd/../core/elementwise.h:
autograd/../core/fastmath.h:
autograd/../core/parallel.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/linalg.h:
autograd/node.h:
autograd/grad_mode.h:
autograd/scaled_dot_product.h:
