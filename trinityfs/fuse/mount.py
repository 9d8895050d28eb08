"""`trinityfs mount ROOT MOUNTPOINT`: mount a lakehouse with FUSE (mfusepy).

    trinityfs mount ROOT MOUNTPOINT [--read-only] [--version N | --at TIME]
                    [--foreground | --daemon] [--verify reads|tree] [--log-file PATH]
                    [--debug] [-o OPTIONS]

The same command runs as `python -m trinityfs.fuse ...` (what the `mount.fuse.trinityfs`
helper calls). `-o` takes comma-separated options, the way mount(8) and /etc/fstab give
them; trinityfs's own are

    ro / rw                  read-only / read-write (default rw)
    version=N, at=TIME       show version N, or the version current at ISO-8601 TIME,
                             at the root (read-only)
    log=PATH                 log file (a daemon logs nowhere otherwise)
    verify=reads|tree        what each commit verifies (--verify; else $TRINITYFS_VERIFY,
                             else fsspec's [trinity] verify, else reads)
    latest_ttl=SECONDS       how long a probe of the latest version is reused (1)
    prefetch=N               threads that read a listed namespace's files ahead (8; 0 off)
    scratch=GLOB:GLOB        names of temporary files kept in memory ("+GLOB" adds to
                             the defaults of trinityfs.fuse.scratch)
    storage.KEY=VALUE        an fsspec storage option (e.g. storage.endpoint_url=...)
    debug                    log every FUSE request (libfuse -d)

mount(8)-only options (defaults, auto, noauto, user, users, nofail, _netdev, x-*, ...)
are ignored, and every other option goes to libfuse (allow_other, default_permissions,
uid=, gid=, attr_timeout=, entry_timeout=, nodev, nosuid, noexec, noatime, ...).

Permissions: the catalog has none of its own. Entries belong to the mounting user
(or uid=/gid=) with modes 0644/0755 (0444/0555 read-only); chmod to another mode and
chown are refused (EPERM). `allow_other` is refused unless `default_permissions` is
given too, so the kernel enforces those modes for other users. A non-empty mount point
is refused unless `-o nonempty` is given (with libfuse 2 and 3 alike).

The mount unmounts cleanly on SIGINT, SIGTERM and SIGHUP (libfuse's handlers end the
loop and unmount) and when `fusermount -u MOUNTPOINT` / `umount MOUNTPOINT` is run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from trinityfs.catalog.selector import TIME_PREFIX, parse_time
from trinityfs.fuse.descriptors import holds_another
from trinityfs.fuse.scratch import DEFAULT_PATTERNS, parse_patterns

log = logging.getLogger("trinityfs.fuse")

READY_FD_ENV = "TRINITYFS_MOUNT_READY_FD"
DAEMON_START_TIMEOUT = 60.0

# Options of mount(8) and fstab that mean nothing to libfuse.
MOUNT_ONLY_OPTIONS = {
    "defaults",
    "auto",
    "noauto",
    "user",
    "users",
    "nouser",
    "owner",
    "group",
    "_netdev",
    "nofail",
    "rw",
    "loud",
    "silent",
}
MOUNT_ONLY_PREFIXES = ("x-", "comment=", "python=", "helper=")

USAGE_EPILOG = """\
examples:
  trinityfs mount ./lake /mnt/lake                      # foreground, Ctrl-C unmounts
  trinityfs mount s3://bucket/lake /mnt/lake --daemon -o ro,log=/tmp/lake.log
  trinityfs mount ./lake /mnt/v7 --version 7            # version 7 at the root, read-only
  mount -t fuse.trinityfs /data/lake /mnt/lake          # with mount/mount.fuse.trinityfs
  fusermount -u /mnt/lake                               # unmount
"""


class MountError(OSError):
    """A mount that cannot start; the message is one line for the user."""


@dataclass
class MountConfig:
    """Everything a mount needs, from the command line and -o options."""

    root: str
    mountpoint: str
    read_only: bool = False
    version: int | None = None
    at: str | None = None
    foreground: bool = True
    log_file: str | None = None
    debug: bool = False
    verify: str | None = None  # "reads" or "tree"; None: $TRINITYFS_VERIFY, fsspec, reads
    latest_ttl: float = 1.0
    prefetch: int = 8
    scratch_patterns: tuple[str, ...] = DEFAULT_PATTERNS
    storage_options: dict[str, Any] = field(default_factory=dict)
    fuse_options: dict[str, Any] = field(default_factory=dict)


# -- the command line --------------------------------------------------------------


def add_mount_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument(
        "mount_root", metavar="ROOT", help="the lakehouse: a directory or URL (s3://...)"
    )
    parser.add_argument("mountpoint", metavar="MOUNTPOINT", help="an existing empty directory")
    parser.add_argument("--read-only", "-r", action="store_true", help="refuse every write (EROFS)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--version", type=int, metavar="N", help="show version N at the root (read-only)"
    )
    which.add_argument(
        "--at",
        metavar="TIME",
        help="show the version current at an ISO-8601 time at the root (read-only)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--foreground",
        "-f",
        dest="daemon",
        action="store_false",
        help="stay in the foreground until unmounted (default)",
    )
    mode.add_argument(
        "--daemon",
        dest="daemon",
        action="store_true",
        help="return once mounted, serving from a background process",
    )
    parser.set_defaults(daemon=False)
    parser.add_argument(
        "--verify",
        dest="mount_verify",
        choices=("reads", "tree"),
        help="what each commit verifies: reads (what it reads) or tree (every file of the "
        "tree, before writing); default $TRINITYFS_VERIFY, else fsspec's config, else reads",
    )
    parser.add_argument("--log-file", metavar="PATH", help="append log lines to PATH")
    parser.add_argument("--debug", action="store_true", help="log every FUSE request")
    parser.add_argument(
        "-o",
        dest="options",
        action="append",
        default=[],
        metavar="OPTIONS",
        help="comma-separated mount options (ro, version=N, at=TIME, log=PATH, "
        "storage.KEY=VALUE, allow_other, ...)",
    )
    return parser


def add_mount_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `mount` to the subparsers of the `trinityfs` command (`func(ctx, args)`)."""
    parser = subparsers.add_parser(
        "mount",
        help="mount a lakehouse as a filesystem (FUSE)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=USAGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mount_arguments(parser)
    parser.set_defaults(func=cli_mount)
    return parser


def _split_options(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def _storage_value(key: str, text: str) -> Any:
    """A storage.KEY=VALUE value, by the catalog's one rule (JSON when it parses)."""
    from trinityfs.catalog.config import storage_option_value
    from trinityfs.errors import InvalidArgumentError

    try:
        return storage_option_value(f"storage.{key}", text)
    except InvalidArgumentError as exc:
        raise MountError(str(exc)) from None


def _verify_value(text: str) -> str:
    """A verify=MODE option, by the catalog's one rule (`verify_mode`)."""
    from trinityfs.catalog.config import verify_mode
    from trinityfs.errors import InvalidArgumentError

    try:
        return verify_mode(text, env={}, fsspec_conf={})[0]
    except InvalidArgumentError as exc:
        raise MountError(f"verify={text}: {exc}") from None


def config_from_args(args: argparse.Namespace) -> MountConfig:
    """A MountConfig from parsed arguments (MountError for a bad option)."""
    cfg = MountConfig(
        root=args.mount_root,
        mountpoint=args.mountpoint,
        read_only=bool(getattr(args, "read_only", False)),
        version=getattr(args, "version", None),
        at=getattr(args, "at", None),
        foreground=not getattr(args, "daemon", False),
        log_file=getattr(args, "log_file", None),
        debug=bool(getattr(args, "debug", False)),
        verify=getattr(args, "mount_verify", None),
    )
    for option in _split_options(getattr(args, "options", None) or []):
        key, has_value, value = option.partition("=")
        if key == "ro":
            cfg.read_only = True
        elif option in MOUNT_ONLY_OPTIONS or option.startswith(MOUNT_ONLY_PREFIXES):
            continue
        elif key == "version" and has_value:
            if not _decimal(value):
                raise MountError(f"version={value}: a version is a number")
            cfg.version = int(value)
        elif key == "at" and has_value:
            cfg.at = value
        elif key == "log" and has_value:
            cfg.log_file = value
        elif key == "verify" and has_value:
            cfg.verify = _verify_value(value)
        elif key == "debug" and not has_value:
            cfg.debug = True
        elif key == "latest_ttl" and has_value:
            try:
                cfg.latest_ttl = float(value)
            except ValueError:
                raise MountError(f"latest_ttl={value}: give seconds") from None
        elif key == "prefetch" and has_value:
            if not _decimal(value):
                raise MountError(f"prefetch={value}: give a number of threads")
            cfg.prefetch = int(value)
        elif key == "scratch" and has_value:
            cfg.scratch_patterns = parse_patterns(value)
        elif key.startswith("storage.") and has_value:
            name = key[len("storage.") :]
            cfg.storage_options[name] = _storage_value(name, value)
        elif key in ("foreground", "daemon") and not has_value:
            cfg.foreground = key == "foreground"
        else:
            cfg.fuse_options[key] = value if has_value else True
    if cfg.version is not None and cfg.at is not None:
        raise MountError("give --version or --at, not both")
    if cfg.at is not None and parse_time(cfg.at) is None:
        raise MountError(f"--at {cfg.at}: not an ISO-8601 date or time")
    if "allow_other" in cfg.fuse_options and "default_permissions" not in cfg.fuse_options:
        # without default_permissions nothing checks the modes the mount shows: every
        # local user could create, overwrite and drop tables
        raise MountError(
            "allow_other needs default_permissions (-o allow_other,default_permissions): "
            "the kernel then enforces the modes shown (owner read-write, others read-only)"
        )
    return cfg


def child_argv(cfg: MountConfig) -> list[str]:
    """The foreground command line a daemon's background process runs."""
    argv = [sys.executable, "-m", "trinityfs.fuse", cfg.root, cfg.mountpoint, "--foreground"]
    if cfg.read_only:
        argv.append("--read-only")
    if cfg.version is not None:
        argv += ["--version", str(cfg.version)]
    if cfg.at is not None:
        argv += ["--at", cfg.at]
    if cfg.log_file:
        argv += ["--log-file", cfg.log_file]
    if cfg.debug:
        argv.append("--debug")
    if cfg.verify is not None:
        argv += ["--verify", cfg.verify]
    options = [f"latest_ttl={cfg.latest_ttl}", f"prefetch={cfg.prefetch}"]
    if cfg.scratch_patterns != DEFAULT_PATTERNS:
        options.append("scratch=" + ":".join(cfg.scratch_patterns))
    for key, value in cfg.storage_options.items():
        text = value if isinstance(value, str) else json.dumps(value)
        options.append(f"storage.{key}={text}")
    for key, value in cfg.fuse_options.items():
        options.append(key if value is True else f"{key}={value}")
    return [*argv, "-o", ",".join(options)]


# -- mounting --------------------------------------------------------------------------


def _setup_logging(cfg: MountConfig) -> None:
    handlers: list[logging.Handler] = []
    if cfg.log_file:
        handlers.append(logging.FileHandler(cfg.log_file))
    else:
        handlers.append(logging.StreamHandler(sys.stderr))
    fmt = logging.Formatter("%(asctime)s trinityfs[%(process)d] %(levelname)s %(message)s")
    root = logging.getLogger("trinityfs")
    for handler in handlers:
        handler.setFormatter(fmt)
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if cfg.debug else logging.INFO)
    if cfg.debug:
        logging.getLogger("mfusepy").addHandler(handlers[0])
        logging.getLogger("mfusepy").setLevel(logging.DEBUG)


def _signal_ready() -> None:
    fd = os.environ.pop(READY_FD_ENV, None)
    if fd is None:
        return
    try:
        os.write(int(fd), b"ok\n")
        os.close(int(fd))
    except OSError:
        pass
    if not any(isinstance(h, logging.FileHandler) for h in logging.getLogger("trinityfs").handlers):
        # a daemon without a log file: its stderr was only for errors before the mount
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)


def open_lakehouse(cfg: MountConfig) -> tuple[Any, int | None]:
    """The Lakehouse to mount and the version pinned at the root (None: the latest).

    The root and storage options go through the one configuration reader
    (`trinityfs.catalog.read_config`: arguments, then TRINITYFS_STORAGE_OPTIONS, then
    fsspec's config, merged key by key); the pin (--version, --at, else the configured
    version: $TRINITYFS_VERSION or fsspec's) through `Lakehouse.resolve`."""
    from trinityfs.catalog import read_config
    from trinityfs.errors import TrinityError

    try:
        config = read_config(
            cfg.root, storage_options=cfg.storage_options or None, verify=cfg.verify
        )
        lake = config.open()
        version = None
        if cfg.version is not None:
            version = lake.resolve(cfg.version).version
        elif cfg.at is not None:
            version = lake.resolve(TIME_PREFIX + cfg.at).version
        elif config.version is not None:  # $TRINITYFS_VERSION or fsspec's config
            version = lake.resolve(config.version).version
        # fail early for a version that cannot be read, and pay the first decode of a
        # node file (imports) now rather than in the first request
        lake.at(version).list_namespaces(limit=1)
    except TrinityError as exc:
        raise MountError(str(exc)) from None
    return lake, version


def mount_foreground(cfg: MountConfig) -> int:
    """Mount and serve until unmounted; returns the exit status."""
    if not os.path.isdir(cfg.mountpoint):
        raise MountError(f"{cfg.mountpoint}: the mount point is not a directory")
    if os.path.ismount(cfg.mountpoint):
        raise MountError(f"{cfg.mountpoint}: something is mounted there already")
    if "nonempty" not in cfg.fuse_options and _has_entries(cfg.mountpoint):
        raise MountError(
            f"{cfg.mountpoint}: the mount point is not empty (its files would be hidden "
            "while mounted); use an empty directory, or -o nonempty to mount over them"
        )
    try:
        import mfusepy
    except (ImportError, OSError) as exc:
        raise MountError(
            f"FUSE is not available ({exc}): install libfuse (apt-get install fuse3 libfuse2) "
            "and the fuse extra (pip install 'trinityfs[fuse]')"
        ) from None
    if not os.path.exists("/dev/fuse"):
        raise MountError("/dev/fuse is missing: load the fuse module or run with --device")

    from trinityfs.fuse.operations import TrinityOperations

    lake, version = open_lakehouse(cfg)
    read_only = cfg.read_only or version is not None
    ops = TrinityOperations(
        lake,
        read_only=read_only,
        version=version,
        latest_ttl=cfg.latest_ttl,
        scratch_patterns=cfg.scratch_patterns,
        on_init=_signal_ready,
        prefetch_threads=cfg.prefetch,
        uid=_int_option(cfg.fuse_options.get("uid")),
        gid=_int_option(cfg.fuse_options.get("gid")),
        held_elsewhere=_caller_holds(os.path.realpath(cfg.mountpoint)),
        caller=_caller_process,
    )
    what = f"version {version}" if version is not None else "the latest version"
    log.info(
        "mounting %s (%s, %s) at %s with libfuse %d.%d",
        cfg.root,
        what,
        "read-only" if read_only else "read-write",
        cfg.mountpoint,
        mfusepy.fuse_version_major,
        mfusepy.fuse_version_minor,
    )
    options: dict[str, Any] = {
        "fsname": cfg.root.replace(",", "_"),
        "subtype": "trinityfs",
        "direct_io": True,  # every read is served from the version fixed at open
        "hard_remove": True,  # unlink drops the object; no .fuse_hidden renames
        # other writers change the catalog at any time: never show a cached size or time
        # (editors compare them to decide whether a file changed under them)
        "attr_timeout": 0,
    }
    if read_only:
        options["ro"] = True
    options.update(cfg.fuse_options)
    if mfusepy.fuse_version_major >= 3:
        options.pop("nonempty", None)  # libfuse 3 mounts over files always (checked above)
    try:
        mfusepy.FUSE(
            ops,
            cfg.mountpoint,
            foreground=True,
            debug=cfg.debug,
            **options,
        )
    except RuntimeError as exc:
        raise MountError(f"FUSE failed to mount {cfg.mountpoint} (libfuse status {exc})") from None
    log.info("unmounted %s", cfg.mountpoint)
    return 0


def _caller_holds(mountpoint: str) -> Callable[[str], bool]:
    """Whether the process of the running FUSE call holds a descriptor of a mount path."""

    import mfusepy  # loaded by the mount already

    def check(path: str) -> bool:
        return holds_another(mfusepy.fuse_get_context()[2], mountpoint + path)

    return check


def _caller_process() -> Hashable | None:
    """The process of the running FUSE call (trinityfs.fuse.served)."""
    import mfusepy  # loaded by the mount already

    from trinityfs.fuse.served import process_of

    return process_of(mfusepy.fuse_get_context()[2])


def _decimal(value: str) -> bool:
    """ASCII digits of a 64-bit number (`str.isdigit` also takes "²", which int() refuses,
    and int() refuses more than 4,300 digits)."""
    return value.isascii() and value.isdigit() and len(value) <= 20


def _int_option(value: Any) -> int | None:
    return int(value) if isinstance(value, str) and _decimal(value) else None


def _has_entries(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return next(entries, None) is not None
    except OSError:
        return False


def mount_daemon(cfg: MountConfig) -> int:
    """Start a background process that mounts; return once it serves (or failed)."""
    read_fd, write_fd = os.pipe()
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (the child's stderr until it serves)
    env = dict(os.environ, **{READY_FD_ENV: str(write_fd)})
    proc = subprocess.Popen(
        child_argv(cfg),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=errors,
        pass_fds=(write_fd,),
        env=env,
        start_new_session=True,
        close_fds=True,
    )
    os.close(write_fd)
    deadline = time.monotonic() + DAEMON_START_TIMEOUT
    ready = b""
    try:
        import select

        while time.monotonic() < deadline:
            readable, _, _ = select.select([read_fd], [], [], 0.2)
            if readable:
                ready = os.read(read_fd, 16)
                break
            if proc.poll() is not None:
                break
    finally:
        os.close(read_fd)
    if ready.startswith(b"ok"):
        print(f"mounted {cfg.root} at {cfg.mountpoint} (pid {proc.pid})", file=sys.stderr)
        return 0
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=10)
    errors.seek(0)
    lines = [ln for ln in errors.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    detail = lines[-1] if lines else f"the mount process exited with status {proc.returncode}"
    raise MountError(detail.split("trinityfs mount: ", 1)[-1])


def execute(
    args: argparse.Namespace,
    storage_options: dict[str, Any] | None = None,
    verify: str | None = None,
) -> int:
    """Mount as the parsed arguments say (MountError, an OSError, when it cannot);
    `storage_options` and `verify` are the `trinityfs` command's global ones, which the
    mount's own (-o storage.KEY=, --verify, -o verify=) override."""
    cfg = config_from_args(args)
    cfg.storage_options = {**(storage_options or {}), **cfg.storage_options}
    if cfg.verify is None:
        cfg.verify = verify
    _setup_logging(cfg)
    if cfg.foreground:
        return mount_foreground(cfg)
    return mount_daemon(cfg)


def run_mount(args: argparse.Namespace, storage_options: dict[str, Any] | None = None) -> int:
    """Run `trinityfs mount` from parsed arguments; errors print one line, exit 1."""
    try:
        return execute(args, storage_options)
    except MountError as exc:
        print(f"trinityfs mount: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def cli_mount(ctx: Any, args: argparse.Namespace) -> int:
    """The `func(ctx, args)` of the `trinityfs` command: storage options come from its
    -o KEY=VALUE / $TRINITYFS_STORAGE_OPTIONS too, and `trinityfs --verify MODE mount`
    works like `mount --verify MODE`; errors reach its one-line handler."""
    return execute(args, getattr(ctx, "storage_options", None), getattr(args, "verify", None))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trinityfs mount",
        description="Mount a trinityfs lakehouse as a filesystem (FUSE).",
        epilog=USAGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return add_mount_arguments(parser)


def main(argv: list[str] | None = None) -> int:
    """`python -m trinityfs.fuse ROOT MOUNTPOINT ...` (what the mount helper runs)."""
    args = build_parser().parse_args(argv)
    return run_mount(args)


__all__ = [
    "MountConfig",
    "MountError",
    "add_mount_arguments",
    "add_mount_parser",
    "build_parser",
    "cli_mount",
    "config_from_args",
    "execute",
    "main",
    "mount_daemon",
    "mount_foreground",
    "run_mount",
]
