"""mfu_build: the PEP 517 build backend of the mfu Python package (python/pyproject.toml).

It needs nothing but the Python running it and the project's C toolchain (cmake, a C
compiler, the -dev packages scripts/deps.sh installs): no build requirement is fetched, so
`pip install ./python` works with build isolation and without a network (--no-index).

build_wheel runs CMake on the repository's sources (the parent of python/; in an sdist, its
csrc/ copy), builds the shared library and the `mfu` CLI in Release, and writes one wheel:

    mfu/*.py, mfu/integrations/*.py     the binding (ctypes) and the trainers' callbacks
    mfu/libmfu.so                       the library the binding loads first
    mfu-VERSION.data/scripts/mfu        the CLI (on PATH in the environment it installs into)
    mfu-VERSION.dist-info/              METADATA, WHEEL, top_level.txt, RECORD

The wheel is tagged py3-none-<platform> (linux_x86_64): the binding is Python-version
independent (ctypes), the library is not portable across systems (it links the system's
jansson, zlib, zstd, sqlite3 and libmicrohttpd), so it is no manylinux wheel.

The CMake build directory is, in order: config setting "build-dir" (pip --config-settings
build-dir=DIR), $MFU_WHEEL_BUILD_DIR, build/python-wheel/ of a checkout (incremental: a second
build only relinks what changed), or a temporary directory (an sdist). The version is the
one of CMakeLists.txt's project(mfu VERSION ...).
"""

import base64
import contextlib
import fcntl
import hashlib
import io
import os
import re
import shutil
import stat
import subprocess
import sysconfig
import tarfile
import tempfile
import zipfile

NAME = "mfu"
SUMMARY = ("Model FLOPs utilization of training runs, in the loop and from logs "
           "(binding over libmfu, trainer callbacks)")
REQUIRES_PYTHON = ">=3.8"
# what the C build needs from the repository, relative to its root (web/dist: the dashboard
# the library embeds, made by scripts/deps.sh)
C_SOURCES = ("CMakeLists.txt", "cmake", "include", "src", "web/dist")

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_ROOT = os.path.dirname(HERE)  # python/ (or an unpacked sdist)


def _source_root():
    for cand in (os.path.join(PKG_ROOT, "csrc"), os.path.dirname(PKG_ROOT)):
        if os.path.isfile(os.path.join(cand, "CMakeLists.txt")) and \
                os.path.isdir(os.path.join(cand, "src")):
            return cand
    raise RuntimeError("mfu_build: no C sources: expected the repository around python/ or an "
                       "sdist's csrc/ (CMakeLists.txt and src/)")


def _version(root):
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*mfu\s+VERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise RuntimeError("mfu_build: CMakeLists.txt has no project(mfu VERSION x.y.z)")
    return m.group(1)


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3", "none", plat


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n"
            "Description-Content-Type: text/markdown\n\n"
            "The Python binding of mfu (docs/python.md): MFU inside a training loop, the Hugging "
            "Face Trainer and Lightning callbacks, and the mfu command-line tool.\n"
            % (NAME, version, SUMMARY, REQUIRES_PYTHON))


def _dist_info(version):
    return "%s-%s.dist-info" % (NAME, version)


def _build_dir(root, config_settings):
    cs = config_settings or {}
    d = cs.get("build-dir") or os.environ.get("MFU_WHEEL_BUILD_DIR")
    if d:
        return os.path.abspath(d), False
    if root == os.path.dirname(PKG_ROOT) and os.access(root, os.W_OK):
        return os.path.join(root, "build", "python-wheel"), False
    return tempfile.mkdtemp(prefix="mfu-wheel-"), True


def _run(cmd, log):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    log.append("$ " + " ".join(cmd) + "\n" + p.stdout.decode(errors="replace"))
    if p.returncode != 0:
        tail = "".join(log)[-4000:]
        raise RuntimeError("mfu_build: %s failed (exit %d); its output:\n%s\nThe C build needs "
                           "cmake, a C compiler and the packages of scripts/deps.sh (and "
                           "web/dist, which that script makes)" % (cmd[0], p.returncode, tail))


def _cmake_build(root, bdir):
    """Build mfu_shared and mfu in bdir; return (library path, CLI path)."""
    os.makedirs(bdir, exist_ok=True)
    log = []
    with open(os.path.join(bdir, ".mfu_build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once share one directory safely
        if not os.path.exists(os.path.join(bdir, "CMakeCache.txt")):
            _run(["cmake", "-S", root, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
                  "-DBUILD_TESTING=OFF", "-DMFU_SANITIZER_SUITE=OFF"], log)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        _run(["cmake", "--build", bdir, "--target", "mfu_shared", "mfu", "-j", jobs], log)
    lib = os.path.realpath(os.path.join(bdir, "libmfu.so"))
    cli = os.path.join(bdir, "mfu")
    for p in (lib, cli):
        if not os.path.isfile(p):
            raise RuntimeError("mfu_build: the build made no %s" % p)
    return lib, cli


def _python_files():
    """(archive name, path) of every .py of the package, sorted."""
    out = []
    base = os.path.join(PKG_ROOT, "mfu")
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                full = os.path.join(dirpath, fn)
                out.append((os.path.relpath(full, PKG_ROOT).replace(os.sep, "/"), full))
    return out


def _zip_time():
    # reproducible: SOURCE_DATE_EPOCH when set, else the zip format's first date
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        import time
        return time.gmtime(max(int(epoch), 315532800))[:6]
    return (1980, 1, 1, 0, 0, 0)


class _Wheel:
    def __init__(self, path):
        self.zf = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record = []
        self.when = _zip_time()

    def add(self, name, data, executable=False):
        info = zipfile.ZipInfo(name, date_time=self.when)
        info.external_attr = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zf.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (name, digest, len(data)))

    def close(self, record_name):
        self.record.append(record_name + ",,")
        info = zipfile.ZipInfo(record_name, date_time=self.when)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        self.zf.writestr(info, "\n".join(self.record) + "\n")
        self.zf.close()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


# ---- PEP 517 hooks ----------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    version = _version(_source_root())
    d = os.path.join(metadata_directory, _dist_info(version))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(version))
    return _dist_info(version)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = _source_root()
    version = _version(root)
    bdir, temporary = _build_dir(root, config_settings)
    try:
        lib, cli = _cmake_build(root, bdir)
        tag = _tag()
        name = "%s-%s-%s.whl" % (NAME, version, "-".join(tag))
        os.makedirs(wheel_directory, exist_ok=True)
        w = _Wheel(os.path.join(wheel_directory, name))
        for arc, full in _python_files():
            w.add(arc, _read(full))
        w.add("mfu/libmfu.so", _read(lib), executable=True)
        w.add("%s-%s.data/scripts/mfu" % (NAME, version), _read(cli), executable=True)
        di = _dist_info(version)
        w.add(di + "/METADATA", _metadata(version).encode())
        w.add(di + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: mfu_build\nRoot-Is-Purelib: false"
                              "\nTag: %s\n" % "-".join(tag)).encode())
        w.add(di + "/top_level.txt", b"mfu\n")
        w.close(di + "/RECORD")
        return name
    finally:
        if temporary:
            shutil.rmtree(bdir, ignore_errors=True)


def build_sdist(sdist_directory, config_settings=None):
    """mfu-VERSION.tar.gz: pyproject.toml, _build/, mfu/ and csrc/ (the C_SOURCES of the
    repository), from which build_wheel builds the same wheel."""
    root = _source_root()
    version = _version(root)
    base = "%s-%s" % (NAME, version)
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))

    def add(tf, arcname, path):
        data = _read(path)
        info = tarfile.TarInfo(arcname)
        info.size = len(data)
        info.mtime = mtime
        info.mode = 0o644
        tf.addfile(info, io.BytesIO(data))

    def add_tree(tf, arcbase, top):
        if os.path.isfile(top):
            add(tf, arcbase, top)
            return
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                add(tf, arcbase + "/" + os.path.relpath(full, top).replace(os.sep, "/"), full)

    src_root = root
    with contextlib.closing(tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                                         format=tarfile.PAX_FORMAT)) as tf:
        pkg_info = io.BytesIO(_metadata(version).encode())
        info = tarfile.TarInfo(base + "/PKG-INFO")
        info.size = len(pkg_info.getvalue())
        info.mtime = mtime
        tf.addfile(info, pkg_info)
        add(tf, base + "/pyproject.toml", os.path.join(PKG_ROOT, "pyproject.toml"))
        add_tree(tf, base + "/_build", HERE)
        add_tree(tf, base + "/mfu", os.path.join(PKG_ROOT, "mfu"))
        for rel in C_SOURCES:
            p = os.path.join(src_root, rel)
            if not os.path.exists(p):
                raise RuntimeError("mfu_build: %s is missing (web/dist is made by "
                                   "scripts/deps.sh)" % p)
            add_tree(tf, base + "/csrc/" + rel, p)
    return name
