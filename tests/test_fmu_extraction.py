"""Hostile and broken FMU archives: refused in one error, and nothing left behind.

Each case builds a real broken archive in tmp_path from our BouncingBall FMU,
opens it as a user would, and asserts the exact error and that no unpacked
folder (`fmibridge_*` in the temporary directory) survives; SIGTERM during a
run removes the folder too (issue 17).
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from fmibridge.cli import main
from fmibridge.core import limits
from fmibridge.core.errors import FmibridgeError, FMUError
from fmibridge.flows.fmu import open_fmu

HUGE = 3 * 2**30  # bytes declared for one member: above the 1 GiB limit


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """A private temporary directory: where FMUs are unpacked during the test."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def own(temp: Path) -> Path:
    """fmibridge's own folder in the temporary directory `temp` (`core.outputs`)."""
    return temp / f"fmibridge-{os.getuid()}"


def leftovers(temp: Path) -> list[str]:
    """The folders left in fmibridge's own folder of `temp`."""
    return sorted(p.name for p in own(temp).iterdir()) if own(temp).is_dir() else []


def rebuild(source: Path, target: Path, replace=None, add=None) -> Path:
    """Copy an FMU, replacing members (bytes, or None to drop) and adding some."""
    replace, add = replace or {}, add or {}
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(target, "w") as dst:
        for item in src.infolist():
            data = replace.get(item.filename, src.read(item.filename))
            if data is not None:
                dst.writestr(item, data)
        for name, data in add.items():
            dst.writestr(name, data)
    return target


def declare_size(path: Path, member: str, size: int) -> None:
    """Patch the uncompressed size the archive declares for a stored member."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, offset, name_at in (
        (b"PK\x03\x04", 22, 30),
        (b"PK\x01\x02", 24, 46),
    ):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if data[start + name_at : start + name_at + len(name)] == name:
                data[start + offset : start + offset + 4] = struct.pack("<I", size)
            start += 4
    path.write_bytes(bytes(data))


@pytest.fixture
def ball(fmu_dir) -> Path:
    return fmu_dir / "BouncingBall.fmu"


def test_a_member_declared_huge_is_refused_before_unpacking(ball, tmp_path, temp):
    path = rebuild(ball, tmp_path / "Huge.fmu", add={"resources/big.bin": b"0" * 64})
    declare_size(path, "resources/big.bin", HUGE)
    with pytest.raises(FmibridgeError) as error:
        open_fmu(path, "me")
    assert str(error.value) == (
        f"{path}: unpacks to {HUGE + _unpacked(ball)} bytes ('resources/big.bin' "
        f"alone {HUGE}), more than the limit of {2**30} bytes; set "
        f"FMIBRIDGE_MAX_FMU_BYTES to allow a larger FMU."
    )
    assert leftovers(temp) == []


def _unpacked(path: Path) -> int:
    with zipfile.ZipFile(path) as archive:
        return sum(m.file_size for m in archive.infolist())


def test_unpacking_counts_the_bytes_written_not_those_declared(
    ball, tmp_path, temp, monkeypatch
):
    path = rebuild(ball, tmp_path / "Big.fmu", add={"resources/big.bin": b"0" * 4096})
    monkeypatch.setattr(limits, "MAX_UNPACKED_BYTES", _unpacked(path) - 1)
    declare_size(path, "resources/big.bin", 0)  # lies: says empty, holds 4096 bytes
    with pytest.raises(FmibridgeError, match="corrupt FMU archive|more than the limit"):
        open_fmu(path, "me")
    assert leftovers(temp) == []


def test_a_model_identifier_that_is_a_path_is_refused(ball, tmp_path, temp):
    xml = _member(ball, "modelDescription.xml").replace(
        b'modelIdentifier="BouncingBall"',
        b'modelIdentifier="../../outside/BouncingBall"',
    )
    path = rebuild(ball, tmp_path / "Outside.fmu", {"modelDescription.xml": xml})
    with pytest.raises(FmibridgeError) as error:
        open_fmu(path, "me")
    assert str(error.value) == (
        f"{path}: ModelExchange modelIdentifier '../../outside/BouncingBall' is not a "
        f"plain name (letters, digits, '_'); the FMU is malformed."
    )
    assert leftovers(temp) == []


def test_a_member_outside_the_folder_is_refused(ball, tmp_path, temp):
    path = rebuild(ball, tmp_path / "Evil.fmu", add={"../evil.txt": b"x"})
    with pytest.raises(FmibridgeError) as error:
        open_fmu(path, "me")
    assert str(error.value) == (
        f"{path}: archive member '../evil.txt' would be written outside the FMU's "
        f"folder; the FMU is malformed."
    )
    assert leftovers(temp) == [] and not (tmp_path / "evil.txt").exists()


def _member(path: Path, name: str) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return archive.read(name)


def test_a_garbage_shared_library_is_one_error_and_no_folder(ball, tmp_path, temp):
    library = "binaries/linux64/BouncingBall.so"
    path = rebuild(ball, tmp_path / "Garbage.fmu", {library: b"not a library" * 100})
    with pytest.raises(FmibridgeError) as error:
        open_fmu(path, "me")
    assert str(error.value) == (
        f"{path}: cannot load {library} (invalid ELF header); the binary is damaged "
        f"or built for another platform."
    )
    assert leftovers(temp) == [] and Path.cwd().is_dir()


def _library_needing(folder: Path, needed: str) -> bytes:
    """A shared library that links lib`needed`.so, which is then deleted: what
    the loader sees of an FMU binary built against a library this machine lacks."""
    source = folder / "empty.c"
    source.write_text("int fmibridge_test_symbol;\n")
    dependency = folder / f"lib{needed}.so"
    library = folder / "needs.so"
    gcc = ["gcc", "-shared", "-fPIC", "-o"]
    subprocess.run([*gcc, dependency, source], check=True)
    links = [f"-L{folder}", "-Wl,--no-as-needed", f"-l{needed}"]
    subprocess.run([*gcc, library, source, *links], check=True)
    dependency.unlink()
    return library.read_bytes()


@pytest.mark.skipif(sys.platform != "linux", reason="builds a Linux shared library")
def test_a_missing_library_the_binary_needs_is_named(ball, tmp_path, temp):
    library = "binaries/linux64/BouncingBall.so"
    binary = _library_needing(tmp_path, "fmibridge_gone")
    path = rebuild(ball, tmp_path / "Needs.fmu", {library: binary})
    with pytest.raises(FmibridgeError) as error:
        open_fmu(path, "me")
    assert str(error.value) == (
        f"{path}: cannot load {library} (libfmibridge_gone.so: cannot open shared "
        f"object file: No such file or directory); a shared library it needs is "
        f"missing: install it, or put its folder on the library path "
        f"(LD_LIBRARY_PATH, DYLD_LIBRARY_PATH, PATH)."
    )
    assert leftovers(temp) == [] and Path.cwd().is_dir()


def test_a_wrong_guid_is_the_fmus_own_message_and_no_folder(ball, tmp_path, temp):
    xml = _member(ball, "modelDescription.xml")
    guid = xml.split(b'guid="')[1].split(b'"')[0]
    wrong = xml.replace(guid, b"{00000000-0000-0000-0000-000000000000}")
    path = rebuild(ball, tmp_path / "Guid.fmu", {"modelDescription.xml": wrong})
    with pytest.raises(FMUError) as error:
        open_fmu(path, "cs")
    assert str(error.value) == (
        f"{path}: fmi2Instantiate returned no instance. FMU log: fmi2Instantiate: "
        f"GUID {{00000000-0000-0000-0000-000000000000}} does not match "
        f"{guid.decode()}."
    )
    assert leftovers(temp) == []


def test_a_missing_binary_names_what_the_fmu_has_and_leaves_no_folder(
    ball, tmp_path, temp
):
    path = rebuild(
        ball, tmp_path / "NoBinary.fmu", {"binaries/linux64/BouncingBall.so": None}
    )
    with pytest.raises(FMUError, match=r"no binary for this platform .* the FMU has"):
        open_fmu(path, "me")
    assert leftovers(temp) == []


def test_a_folder_named_fmu_is_not_reported_missing(tmp_path, capsys):
    folder = tmp_path / "Folder.fmu"
    folder.mkdir()
    assert main(["run", str(folder), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"fmibridge: error: {folder}: is a folder, not an FMU file; an FMU is a zip "
        f"archive (zip the folder's contents, or give the .fmu file).\n"
    )


def test_a_closed_flow_leaves_no_folder(ball, temp):
    flow = open_fmu(ball, "cs")
    assert len(leftovers(temp)) == 1
    flow.close()
    assert leftovers(temp) == []


def test_a_run_unpacks_what_it_reads_only(ball, tmp_path, temp):
    """The binaries, the resources and the model description are unpacked (a
    resource byte for byte); sources, documentation and extra/ stay packed."""
    data = bytes(range(256))
    path = rebuild(
        ball,
        tmp_path / "Packed.fmu",
        add={
            "resources/table.bin": data,
            "sources/model.c": b"int x;",
            "documentation/index.html": b"<html/>",
            "extra/org.example/meta.xml": b"<meta/>",
        },
    )
    flow = open_fmu(path, "cs")
    folder = flow.archive.unzipped()
    unpacked = {p.relative_to(folder).as_posix() for p in folder.rglob("*")}
    assert (folder / "resources" / "table.bin").read_bytes() == data
    flow.close()
    assert unpacked == {
        "binaries",
        "binaries/linux64",
        "binaries/linux64/BouncingBall.so",
        "modelDescription.xml",
        "resources",
        "resources/table.bin",
    }


SLEEPER = """
import sys, time
from fmibridge.flows.fmu import open_fmu
flow = open_fmu(sys.argv[1], "me")
print(flow.archive.unzipped(), flush=True)
time.sleep(60)
"""


def test_sigterm_removes_the_unpacked_folder(ball, temp):
    env = {**os.environ, "TMPDIR": str(temp)}
    process = subprocess.Popen(
        [sys.executable, "-c", SLEEPER, str(ball)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    folder = Path(process.stdout.readline().strip())
    assert folder.is_dir() and folder.parent == own(temp)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 128 + signal.SIGTERM
    assert not folder.exists() and leftovers(temp) == []


FORKER = """
import os, sys
from fmibridge.flows.fmu import open_fmu
flow = open_fmu(sys.argv[1], "me")
folder = flow.archive.unzipped()
pid = os.fork()
if pid == 0:  # a forked child that exits normally runs the inherited atexit hooks
    sys.exit(0)
os.waitpid(pid, 0)
print(folder, folder.is_dir(), flush=True)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_leaves_the_parents_folders(ball, temp):
    """The unpacked folders are removed by the process that unpacked them: a
    forked child that exits does not remove its parent's (the parent's FMU
    still runs from there)."""
    env = {**os.environ, "TMPDIR": str(temp)}
    done = subprocess.run(
        [sys.executable, "-c", FORKER, str(ball)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    folder, alive = done.stdout.split()
    assert Path(folder).parent == own(temp) and alive == "True"
    assert leftovers(temp) == []  # removed by the parent at its exit
