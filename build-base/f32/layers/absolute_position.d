build-base/f32/layers/absolute_position.o: layers/absolute_position.cpp \
 layers/absolute_position.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h layers/../autograd/arith.h \
 layers/../autograd/dropout_op.h layers/../autograd/embedding_op.h \
 layers/../autograd/shape_ops.h layers/../autograd/indexing.h \
 layers/../autograd/views.h layers/../core/error.h layers/init.h \
 layers/repr.h
layers/absolute_position.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/arith.h:
layers/../autograd/dropout_op.h:
layers/../autograd/embedding_op.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../core/error.h:
layers/init.h:
layers/repr.h:
