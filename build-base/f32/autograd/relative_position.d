build-base/f32/autograd/relative_position.o: autograd/relative_position.cpp \
 autograd/relative_position.h autograd/attention_mask.h \
 autograd/../core/tensor.h autograd/../core/real.h \
 autograd/../core/shape.h autograd/../core/error.h autograd/arith.h \
 autograd/linalg.h autograd/relative_position_op.h autograd/shape_ops.h \
 autograd/indexing.h autograd/views.h
autograd/relative_position.h:
autograd/attention_mask.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
autograd/arith.h:
autograd/linalg.h:
autograd/relative_position_op.h:
autograd/shape_ops.h:
autograd/indexing.h:
autograd/views.h:
