build-base/f32/optim/distributed_sampler.o: optim/distributed_sampler.cpp \
 optim/distributed_sampler.h optim/../core/error.h
optim/distributed_sampler.h:
optim/../core/error.h:
