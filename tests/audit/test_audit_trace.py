"""The strace record of a detonation run, read: the calls that name a file, whether each
writes, its result, and the program of the process that made it."""

from pytest_agent_skills.audit.trace import FileCall, file_calls

TRACE = """\
14    execve("/usr/bin/ssh", ["ssh", "host.invalid"], 0x7ffc /* 9 vars */) = 0
14    openat(AT_FDCWD, "/home/auditor/.ssh/id_rsa", O_RDONLY) = 3
15    openat(AT_FDCWD, "/etc/cron.d/job", O_WRONLY|O_CREAT, 0666) = -1 EROFS (Read-only file system)
15    rename("/tmp/a", "notes/\\303\\251t\\303\\251" <unfinished ...>
15    <... rename resumed>) = 0
16    mkdir("/home", 0777) = -1 EEXIST (File exists)
"""


def test_each_call_naming_a_file_with_its_program_and_result() -> None:
    assert file_calls(TRACE, "/workspace/skills/s") == [
        FileCall("openat", "/home/auditor/.ssh/id_rsa", False, "3", "ssh"),
        FileCall("openat", "/etc/cron.d/job", True, "-1 EROFS (Read-only file system)", ""),
        FileCall("rename", "/tmp/a", True, "", ""),
        FileCall("rename", "/workspace/skills/s/notes/été", True, "", ""),
        FileCall("mkdir", "/home", True, "-1 EEXIST (File exists)", ""),
    ]
