#!/usr/bin/env python3
"""Writes the seed corpora of linv's fuzz targets (tests/fuzz/corpus/<target>/): small valid files of every
variant each reader takes, and edge cases (headers announcing far more data than the file holds, empty
arrays, refused types). The files are checked in; run this again only to change the seeds:

    python3 tests/fuzz/make_corpus.py

Inputs that once found a fault are kept beside the seeds as regression-<what>, written by hand, never by
this script, which leaves them alone. Needs NumPy and SciPy (the tests' own dependencies), and Pillow for the
JPEG and TIFF seeds.
"""
import gzip
import io
import os
import struct
import zlib

import numpy as np
import scipy.io
import scipy.sparse

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240601)


def put(target, name, data):
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def npy_bytes(array, version=None, fortran=False):
    f = io.BytesIO()
    array = np.asfortranarray(array) if fortran else np.ascontiguousarray(array)
    np.lib.format.write_array(f, array, version=version)
    return f.getvalue()


def npy_header(dict_text, data=b""):
    """A version 1.0 .npy file with this header dict, padded as NumPy pads it, and these data bytes."""
    header = dict_text.encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + data


# ---- .npy ----
def npy_corpus():
    put("npy", "f8-c-2x3", npy_bytes(rng.standard_normal((2, 3))))
    put("npy", "f4-fortran-3x2", npy_bytes(rng.standard_normal((3, 2)).astype("<f4"), fortran=True))
    put("npy", "f8-vector", npy_bytes(np.arange(4.0)))
    put("npy", "f8-scalar", npy_bytes(np.array(2.5)))
    put("npy", "f8-stack-2x2x2", npy_bytes(rng.standard_normal((2, 2, 2))))
    put("npy", "f4-stack-fortran", npy_bytes(rng.standard_normal((2, 3, 2)).astype("<f4"), fortran=True))
    put("npy", "u1-image-4x4", npy_bytes(rng.integers(0, 256, (4, 4), dtype=np.uint8)))
    put("npy", "u2-rgb-3x3x3", npy_bytes(rng.integers(0, 65536, (3, 3, 3), dtype=np.uint16)))
    put("npy", "f8-rgba-fortran", npy_bytes(rng.uniform(0, 1, (2, 2, 4)), fortran=True))
    put("npy", "version-2", npy_bytes(np.eye(2), version=(2, 0)))
    put("npy", "empty-0x3", npy_bytes(np.zeros((0, 3))))
    put("npy", "huge-shape-no-data", npy_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }"))
    put("npy", "extra-bytes", npy_bytes(np.eye(2)) + b"xy")
    put("npy", "big-endian", npy_bytes(np.eye(2).astype(">f8")))
    put("npy", "int64", npy_bytes(np.eye(2, dtype="<i8")))


# ---- Matrix Market ----
def mtx_corpus():
    put("mtx", "array-real-general", b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4.5e-1\n")
    put("mtx", "array-symmetric", b"%%MatrixMarket matrix array real symmetric\n% lower triangle\n2 2\n4\n1\n3\n")
    put("mtx", "array-skew", b"%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n")
    put("mtx", "coordinate-real",
        b"%%MatrixMarket matrix coordinate real general\n%\n\n3 4 3\n1 1 1.5\n2 4 -2\n3 2 +7e2\n")
    put("mtx", "coordinate-pattern-symmetric",
        b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n")
    put("mtx", "coordinate-integer-skew", b"%%MatrixMarket Matrix Coordinate Integer Skew-Symmetric\n2 2 1\n2 1 5\n")
    put("mtx", "coordinate-duplicates", b"%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n1 1 2\n2 2 3\n")
    put("mtx", "empty-0x0", b"%%MatrixMarket matrix array real general\n0 0\n")
    put("mtx", "array-huge-declared", b"%%MatrixMarket matrix array real general\n1000000 1000000\n1\n")
    put("mtx", "coordinate-many-entries-declared",
        b"%%MatrixMarket matrix coordinate real general\n10 10 1000000000000\n1 1 1\n")
    put("mtx", "complex", b"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n")


# ---- PGM ----
def pgm_corpus():
    pixels = rng.integers(0, 256, (3, 4), dtype=np.uint8)
    put("pgm", "p5-8bit-4x3", b"P5\n4 3\n255\n" + pixels.tobytes())
    put("pgm", "p5-16bit-2x2", b"P5 2 2 65535\n" + rng.integers(0, 65536, (2, 2)).astype(">u2").tobytes())
    put("pgm", "p2-comments", b"P2\n# a comment\n3 2\n# another\n15\n0 1 2\n13 14 15\n")
    put("pgm", "p2-maxval-1", b"P2 2 2 1 0 1 1 0\n")
    put("pgm", "p5-huge-declared", b"P5\n100000 100000\n255\n\x00\x01")
    put("pgm", "p2-huge-declared", b"P2\n100000 100000\n255\n0 1\n")
    put("pgm", "p5-pixel-over-maxval", b"P5\n2 1\n10\n\x05\x0b")


# ---- PNG ----
def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png_rows(samples, depth):
    """Scanlines of an h x w x c array of samples, each with filter byte 0 (none)."""
    out = b""
    for row in samples:
        flat = row.reshape(-1)
        if depth == 16:
            data = flat.astype(">u2").tobytes()
        elif depth == 8:
            data = flat.astype(np.uint8).tobytes()
        else:
            data = np.packbits(np.unpackbits(flat.astype(np.uint8)[:, None], axis=1)[:, 8 - depth:].reshape(-1)).tobytes()
        out += b"\x00" + data
    return out


def png_bytes(samples, depth, colour, palette=None, trns=None, interlace=False):
    h, w = samples.shape[:2]
    samples = samples.reshape(h, w, -1)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ADAM7:
            sub = samples[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                raw += png_rows(sub, depth)
    else:
        raw = png_rows(samples, depth)
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour, 0, 0, int(interlace)))
    if palette is not None:
        out += png_chunk(b"PLTE", bytes(palette))
    if trns is not None:
        out += png_chunk(b"tRNS", bytes(trns))
    return out + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b"")


def png_corpus():
    for depth in (1, 2, 4, 8, 16):
        put("png", f"grey-{depth}bit", png_bytes(rng.integers(0, 2 ** depth, (3, 5)), depth, 0))
    put("png", "grey-alpha-8bit", png_bytes(rng.integers(0, 256, (3, 4, 2)), 8, 4))
    put("png", "rgb-8bit", png_bytes(rng.integers(0, 256, (3, 4, 3)), 8, 2))
    put("png", "rgb-16bit", png_bytes(rng.integers(0, 65536, (2, 3, 3)), 16, 2))
    put("png", "rgba-8bit", png_bytes(rng.integers(0, 256, (3, 3, 4)), 8, 6))
    put("png", "palette-2bit-trns", png_bytes(rng.integers(0, 4, (4, 4)), 2, 3, palette=range(12), trns=[0, 255]))
    put("png", "palette-8bit", png_bytes(rng.integers(0, 3, (3, 3)), 8, 3, palette=range(9)))
    put("png", "grey-trns", png_bytes(rng.integers(0, 256, (3, 3)), 8, 0, trns=[0, 7]))
    put("png", "interlaced-grey", png_bytes(rng.integers(0, 256, (9, 9)), 8, 0, interlace=True))
    put("png", "interlaced-rgb-16bit", png_bytes(rng.integers(0, 65536, (5, 3, 3)), 16, 2, interlace=True))
    # A header announcing 10^12 pixels over an IDAT of a few bytes.
    bomb = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", 1000000, 1000000, 8, 0, 0, 0, 0))
    put("png", "huge-declared", bomb + png_chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + png_chunk(b"IEND", b""))
    put("png", "truncated", png_bytes(rng.integers(0, 256, (4, 4)), 8, 0)[:-30])


# ---- MATLAB .mat ----
def mat_bytes(variables, **options):
    f = io.BytesIO()
    scipy.io.savemat(f, variables, **options)
    data = f.getvalue()
    if options.get("format") == "4":
        return data
    # A fixed description instead of the one with today's date, so that the seeds do not change each run.
    return b"MATLAB 5.0 MAT-file, written by make_corpus.py".ljust(116) + data[116:]


