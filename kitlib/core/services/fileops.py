"""File-operation latencies on one directory, printed one per line in microseconds.

    write DIR SIZE_BYTES COUNT     append SIZE bytes COUNT times to one file, flush() after each
    open DIR COUNT                 open and close one existing file COUNT times
    copyup FILE                    the first open-for-write of an existing file (overlay copies it up)
    walk DIR COUNT                 list DIR recursively (like `ls -R`) COUNT times

Output: `kit-fileops op=… n=…`, then `kit-fileops latencies_us`, one value per line, `kit-fileops end`.
Standard library only, so it runs in any environment as `python3 -c SOURCE …`.
"""

import os
import sys
import time


def _timed(action, count):
    clock = time.perf_counter_ns
    out = []
    for _ in range(count):
        t0 = clock()
        action()
        out.append((clock() - t0) / 1000.0)
    return out


def write(directory, size, count):
    path = os.path.join(directory, "kit-write.bin")
    block = b"w" * size
    with open(path, "ab", buffering=0) as handle:

        def one():
            handle.write(block)
            handle.flush()

        return _timed(one, count)


def open_close(directory, count):
    path = os.path.join(directory, "kit-open.txt")
    if not os.path.exists(path):
        with open(path, "w") as handle:
            handle.write("kit")

    def one():
        os.close(os.open(path, os.O_RDONLY))

    return _timed(one, count)


def copy_up(path):
    def one():
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))

    return _timed(one, 1)


def walk(directory, count):
    def one():
        for _root, _dirs, files in os.walk(directory):
            for name in files:
                os.lstat(os.path.join(_root, name))

    return _timed(one, count)


def main(argv):
    op = argv[0]
    if op == "write":
        values = write(argv[1], int(argv[2]), int(argv[3]))
    elif op == "open":
        values = open_close(argv[1], int(argv[2]))
    elif op == "copyup":
        values = copy_up(argv[1])
    elif op == "walk":
        values = walk(argv[1], int(argv[2]))
    else:
        sys.exit(__doc__)
    out = sys.stdout
    out.write(f"kit-fileops op={op} n={len(values)}\nkit-fileops latencies_us\n")
    out.write("\n".join(f"{v:.2f}" for v in values))
    out.write("\nkit-fileops end\n")


if __name__ == "__main__":
    main(sys.argv[1:])
