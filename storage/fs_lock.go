//go:build unix

package storage

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// lockStripes bounds the number of lock files: keys hash onto a fixed set
// of stripes instead of one lock file per key, so lock files never need
// garbage collection (deleting a lock file that someone else holds open
// would silently break mutual exclusion).
const lockStripes = 64

var lockDir = path.Join(reservedDir, "locks")

// keyLocks serialises mutations of a key across goroutines (mutex) and
// across processes (flock on a stripe file). The mutex in front means
// goroutines of one process queue without polling; only processes poll.
type keyLocks struct {
	root *os.Root
	mu   [lockStripes]sync.Mutex
}

func (l *keyLocks) lock(ctx context.Context, key string) (unlock func(), err error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	i := h.Sum32() % lockStripes

	l.mu[i].Lock()
	name := path.Join(lockDir, fmt.Sprintf("%02x.lock", i))
	f, err := l.root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		l.mu[i].Unlock()
		return nil, fmt.Errorf("storage: open lock %s: %w", name, err)
	}
	if err := flockCtx(ctx, f); err != nil {
		f.Close()
		l.mu[i].Unlock()
		return nil, fmt.Errorf("storage: lock %s: %w", name, err)
	}
	return func() {
		// Closing the descriptor releases the flock.
		f.Close()
		l.mu[i].Unlock()
	}, nil
}

// flockCtx takes an exclusive flock, polling with LOCK_NB rather than
// blocking so a wedged peer process cannot hang us past ctx.
func flockCtx(ctx context.Context, f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	delay := 50 * time.Microsecond
	for {
		var ferr error
		if err := rc.Control(func(fd uintptr) {
			ferr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
		}); err != nil {
			return err
		}
		if ferr == nil {
			return nil
		}
		if !errors.Is(ferr, unix.EWOULDBLOCK) && !errors.Is(ferr, unix.EINTR) {
			return ferr
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 5*time.Millisecond)
	}
}
