build-base/f32/layers/multihead_attention.o: layers/multihead_attention.cpp \
 layers/multihead_attention.h layers/../autograd/attend.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/linear.h layers/module.h layers/../autograd/flash_attention.h \
 layers/../autograd/linear_op.h layers/../autograd/reduce.h \
 layers/../autograd/reduce_minmax.h \
 layers/../autograd/scaled_dot_product.h layers/../autograd/shape_ops.h \
 layers/../autograd/indexing.h layers/../autograd/views.h \
 layers/../core/error.h layers/init.h layers/repr.h
layers/multihead_attention.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/linear.h:
layers/module.h:
layers/../autograd/flash_attention.h:
layers/../autograd/linear_op.h:
layers/../autograd/reduce.h:
layers/../autograd/reduce_minmax.h:
layers/../autograd/scaled_dot_product.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
