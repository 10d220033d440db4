"""Reads what only root may read (the password hashes in /etc/shadow, root's files, the raw
disk) and every file of /etc, and puts what it got in its error message, which the grader
shows in the report. A grader run as root must not lend its workers root's access to files,
and no worker reads /etc beyond the few files Python needs."""

# exercise: 4.1
# expect-status: error
# expect-message: root-only:
# needs: landlock|nobody

import os

found = []
for path in (
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh/ssh_host_ed25519_key",
    "/root/.bash_history",
    "/root/.ssh/id_rsa",
):
    try:
        with open(path, "rb") as f:
            found.append(f"{path}: " + f.read(120).decode("utf-8", "replace"))
    except OSError as exc:
        found.append(f"{path}: {type(exc).__name__}")
for disk in ("/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda", "/dev/mem"):
    try:
        with open(disk, "rb") as f:
            f.read(512)
        found.append(f"{disk}: read 512 bytes")
    except OSError:
        pass
try:
    etc = sorted(os.listdir("/etc"))
except OSError as exc:
    etc = [type(exc).__name__]
readable = []
for name in etc:
    try:
        with open(os.path.join("/etc", name), "rb") as f:
            f.read(1)
        readable.append(name)
    except OSError:
        pass
found.append(f"/etc readable: {readable}")
try:
    with open("/proc/self/uid_map") as f:  # "0 65534 1": root here is nobody outside
        found.append("uid_map: " + " ".join(f.read().split()))
except OSError as exc:
    found.append(f"uid_map: {type(exc).__name__}")
raise RuntimeError("root-only: " + " | ".join(found))