def mat_corpus():
    put("mat", "double-2x3", mat_bytes({"A": rng.standard_normal((2, 3))}))
    put("mat", "single-3x2", mat_bytes({"A": rng.standard_normal((3, 2)).astype(np.float32)}))
    put("mat", "stack-2x2x3", mat_bytes({"A": rng.standard_normal((2, 2, 3))}))
    put("mat", "compressed", mat_bytes({"A": rng.standard_normal((3, 3))}, do_compression=True))
    put("mat", "mat4", mat_bytes({"A": rng.standard_normal((2, 2))}, format="4"))
    put("mat", "two-variables", mat_bytes({"A": np.eye(2), "B": np.ones((1, 3))}))
    put("mat", "char-struct-cell", mat_bytes({"A": np.eye(2), "s": {"x": 1.0}, "c": np.array(["ab"]),
                                              "cell": np.array([[np.eye(1)]], dtype=object)}))
    nested = {"A": np.eye(2), "s": {"x": np.ones((2, 2)), "name": "abc", "inner": {"y": np.arange(3.0)}},
              "c": np.array([[np.eye(2), "txt"], [np.zeros(0), np.array([[1, 2]])]], dtype=object)}
    put("mat", "nested-struct-cell", mat_bytes(nested))
    put("mat", "nested-struct-cell-compressed", mat_bytes(nested, do_compression=True))
    put("mat", "sparse", mat_bytes({"A": scipy.sparse.csc_matrix(np.eye(3))}))
    put("mat", "int32", mat_bytes({"A": np.arange(6, dtype=np.int32).reshape(2, 3)}))
    put("mat", "complex", mat_bytes({"A": np.eye(2) * (1 + 1j)}))
    put("mat", "empty", mat_bytes({"A": np.zeros((0, 0))}))
    put("mat", "truncated", mat_bytes({"A": rng.standard_normal((4, 4))})[:-20])


# ---- NIfTI (the fuzz target's first byte: bit 0 names the file .nii.gz, bit 1 makes it its own mask) ----
def nifti1(data, dims, datatype, bitpix, slope=0.0, inter=0.0, endian="<"):
    h = bytearray(348)
    struct.pack_into(endian + "i", h, 0, 348)
    struct.pack_into(endian + "8h", h, 40, len(dims), *dims, *([1] * (7 - len(dims))))
    struct.pack_into(endian + "hh", h, 70, datatype, bitpix)
    struct.pack_into(endian + "8f", h, 76, 1, 2, 2, 2, 1.5, 0, 0, 0)
    struct.pack_into(endian + "3f", h, 108, 352, slope, inter)
    h[123] = 2 | 8  # mm, seconds
    struct.pack_into(endian + "hh", h, 252, 1, 1)
    struct.pack_into(endian + "12f", h, 280, 2, 0, 0, -1, 0, 2, 0, -1, 0, 0, 2, -1)
    h[344:348] = b"n+1\0"
    return bytes(h) + b"\0\0\0\0" + data


def nifti2(data, dims, datatype, bitpix):
    h = bytearray(540)
    struct.pack_into("<i", h, 0, 540)
    h[4:12] = b"n+2\0\r\n\x1a\n"
    struct.pack_into("<hh", h, 12, datatype, bitpix)
    struct.pack_into("<8q", h, 16, len(dims), *dims, *([1] * (7 - len(dims))))
    struct.pack_into("<8d", h, 104, 1, 2, 2, 2, 1.5, 0, 0, 0)
    struct.pack_into("<q", h, 168, 544)
    struct.pack_into("<ii", h, 344, 1, 1)
    struct.pack_into("<i", h, 500, 2 | 8)
    return bytes(h) + b"\0\0\0\0" + data


