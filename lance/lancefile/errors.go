package lancefile

import "errors"

var (
	// ErrCorrupt marks input that violates the file format: bad magic,
	// offsets outside the file, inconsistent counts.
	ErrCorrupt = errors.New("corrupt lance file")
	// ErrUnsupported marks valid input this reader does not implement yet
	// (an encoding, a type, a format version).
	ErrUnsupported = errors.New("unsupported lance file feature")
)
