// linv: fast linear inverse problems on GPUs, correct everywhere. The whole public API.
#pragma once

#include "linv/accuracy.hpp"
#include "linv/adl.hpp"
#include "linv/batched.hpp"
#include "linv/dense.hpp"
#include "linv/device.hpp"
#include "linv/errors.hpp"
#include "linv/fmri.hpp"
#include "linv/generate.hpp"
#include "linv/imaging.hpp"
#include "linv/io.hpp"
#include "linv/matrix.hpp"
#include "linv/parafac2.hpp"
#include "linv/report.hpp"
#include "linv/slam.hpp"
#include "linv/version.hpp"
#include "linv/wls.hpp"
