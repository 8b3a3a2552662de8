"""Runs a command on a pseudo-terminal of its own, as a person's terminal window would, and closes
the terminal (the window) once the command has printed N NDJSON event lines.

Closing the master side is what a terminal emulator does when its window closes: later writes to
the terminal fail with EIO, and the shell passes SIGHUP on to the job in the foreground.

Usage: closing_terminal.py N command [args...]
Prints one JSON object: the sequence numbers read before the close, the command's exit status
(negative: the signal that ended it), and whether every process of its session had ended.
"""
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import termios
import time

wanted = int(sys.argv[1])
command = sys.argv[2:]
master, slave = os.openpty()


def become_terminal_session():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, preexec_fn=become_terminal_session, close_fds=True)
os.close(slave)

sequences = []
buffer = b""
while len(sequences) < wanted:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    buffer += chunk
    *lines, buffer = buffer.split(b"\n")
    for line in lines:
        # The live status line shares the terminal: an event line may follow its escape codes.
        found = re.search(rb'\{"source":.*?"sequence_number":(\d+)', line)
        if found:
            sequences.append(int(found.group(1)))

os.close(master)
# The shell that is the terminal's session leader passes the hang-up on to its jobs: the command's
# process group (the kernel itself signals only the session leader).
try:
    os.killpg(child.pid, signal.SIGHUP)
except ProcessLookupError:
    pass
status = child.wait()


def session_members(session):
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        # After the command's name: state, ppid, pgrp, session.
        if int(fields[3]) == session and fields[0] != b"Z":
            members.append(int(entry))
    return members


# The command may be a launcher (npm) whose own child does the work: the terminal's session ends
# when every process in it has, which is what the caller waits for. Bounded as a backstop.
for _ in range(6000):
    if not session_members(child.pid):
        break
    time.sleep(0.01)
print(json.dumps({"sequences": sequences, "status": status, "session_ended": not session_members(child.pid)}))
