"""The Python examples (examples/python) run to the end on the CPU at small sizes. An example whose
packages (scikit-image, matplotlib, PyTorch) or GPU are missing must say so and exit 0."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


@pytest.mark.parametrize("script, expect", [
    ("deblur_photo.py", "linv.deblur"),
    ("torch_pipeline.py", "scaled residual"),
    ("parafac2_fmri.py", "time-course congruence"),
])
def test_example_runs(script, expect, tmp_path):
    run = subprocess.run([sys.executable, str(EXAMPLES / script), "--small", "--device", "cpu", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"{script} failed:\n{run.stdout}\n{run.stderr}"
    if "skipped" in run.stdout:
        assert run.stdout.strip().startswith(f"{Path(script).stem}: skipped, "), run.stdout
        pytest.skip(run.stdout.strip())
    assert expect in run.stdout, run.stdout
    assert any(tmp_path.iterdir()), f"{script} wrote nothing to --out"
