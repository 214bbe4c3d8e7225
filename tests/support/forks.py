"""Count the processes a Python program forks: a prologue for scripts run in a fresh
interpreter (the suite's own process may hold threads, and then validation does not fork)."""

#: Python source that makes ``os.fork`` record each child's pid in the list ``forked``.
COUNT_FORKS = """
import os
forked = []
real_fork = os.fork
def counting_fork():
    pid = real_fork()
    if pid:
        forked.append(pid)
    return pid
os.fork = counting_fork
"""