def nifti_corpus():
    volumes = rng.standard_normal((3, 2, 2, 2))  # t, z, y, x: NIfTI's order is x fastest
    put("nifti", "f32-4d", b"\x00" + nifti1(volumes.astype("<f4").tobytes(), (2, 2, 2, 3), 16, 32))
    put("nifti", "f64-big-endian", b"\x00" + nifti1(volumes.astype(">f8").tobytes(), (2, 2, 2, 3), 64, 64, endian=">"))
    put("nifti", "i16-scaled", b"\x00" + nifti1(rng.integers(-99, 99, 16).astype("<i2").tobytes(), (2, 2, 2, 2), 4, 16,
                                               slope=0.5, inter=1.0))
    put("nifti", "u8-3d-own-mask", b"\x02" + nifti1(np.array([0, 1, 2, 0, 3, 4, 0, 5], np.uint8).tobytes(), (2, 2, 2), 2, 8))
    put("nifti", "i64-4d", b"\x00" + nifti1(np.arange(16, dtype="<i8").tobytes(), (2, 2, 1, 4), 1024, 64))
    put("nifti", "nifti2-f32", b"\x00" + nifti2(volumes.astype("<f4").tobytes(), (2, 2, 2, 3), 16, 32))
    put("nifti", "gz-f32", b"\x01" + gzip.compress(nifti1(volumes.astype("<f4").tobytes(), (2, 2, 2, 3), 16, 32), mtime=0))
    put("nifti", "gz-u8-own-mask",
        b"\x03" + gzip.compress(nifti1(np.array([1, 0, 2, 0], np.uint8).tobytes(), (2, 2, 1), 2, 8), mtime=0))
    put("nifti", "nan-voxel", b"\x00" + nifti1(np.array([1, np.nan, 2, 3], "<f4").tobytes(), (2, 2, 1, 1), 16, 32))
    put("nifti", "huge-declared", b"\x00" + nifti1(b"\0" * 16, (10000, 10000, 10000, 100), 16, 32))
    put("nifti", "gz-huge-declared", b"\x01" + gzip.compress(nifti1(b"\0" * 16, (10000, 10000, 10000, 100), 16, 32), mtime=0))
    put("nifti", "gz-truncated", b"\x01" + gzip.compress(nifti1(volumes.astype("<f4").tobytes(), (2, 2, 2, 3), 16, 32),
                                                         mtime=0)[:-12])


# ---- the command line: command, input format, three bytes of option choices (fuzz_cli.cpp), the file ----
COMMANDS = ["inv", "solve", "lstsq", "pinv", "chol", "wls", "degrade", "deblur", "omp", "ksvd", "adl", "parafac2"]


def cli_seed(name, command, extension_index, picks, file):
    """picks: for each option group, 0 (none) or the 1-based alternative."""
    choices = sum(p << (2 * g) for g, p in enumerate(picks))
    prefix = bytes([COMMANDS.index(command), extension_index]) + choices.to_bytes(3, "little")
    put("cli", name, prefix + file)


