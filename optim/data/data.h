// data.h - heed::data in one include, as libtorch's <torch/data.h>: Example (example.h),
// datasets::Dataset and MapDataset (datasets.h), samplers::SequentialSampler and
// RandomSampler (samplers.h), transforms::Stack and Pad (transforms.h), make_data_loader and
// DataLoaderOptions (data_loader.h), and data::DistributedSampler (../distributed_sampler.h).
#pragma once
#include "../distributed_sampler.h"
#include "data_loader.h"
#include "datasets.h"
#include "example.h"
#include "samplers.h"
#include "transforms.h"
