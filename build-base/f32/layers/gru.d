build-base/f32/layers/gru.o: layers/gru.cpp layers/gru.h \
 layers/recurrent_base.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h layers/../autograd/arith.h \
 layers/../autograd/linear_op.h layers/../autograd/shape_ops.h \
 layers/../autograd/indexing.h layers/../autograd/views.h \
 layers/../autograd/unary.h layers/../core/error.h \
 layers/recurrent_scan.h
layers/gru.h:
layers/recurrent_base.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/arith.h:
layers/../autograd/linear_op.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../autograd/unary.h:
layers/../core/error.h:
layers/recurrent_scan.h:
