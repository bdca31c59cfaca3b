"""The driver's class archive: used when built, never when switched off or missing, and
the user's own JVM options still come last (they win where the two disagree)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from bench.runtime.spark import archive_recording, class_archive
from bench.runtime.spark.class_archive import ENV_OFF, archive_path, java_options, with_archive

KEY = "spark.driver.extraJavaOptions"


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BENCH_JARS_DIR", str(tmp_path / "jars"))
    monkeypatch.delenv(ENV_OFF, raising=False)
    path = archive_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    return path


def test_archive_lives_beside_the_jars_cache(built: Path, tmp_path: Path) -> None:
    assert built.parent == tmp_path / "class-archive"
    assert built.name.startswith("spark-") and built.suffix == ".jsa"


def test_options_name_the_archive_and_fall_back_quietly(built: Path) -> None:
    options = java_options()
    assert f"-XX:SharedArchiveFile={built}" in options
    # auto: a JVM that cannot map it runs without it instead of failing to start
    assert "-Xshare:auto" in options and "-Xshare:on" not in options


def test_no_archive_no_options(built: Path) -> None:
    built.unlink()
    assert java_options() == ""
    assert with_archive({"a": "b"}) == {"a": "b"}


def test_switched_off_by_environment(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_OFF, "1")
    assert java_options() == ""
    assert KEY not in with_archive({})


def test_user_options_come_after_the_archive(built: Path) -> None:
    merged = with_archive({KEY: "-Xshare:off -Dx=1", "other": "kept"})
    assert merged["other"] == "kept"
    assert merged[KEY].startswith(f"-XX:SharedArchiveFile={built}")
    assert merged[KEY].endswith("-Xshare:off -Dx=1")
    assert with_archive({})[KEY] == java_options()


def test_conf_given_is_not_changed(built: Path) -> None:
    conf = {KEY: "-Dx=1"}
    with_archive(conf)
    assert conf == {KEY: "-Dx=1"}


def test_key_changes_with_the_connector_jars(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(class_archive, "connector_jars", lambda: ["/elsewhere/spark-sql-kafka.jar"])
    assert archive_path() != built
    assert java_options() == ""


def test_a_failed_recording_leaves_no_archive_and_install_goes_on(
        built: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    built.unlink()

    class Done:
        returncode = 1
        stdout = ""
        stderr = "Error: could not map\n"

    monkeypatch.setattr(archive_recording.subprocess, "run", lambda *a, **k: Done())
    assert archive_recording.main() == 0
    assert "no class archive" in capsys.readouterr().err
    assert not archive_path().exists()
    assert not list(built.parent.glob("*.partial-*"))


def test_install_keeps_an_archive_already_recorded(
        built: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def no_run(*a: object, **k: object) -> None:
        raise AssertionError("recorded again")

    gone = built.parent / "spark-4.2.0-000000000000.jsa"  # a deleted virtualenv's
    gone.write_bytes(b"old")
    gone.with_suffix(".json").write_text(json.dumps({"pyspark": [str(built.parent / "no-such-venv")]}))
    monkeypatch.setattr(archive_recording.subprocess, "run", no_run)
    monkeypatch.setattr(archive_recording.sys, "argv", ["archive_recording"])
    assert archive_recording.main() == 0
    assert "already recorded" in capsys.readouterr().out
    assert built.read_bytes() == b"archive"
    assert not gone.exists()  # pruned on every install, not only when one is recorded


def test_archives_of_a_deleted_virtualenv_are_removed(built: Path, tmp_path: Path) -> None:
    gone = built.parent / "spark-4.2.0-000000000000.jsa"
    gone.write_bytes(b"old")
    gone.with_suffix(".json").write_text('{"pyspark": ["' + str(tmp_path / "deleted-venv") + '"]}')
    live = tmp_path / "venv"
    live.mkdir()
    kept = built.parent / "spark-4.2.0-111111111111.jsa"
    kept.write_bytes(b"live")
    kept.with_suffix(".json").write_text(f'{{"pyspark": ["{live}"]}}')
    unknown = built.parent / "spark-4.2.0-222222222222.jsa"  # no note: recorded before notes
    unknown.write_bytes(b"?")
    broken = built.parent / "spark-4.2.0-333333333333.jsa"
    broken.write_bytes(b"?")
    broken.with_suffix(".json").write_text("not json")

    assert archive_recording.prune(built.parent) == [gone]
    assert not gone.exists() and not gone.with_suffix(".json").exists()
    assert kept.exists() and unknown.exists() and broken.exists() and built.exists()


def test_a_recorded_archive_notes_its_pyspark_folder(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built.unlink()

    def record(args: list[str], **kwargs: object) -> object:
        partial = next(p for p in args[-1].split("'") if ".partial-" in p)
        Path(partial).write_bytes(b"new archive")

        class Done:
            returncode = 0
            stdout = stderr = ""
        return Done()

    monkeypatch.setattr(archive_recording.subprocess, "run", record)
    assert archive_recording.build() == built
    import pyspark

    assert json.loads(built.with_suffix(".json").read_text()) == {"pyspark": list(pyspark.__path__)}
    assert built.read_bytes() == b"new archive"


def test_key_changes_when_a_class_path_jar_is_installed_again(
        built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the JVM refuses an archive whose JARs have another size or time, and -Xshare:auto
    # then runs without it in silence: a re-installed virtualenv at the same path must
    # not find its old archive by name
    jar = tmp_path / "spark-sql-kafka.jar"
    jar.write_bytes(b"jar")
    monkeypatch.setattr(class_archive, "connector_jars", lambda: [str(jar)])
    first = archive_path()
    os.utime(jar, ns=(1, 1))
    assert archive_path() != first
    jar.write_bytes(b"a longer jar")
    os.utime(jar, ns=(1, 1))
    assert archive_path() not in (first, built)


def test_an_archive_of_this_virtualenv_installed_before_is_removed(built: Path) -> None:
    import pyspark

    older = built.parent / "spark-4.2.0-444444444444.jsa"
    older.write_bytes(b"old jars")
    older.with_suffix(".json").write_text(json.dumps({"pyspark": list(pyspark.__path__)}))
    built.with_suffix(".json").write_text(json.dumps({"pyspark": list(pyspark.__path__)}))

    assert archive_recording.prune(built.parent, built) == [older]
    assert built.exists() and not older.exists()
    assert archive_recording.prune(built.parent) == []  # without the current one, nothing is superseded