def cli_corpus():
    spd = rng.standard_normal((4, 4))
    spd = spd @ spd.T + 4 * np.eye(4)
    cli_seed("inv-npy", "inv", 0, [1], npy_bytes(spd))
    cli_seed("inv-mtx-gauss-jordan-report", "inv", 1, [1, 3, 0, 0, 0, 0, 0, 1],
             b"%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 3\n3 3 4\n")
    cli_seed("inv-mat-mixed", "inv", 2, [2, 0, 0, 3], mat_bytes({"A": spd}))
    cli_seed("inv-batch", "inv", 0, [1, 0, 0, 0, 1], npy_bytes(np.stack([spd, 2 * spd])))
    cli_seed("solve-cholesky", "solve", 0, [1, 2], npy_bytes(spd))
    cli_seed("lstsq-f32", "lstsq", 0, [1, 1, 1], npy_bytes(rng.standard_normal((5, 3)).astype("<f4")))
    cli_seed("pinv-sparse-apply", "pinv", 0, [1, 2, 1], npy_bytes(rng.standard_normal((4, 4))))
    cli_seed("pinv-bordered", "pinv", 0, [1, 1], npy_bytes(np.array([[1.0, 1, 0], [1, 1, 0], [1, 0, 1], [1, 0, 1]])))
    cli_seed("chol", "chol", 0, [1], npy_bytes(spd))
    cli_seed("wls-scalar", "wls", 0, [1, 1], npy_bytes(np.array([[2.0]])))
    image = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    cli_seed("degrade-pgm-noise", "degrade", 1, [1, 1, 1], b"P5\n8 8\n255\n" + image.tobytes())
    cli_seed("degrade-png-own-psf", "degrade", 0, [2, 3], png_bytes(rng.integers(0, 256, (5, 5)), 8, 0))
    cli_seed("deblur-pgm-spectral", "deblur", 1, [1, 1], b"P5\n8 8\n255\n" + image.tobytes())
    cli_seed("deblur-png-rgba-matrix-free", "deblur", 0, [3, 2, 2], png_bytes(rng.integers(0, 256, (6, 6, 4)), 8, 6))
    signals = rng.standard_normal((4, 6))
    cli_seed("omp-npy", "omp", 0, [1], npy_bytes(signals))
    cli_seed("ksvd-npy-mtx-codes", "ksvd", 0, [1, 2], npy_bytes(signals))
    run = nifti1(rng.standard_normal((4, 2, 2, 2)).astype("<f4").tobytes(), (2, 2, 2, 4), 16, 32)
    cli_seed("ksvd-nifti-maps", "ksvd", 3, [1, 1, 1], run)
    cli_seed("ksvd-nifti-4d-mask", "ksvd", 3, [1, 1, 2, 1], run)
    cli_seed("adl-npy", "adl", 0, [1, 1], npy_bytes(signals))
    cli_seed("parafac2-stack", "parafac2", 0, [1, 0, 1], npy_bytes(rng.standard_normal((2, 3, 4))))
    cli_seed("parafac2-mat-two-slabs", "parafac2", 1, [1, 1, 1], mat_bytes({"A": rng.standard_normal((3, 4))}))


# ---- JPEG and TIFF (written by Pillow, libjpeg's and libtiff's own encoders) ----
def pillow_bytes(array, fmt, **options):
    from PIL import Image
    f = io.BytesIO()
    Image.fromarray(array).save(f, format=fmt, **options)
    return f.getvalue()


def photo_corpus():
    grey, rgb = rng.integers(0, 256, (6, 5)).astype(np.uint8), rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)
    put("photo", "jpeg-grey", pillow_bytes(grey, "JPEG", quality=90))
    put("photo", "jpeg-rgb", pillow_bytes(rgb, "JPEG", quality=75))
    put("photo", "jpeg-rgb-progressive", pillow_bytes(rgb, "JPEG", progressive=True))
    put("photo", "jpeg-truncated", pillow_bytes(rgb, "JPEG")[:-40])
    put("photo", "tiff-grey-8bit", pillow_bytes(grey, "TIFF"))
    put("photo", "tiff-grey-16bit", pillow_bytes(rng.integers(0, 65536, (4, 3)).astype(np.uint16), "TIFF"))
    put("photo", "tiff-float32", pillow_bytes(rng.standard_normal((3, 4)).astype(np.float32), "TIFF"))
    put("photo", "tiff-rgb-lzw", pillow_bytes(rgb, "TIFF", compression="tiff_lzw"))
    put("photo", "tiff-rgb-deflate", pillow_bytes(rgb, "TIFF", compression="tiff_adobe_deflate"))
    put("photo", "tiff-bilevel", pillow_bytes(grey > 128, "TIFF"))


# ---- .npz ----
def npz_bytes(save, **arrays):
    f = io.BytesIO()
    save(f, **arrays)
    return f.getvalue()


def npz_corpus():
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((2, 2, 2))
    put("npz", "stored-one", npz_bytes(np.savez, A=a))
    put("npz", "stored-two", npz_bytes(np.savez, A=a, b=b.astype("<f4")))
    put("npz", "deflated-two", npz_bytes(np.savez_compressed, A=a, b=b))
    put("npz", "deflated-empty", npz_bytes(np.savez_compressed, A=np.zeros((0, 3))))
    put("npz", "comment", npz_bytes(np.savez, A=a)[:-2] + struct.pack("<H", 5) + b"hello")


if __name__ == "__main__":
    npy_corpus()
    npz_corpus()
    mtx_corpus()
    pgm_corpus()
    png_corpus()
    mat_corpus()
    nifti_corpus()
    cli_corpus()
    photo_corpus()
