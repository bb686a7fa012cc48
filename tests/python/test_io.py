"""linv.read and linv.write against NumPy and SciPy's own readers and writers, on fresh random arrays:
.npy matrices and stacks, Matrix Market, MATLAB, and PNG/PGM images (exact to the quantisation step)."""
import re

import numpy as np
import pytest
import scipy.io

import linv

RNG = np.random.default_rng()  # reseeded per test from the run's seed (conftest.py)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
def test_npy_matrices_and_stacks(tmp_path, dtype, order):
    a = np.asarray(RNG.standard_normal((7, 5)), dtype=dtype, order=order)
    linv.write(tmp_path / "a.npy", a)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    np.save(tmp_path / "b.npy", a)
    b = linv.read(tmp_path / "b.npy")
    assert b.dtype == dtype
    np.testing.assert_array_equal(b, a)
    s = np.asarray(RNG.standard_normal((3, 4, 6)), dtype=dtype, order=order)
    linv.write(tmp_path / "s.npy", s)
    np.testing.assert_array_equal(np.load(tmp_path / "s.npy"), s)
    np.save(tmp_path / "t.npy", s)
    t = linv.read(tmp_path / "t.npy")
    assert t.shape == s.shape and t.dtype == dtype
    np.testing.assert_array_equal(t, s)


def test_matrix_market_both_ways(tmp_path):
    a = RNG.standard_normal((6, 4))
    linv.write(tmp_path / "a.mtx", a)
    np.testing.assert_allclose(scipy.io.mmread(str(tmp_path / "a.mtx")), a, rtol=1e-15, atol=0)
    sparse = scipy.sparse.random(8, 9, density=0.3, random_state=int(RNG.integers(1 << 31)), format="coo")
    scipy.io.mmwrite(str(tmp_path / "s.mtx"), sparse)
    np.testing.assert_allclose(linv.read(tmp_path / "s.mtx"), sparse.toarray(), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_matrices_in_npy_and_matrix_market(tmp_path, dtype):
    a = (RNG.standard_normal((6, 4)) + 1j * RNG.standard_normal((6, 4))).astype(dtype)
    a[0, 1] = complex(-0.0, 5e-324)  # a signed zero and a subnormal, both kept
    linv.write(tmp_path / "a.npy", a)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    back = linv.read(tmp_path / "a.npy")
    assert back.dtype == dtype
    np.testing.assert_array_equal(back, a)
    linv.write(tmp_path / "a.mtx", a)
    assert scipy.io.mmread(str(tmp_path / "a.mtx")).dtype == np.complex128
    m = linv.read(tmp_path / "a.mtx")  # Matrix Market holds complex128; complex64 read back rounds to itself
    assert m.dtype == np.complex128
    np.testing.assert_array_equal(m.astype(dtype), a)
    g = RNG.standard_normal((5, 5)) + 1j * RNG.standard_normal((5, 5))
    h = g @ g.conj().T
    scipy.io.mmwrite(str(tmp_path / "h.mtx"), h, symmetry="hermitian")
    np.testing.assert_allclose(linv.read(tmp_path / "h.mtx"), scipy.io.mmread(str(tmp_path / "h.mtx")), rtol=0,
                               atol=0)
    with pytest.raises(TypeError, match="complex"):
        linv.write(tmp_path / "a.png", a)
    with pytest.raises(TypeError, match="shape"):
        linv.write(tmp_path / "s.npy", np.zeros((2, 3, 3), dtype=dtype))


def test_mat_files(tmp_path):
    if not linv.io.formats()["mat"]:
        pytest.skip("this build of linv has no .mat support")
    a = RNG.standard_normal((5, 3))
    scipy.io.savemat(str(tmp_path / "m.mat"), {"x": a, "y": 2 * a})
    np.testing.assert_array_equal(linv.read(f"{tmp_path / 'm.mat'}:y"), 2 * a)
    linv.write(tmp_path / "w.mat", a)
    (name, value), = [(k, v) for k, v in scipy.io.loadmat(str(tmp_path / "w.mat")).items() if not k.startswith("__")]
    np.testing.assert_array_equal(value, a)
    for dtype in (np.complex64, np.complex128):  # complex both ways, every bit
        c = (RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))).astype(dtype)
        c[1, 2] = complex(-0.0, np.finfo(dtype).smallest_subnormal)
        scipy.io.savemat(str(tmp_path / "c.mat"), {"c": c})
        back = linv.read(f"{tmp_path / 'c.mat'}:c")
        assert back.dtype == dtype
        np.testing.assert_array_equal(back, c)
        linv.write(f"{tmp_path / 'cw.mat'}:z", c)
        z = scipy.io.loadmat(str(tmp_path / "cw.mat"))["z"]
        assert z.dtype == dtype
        np.testing.assert_array_equal(z, c)
        assert np.signbit(z[1, 2].real)


