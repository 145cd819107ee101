"""The closed-loop load of the Python benchmarks (remote.py, official.py): clients that each call
as fast as their previous call returns, for a fixed time."""
import threading
import time


def closed_loop(clients, make, seconds):
    """Runs a thread per client c of clients calling make(c)() in a loop for seconds; returns the
    latencies of every call (all threads) and the errors that stopped a thread (each stops at its
    first; a failure is reported, not hidden)."""
    lat, errs, lock = [], [], threading.Lock()
    end = time.perf_counter() + seconds

    def work(c):
        mine = []
        try:
            f = make(c)
            while time.perf_counter() < end:
                t = time.perf_counter(); f(); mine.append(time.perf_counter() - t)
        except Exception as e:
            errs.append(repr(e))
        with lock:
            lat.extend(mine)
    ts = [threading.Thread(target=work, args=(c,)) for c in clients]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lat, errs
