build-base/f32/autograd/anomaly_mode.o: autograd/anomaly_mode.cpp \
 autograd/anomaly_mode.h autograd/../core/tensor.h \
 autograd/../core/real.h autograd/../core/shape.h \
 autograd/../core/error.h
autograd/anomaly_mode.h:
autograd/../core/tensor.h:
autograd/../core/real.h:
autograd/../core/shape.h:
autograd/../core/error.h:
