build-base/f32/layers/rnn_utils.o: layers/rnn_utils.cpp layers/rnn_utils.h \
 layers/../core/tensor.h layers/../core/real.h layers/../core/shape.h \
 layers/../autograd/shape_ops.h layers/../autograd/indexing.h \
 layers/../autograd/views.h layers/../core/error.h
layers/rnn_utils.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/shape_ops.h:
layers/../autograd/indexing.h:
layers/../autograd/views.h:
layers/../core/error.h:
