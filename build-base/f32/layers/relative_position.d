build-base/f32/layers/relative_position.o: layers/relative_position.cpp \
 layers/relative_position.h layers/../autograd/attend.h \
 layers/../autograd/attention_mask.h layers/../autograd/../core/tensor.h \
 layers/../autograd/../core/real.h layers/../autograd/../core/shape.h \
 layers/../autograd/relative_position.h layers/linear.h layers/module.h \
 layers/multihead_attention.h layers/../autograd/arith.h \
 layers/../autograd/linalg.h layers/../autograd/reduce.h \
 layers/../autograd/reduce_minmax.h \
 layers/../autograd/relative_position_op.h layers/../autograd/shape_ops.h \
 layers/../autograd/indexing.h layers/../autograd/views.h \
 layers/../core/error.h layers/init.h layers/repr.h
layers/relative_position.h:
layers/../autograd/attend.h:
layers/../autograd/attention_mask.h:
layers/../autograd/../core/tensor.h:
layers/../autograd/../core/real.h:
layers/../autograd/../core/shape.h:
layers/../autograd/relative_position.h:
layers/linear.h:
layers/module.h:
layers/multihead_attention.h:
layers/../autograd/arith.h:
layers/../autograd/linalg.h:
layers/../autograd/reduce.h:
layers/../autograd/reduce_minmax.h:
layers/../autograd/relative_position_op.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