def read_pgm(path):
    data = open(path, "rb").read()
    # the header ends with exactly one whitespace byte after maxval: the pixels may begin with bytes that
    # look like whitespace (9-13, 32), which a split would eat
    header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
    assert header is not None
    w, h, maxval = (int(v) for v in header.groups())
    pixels = np.frombuffer(data[header.end():][: w * h * (2 if maxval > 255 else 1)],
                           dtype=">u2" if maxval > 255 else "u1")
    return pixels.reshape(h, w) / maxval


@pytest.mark.parametrize("bits", [8, 16])
def test_images(tmp_path, bits):
    grey = RNG.uniform(0, 1, (9, 13))
    step = 1 / (2 ** bits - 1)
    linv.write(tmp_path / "g.pgm", grey, bits=bits)
    assert np.abs(read_pgm(tmp_path / "g.pgm") - grey).max() <= step / 2 + 1e-12
    assert np.abs(linv.read(tmp_path / "g.pgm") - grey).max() <= step / 2 + 1e-12
    if not linv.io.formats()["png"]:
        pytest.skip("this build of linv has no PNG support")
    colour = RNG.uniform(0, 1, (9, 13, 3))
    linv.write(tmp_path / "c.png", colour, bits=bits)
    back = linv.read(tmp_path / "c.png")
    assert back.shape == colour.shape
    assert np.abs(back - colour).max() <= step / 2 + 1e-12
    g = linv.read(tmp_path / "c.png", grey=True)
    ref = back @ np.array([0.2126, 0.7152, 0.0722])
    assert g.shape == (9, 13) and np.abs(g - ref).max() <= 1e-12
    with pytest.raises(ValueError, match="3 channels"):
        linv.write(tmp_path / "c.pgm", colour)


def test_io_errors(tmp_path):
    with pytest.raises(linv.InputError):
        linv.read(tmp_path / "missing.npy")
    (tmp_path / "bad.mtx").write_text("%%MatrixMarket matrix array real general\n2 2\n1.0\n")
    with pytest.raises(linv.InputError, match="bad.mtx"):
        linv.read(tmp_path / "bad.mtx")
    with pytest.raises(ValueError, match=r"\(2, 3, 4\)"):
        linv.write(tmp_path / "s.mtx", np.zeros((2, 3, 4)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("suffix", [".nii", ".nii.gz"])
def test_fmri_maps_written_and_read_back(tmp_path, dtype, suffix):
    """write_fmri puts each value at its voxel (checked in the raw NIfTI-1 file, not only by linv's reader)
    and keeps the space read_fmri returns; bad arguments name what is wrong."""
    if not linv.io.formats()["nii"]:
        pytest.skip("this build of linv has no NIfTI support")
    space = linv.io.grid_space((4, 5, 3), voxel_size=2.5, tr=1.5)
    voxels = np.sort(RNG.choice(60, 17, replace=False))
    values = np.asarray(RNG.standard_normal((6, 17)), dtype=dtype)
    path = tmp_path / f"run{suffix}"
    linv.io.write_fmri(path, values, voxels, space)
    expected = np.zeros((6, 60))
    expected[:, voxels] = values
    if suffix == ".nii":
        raw = path.read_bytes()
        assert np.frombuffer(raw, "<i4", 1, 0)[0] == 348  # NIfTI-1, little-endian
        assert list(np.frombuffer(raw, "<i2", 5, 40)) == [4, 4, 5, 3, 6]
        assert np.frombuffer(raw, "<i2", 1, 70)[0] == (16 if dtype == np.float32 else 64)
        offset = int(np.frombuffer(raw, "<f4", 1, 108)[0])
        data = np.frombuffer(raw, "<f4" if dtype == np.float32 else "<f8", 6 * 60, offset).reshape(6, 60)
        np.testing.assert_array_equal(data, expected)
    signals, read_voxels, read_space = linv.io.read_fmri(path)
    np.testing.assert_array_equal(read_voxels, np.arange(60))
    np.testing.assert_array_equal(signals, expected)
    for key, value in space.items():
        if key == "descrip":
            assert read_space[key] == value
        else:
            np.testing.assert_allclose(np.asarray(read_space[key], dtype=float), np.asarray(value, dtype=float),
                                       rtol=1e-6, atol=1e-6, err_msg=key)
    # a map written back on the space read lands where the run was
    linv.io.write_fmri(tmp_path / f"map{suffix}", values[:1], voxels, read_space)
    again, _, _ = linv.io.read_fmri(tmp_path / f"map{suffix}")
    np.testing.assert_array_equal(again, expected[:1])
    with pytest.raises(ValueError, match="outside"):
        linv.io.write_fmri(tmp_path / "bad.nii", values[:, :1], [60], space)
    with pytest.raises(ValueError, match=r"\(6, 17\).*\(16,\)"):
        linv.io.write_fmri(tmp_path / "bad.nii", values, voxels[:16], space)
    with pytest.raises(ValueError, match="lacks"):
        linv.io.write_fmri(tmp_path / "bad.nii", values, voxels, {"shape": (4, 5, 3)})
    with pytest.raises(ValueError, match=".nii"):
        linv.io.write_fmri(tmp_path / "bad.npy", values, voxels, space)
    assert not (tmp_path / "bad.nii").exists()
