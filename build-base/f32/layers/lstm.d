build-base/f32/layers/lstm.o: layers/lstm.cpp layers/lstm.h \
 layers/recurrent_base.h layers/module.h layers/../core/tensor.h \
 layers/../core/real.h layers/../core/shape.h \
 layers/../autograd/lstm_cell_op.h layers/../autograd/lstm_layer_op.h \
 layers/../core/error.h layers/recurrent_scan.h
layers/lstm.h:
layers/recurrent_base.h:
layers/module.h:
layers/../core/tensor.h:
layers/../core/real.h:
layers/../core/shape.h:
layers/../autograd/lstm_cell_op.h:
layers/../autograd/lstm_layer_op.h:
layers/../core/error.h:
layers/recurrent_scan.h:
