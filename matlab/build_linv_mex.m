function build_linv_mex(build_dir)
% BUILD_LINV_MEX  Builds linv's MEX files for this MATLAB and puts them on the path. It runs CMake (on the
% PATH, with a C++20 compiler and linv's dependencies, README's Building) with this MATLAB's matlabroot,
% so that CMake's FindMatlab compiles and links each function against it (-DLINV_MEX=MATLAB). The files
% land in <build_dir>/matlab (default: build-matlab beside this folder). Not run on linv's machines,
% which have no MATLAB; docs/matlab.md.
  root = fileparts(fileparts(mfilename('fullpath')));
  if nargin < 1
    build_dir = fullfile(root, 'build-matlab');
  end
  command = sprintf(['cmake -S "%s" -B "%s" -DCMAKE_BUILD_TYPE=Release -DLINV_MEX=MATLAB -DLINV_TESTS=OFF ' ...
                     '-DLINV_TOOLS=OFF -DMatlab_ROOT_DIR="%s" && cmake --build "%s" --parallel'], ...
                    root, build_dir, matlabroot, build_dir);
  status = system(command);
  if status ~= 0
    error('linv:build', 'the CMake build failed (status %d): %s', status, command);
  end
  addpath(fullfile(build_dir, 'matlab'));
end
